/**
 * Which call an upstream's mid-call request belongs to (SessionAsker), what a client's declared
 * capabilities allow, and the call clock that stops while the client is asked. Channels here are
 * plain objects: the asker sees only the ClientChannel interface.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RelayHub, SessionAsker, type UpstreamHabits } from "../../src/upstream/asker.js";
import {
  abilitiesOf,
  capabilitiesOf,
  NO_CLIENT,
  RelayError,
  type ClientAbilities,
  type ClientChannel,
} from "../../src/upstream/channel.js";
import { IdleDeadline } from "../../src/upstream/deadline.js";
import { countSignals } from "../helpers/signals.js";
import { quietLogger } from "../helpers/inmemory.js";

const ALL: ClientAbilities = { roots: true, elicitForm: true, elicitUrl: true, sampling: true };
const NONE: ClientAbilities = {
  roots: false,
  elicitForm: false,
  elicitUrl: false,
  sampling: false,
};

/** A channel that answers with its caller's name and counts what it was asked. */
function channel(caller: string, abilities = ALL): ClientChannel & { asked: string[] } {
  const asked: string[] = [];
  return {
    caller,
    clientId: `client-${caller}`,
    abilities,
    confined: false,
    asked,
    roots: () => {
      asked.push("roots");
      return Promise.resolve({ roots: [{ uri: `file:///${caller}` }] });
    },
    elicit: () => {
      asked.push("elicit");
      return Promise.resolve({ action: "accept", content: { who: caller } });
    },
    sample: () => {
      asked.push("sample");
      return Promise.resolve({ role: "assistant", content: { type: "text", text: caller } });
    },
  };
}

function asker(
  options: { clientRoots?: boolean; relatedContext?: boolean; lines?: string[] } = {},
) {
  const habits: UpstreamHabits = { readsRoots: false };
  return new SessionAsker({
    server: "up",
    habits,
    roots: [{ uri: "file:///configured" }],
    clientRoots: options.clientRoots ?? true,
    relatedContext: options.relatedContext ?? false,
    logger: quietLogger(options.lines),
  });
}

const WAIT = { timeoutMs: 1_000 };

describe("SessionAsker", () => {
  it("relays to the only call running, and logs caller, server and kind (not contents)", async () => {
    const lines: string[] = [];
    const a = asker({ lines });
    const alice = channel("alice");
    const answer = await a.during(alice, WAIT, () => a.answer("elicitation", { message: "ok?" }));
    expect(answer).toEqual({ action: "accept", content: { who: "alice" } });
    expect(lines.join("\n")).toContain(
      'relay elicitation from up to alice: relayed {"caller":"alice","server":"up","kind":"elicitation","outcome":"relayed"}',
    );
    expect(lines.join("\n")).not.toContain("ok?");
  });

  it("outside a call: the configured roots, and elicitation or sampling refused", async () => {
    const a = asker();
    expect(await a.answer("roots", undefined)).toEqual({ roots: [{ uri: "file:///configured" }] });
    await expect(a.answer("sampling", {})).rejects.toThrow(/no call running on this session/);
  });

  it("refuses, naming why, when several calls run and nothing relates the request to one", async () => {
    const a = asker();
    const alice = channel("alice");
    const bob = channel("bob");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const aliceCall = a.during(alice, WAIT, () => held);
    const refused = a.during(bob, WAIT, () => a.answer("elicitation", {}));
    await expect(refused).rejects.toBeInstanceOf(RelayError);
    await expect(refused).rejects.toThrow(
      /cannot tell which of the 2 calls running on this shared session \(callers: alice, bob\)/,
    );
    expect([...alice.asked, ...bob.asked]).toEqual([]);
    release();
    await aliceCall;
  });

  it("never gives a call what arrives while a request without a client (a read) runs beside it", async () => {
    const a = asker();
    const alice = channel("alice");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const read = a.during(NO_CLIENT, WAIT, () => held);
    await expect(a.during(alice, WAIT, () => a.answer("elicitation", {}))).rejects.toThrow(
      /cannot tell which of the 2 calls/,
    );
    release();
    await read;
    // Alone, such a request has no one to ask.
    await expect(a.during(NO_CLIENT, WAIT, () => a.answer("elicitation", {}))).rejects.toThrow(
      /no call running/,
    );
    expect(alice.asked).toEqual([]);
  });

  it("attributes a request that arrives in a call's own context (streamable HTTP), whatever else runs", async () => {
    const a = asker({ relatedContext: true });
    const alice = channel("alice");
    const bob = channel("bob");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const aliceCall = a.during(alice, WAIT, () => held);
    const forBob = await a.during(bob, WAIT, () => a.answer("sampling", {}));
    expect(forBob).toMatchObject({ content: { text: "bob" } });
    expect(alice.asked).toEqual([]);
    release();
    await aliceCall;
  });

  it("refuses at once what the client did not declare: -32601, or -32602 for a mode it lacks", async () => {
    const a = asker();
    const formOnly = channel("form", { ...NONE, elicitForm: true });
    const error = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err as RelayError,
      );
    const sampling = await error(a.during(formOnly, WAIT, () => a.answer("sampling", {})));
    expect(sampling?.code).toBe(-32601);
    const url = await error(
      a.during(formOnly, WAIT, () => a.answer("elicitation", { mode: "url" })),
    );
    expect(url?.code).toBe(-32602);
    expect(url?.message).toContain("does not support URL-mode elicitation");
    expect(formOnly.asked).toEqual([]);
  });

  it("gives a shared session the configured roots, never the client's", async () => {
    const a = asker({ clientRoots: false });
    const alice = channel("alice");
    const roots = await a.during(alice, WAIT, () => a.answer("roots", undefined));
    expect(roots).toEqual({ roots: [{ uri: "file:///configured" }] });
    expect(alice.asked).toEqual([]);
  });

  it("asks the client for roots once per call", async () => {
    const a = asker();
    const alice = channel("alice");
    await a.during(alice, WAIT, async () => {
      expect(await a.answer("roots", undefined)).toEqual({ roots: [{ uri: "file:///alice" }] });
      expect(await a.answer("roots", undefined)).toEqual({ roots: [{ uri: "file:///alice" }] });
    });
    expect(alice.asked).toEqual(["roots"]);
  });

  it("tells an upstream that read other roots that they changed, and waits for it to ask", async () => {
    const a = asker();
    await a.answer("roots", undefined); // read at initialize: the configured ones
    const alice = channel("alice");
    const told: string[] = [];
    await a.during(alice, WAIT, () =>
      a.alignRoots(
        alice,
        () => {
          told.push("list_changed");
          // The upstream asks again, as server-filesystem does, and mcpx answers.
          setImmediate(() => void a.answer("roots", undefined));
          return Promise.resolve();
        },
        () => {
          told.push("settled");
          return Promise.resolve();
        },
      ),
    );
    expect(told).toEqual(["list_changed", "settled"]);
    // The same client's next call: the upstream already has its roots.
    const again: string[] = [];
    await a.during(alice, WAIT, () =>
      a.alignRoots(
        alice,
        () => Promise.resolve(void again.push("list_changed")),
        () => Promise.resolve(),
      ),
    );
    expect(again).toEqual([]);
  });
});

describe("RelayHub", () => {
  it("tells only the sessions running a call of the client whose roots changed", async () => {
    const hub = new RelayHub();
    const [one, two] = [asker(), asker()];
    const told: string[] = [];
    hub.add(one, () => Promise.resolve(void told.push("one")));
    const removeTwo = hub.add(two, () => Promise.resolve(void told.push("two")));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const running = one.during(channel("alice"), WAIT, () => held);
    expect(hub.rootsChanged("client-bob")).toBe(0);
    expect(hub.rootsChanged("client-alice")).toBe(1);
    expect(told).toEqual(["one"]);
    removeTwo();
    release();
    await running;
  });
});

describe("abilitiesOf", () => {
  it("reads what a client declared; an empty elicitation means form mode only", () => {
    expect(abilitiesOf({ elicitation: {} })).toEqual({ ...NONE, elicitForm: true });
    expect(abilitiesOf({ elicitation: { url: {} }, roots: {}, sampling: {} })).toEqual({
      roots: true,
      elicitForm: false,
      elicitUrl: true,
      sampling: true,
    });
    expect(abilitiesOf(undefined)).toEqual(NONE);
    expect(capabilitiesOf({ ...NONE, elicitForm: true })).toEqual({
      elicitation: { form: {} },
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
    });
  });
});

describe("IdleDeadline", () => {
  afterEach(() => vi.useRealTimers());

  it("restarts on progress and stops while the client is asked", async () => {
    vi.useFakeTimers();
    const deadline = new IdleDeadline(1_000, () => new Error("timed out"));
    vi.advanceTimersByTime(900);
    deadline.touch();
    vi.advanceTimersByTime(900);
    expect(deadline.signal.aborted).toBe(false);
    let answer!: () => void;
    const asking = deadline.hold(new Promise<void>((resolve) => (answer = resolve)));
    vi.advanceTimersByTime(60_000); // a person reading the question
    expect(deadline.signal.aborted).toBe(false);
    answer();
    await asking;
    vi.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe("timed out");
    deadline.dispose();
  });
  it("follows the call's own signal: aborts with its reason, and no longer once disposed", () => {
    vi.useFakeTimers();
    const call = new AbortController();
    const deadline = new IdleDeadline(1_000, () => new Error("timed out"), call.signal);
    call.abort(new Error("client cancelled"));
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe("client cancelled");
    // The timer went with it: the reason stays the client's.
    vi.advanceTimersByTime(5_000);
    expect((deadline.signal.reason as Error).message).toBe("client cancelled");
    deadline.dispose();

    const gone = new AbortController();
    gone.abort("before");
    expect(new IdleDeadline(1_000, () => "late", gone.signal).signal.reason).toBe("before");

    const later = new AbortController();
    const ended = new IdleDeadline(1_000, () => "late", later.signal);
    ended.dispose();
    later.abort("after the call");
    expect(ended.signal.aborted).toBe(false);
  });
  it("is watched without an AbortSignal: listeners run once, removed ones never, late ones never", () => {
    vi.useFakeTimers();
    const made = countSignals();
    try {
      const call = new AbortController();
      void call.signal; // the call's own, made before counting
      const before = made.count();
      const deadline = new IdleDeadline(1_000, () => "timed out", call.signal);
      const heard: string[] = [];
      const kept = () => heard.push("kept");
      const removed = () => heard.push("removed");
      deadline.addEventListener("abort", kept, { once: true });
      deadline.addEventListener("abort", removed);
      deadline.removeEventListener("abort", removed);
      vi.advanceTimersByTime(1_000);
      expect(deadline.aborted).toBe(true);
      expect(deadline.reason).toBe("timed out");
      expect(heard).toEqual(["kept"]);
      // No AbortSignal was made for any of it.
      expect(made.count()).toBe(before);
      deadline.addEventListener("abort", () => heard.push("late"));
      // One is made for whoever asks, already aborted with the reason.
      expect(deadline.signal.aborted).toBe(true);
      expect(deadline.signal.reason).toBe("timed out");
      expect(made.count()).toBe(before + 1);
      call.abort("after");
      expect(heard).toEqual(["kept"]);
      deadline.dispose();

      // One listener removing a later one: that one does not run, as on an AbortSignal.
      const pair = new IdleDeadline(1_000, () => "x");
      const ran: string[] = [];
      const second = () => ran.push("second");
      pair.addEventListener("abort", () => {
        ran.push("first");
        pair.removeEventListener("abort", second);
      });
      pair.addEventListener("abort", second);
      vi.advanceTimersByTime(1_000);
      expect(ran).toEqual(["first"]);
      pair.dispose();

      // A signal asked for first aborts with the deadline, before the watchers run.
      const early = new IdleDeadline(1_000, () => "slow");
      const signal = early.signal;
      const order: string[] = [];
      early.addEventListener("abort", () => order.push(`watch ${signal.aborted}`));
      vi.advanceTimersByTime(1_000);
      expect(signal.reason).toBe("slow");
      expect(order).toEqual(["watch true"]);
      early.dispose();
    } finally {
      made.restore();
    }
  });
});
