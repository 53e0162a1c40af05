/**
 * The look at which tools need a client capability (src/registry/capability-tools.ts), against
 * real server-everything over stdio: a look waits for the server's list to settle, looks once at
 * the newest list it was asked about, and is not made again on tools it has a finding for.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import {
  LOOK_SETTLE_MS,
  lookedAt,
  NeedsLooks,
  type KnownLook,
} from "../../src/registry/capability-tools.js";
import { createClientFactory } from "../../src/upstream/factory.js";
import type { ClientFactory } from "../../src/upstream/types.js";
import type { ToolDef } from "../../src/types.js";
import { FakeClock } from "../helpers/clock.js";
import { eventually } from "../helpers/eventually.js";
import { quietLogger } from "../helpers/inmemory.js";
import { npmServer } from "../helpers/proxy.js";

const looks: NeedsLooks[] = [];
afterEach(async () => {
  await Promise.all(looks.splice(0).map((l) => l.close()));
});

/** server-everything's client factory, counting the sessions it opens. */
function everything(): { open: ClientFactory; opened: () => number } {
  const config = parseConfig(
    { mcpServers: { everything: npmServer("@modelcontextprotocol/server-everything", "stdio") } },
    "/project/mcpx.json",
    {},
  );
  const factory = createClientFactory(config.servers[0]!, {
    logger: quietLogger(),
    connectTimeoutMs: 20_000,
  });
  let opened = 0;
  const open: ClientFactory = Object.assign(
    (...args: Parameters<ClientFactory>) => {
      opened += 1;
      return factory(...args);
    },
    { declares: factory.declares },
  );
  return { open, opened: () => opened };
}

const tool = (name: string): ToolDef => ({ name, inputSchema: { type: "object" } });

/** Looks on a fake clock (closed after the test), and server-everything's counted factory. */
function looksOn(lines: string[] = []) {
  const clock = new FakeClock();
  const needsLooks = new NeedsLooks(quietLogger(lines), clock);
  looks.push(needsLooks);
  return { clock, needsLooks, ...everything() };
}

/** Ask for a look at `tools` of the group "g". */
function ask(
  needsLooks: NeedsLooks,
  open: ClientFactory,
  tools: ToolDef[],
  done: (look: KnownLook) => void,
): void {
  needsLooks.request("g", "everything", open, tools, lookedAt(undefined, tools), 20_000, done);
}

describe("NeedsLooks", () => {
  it(
    "looks once, after the settle time, at the newest list; then not again on the same tools",
    { timeout: 60_000 },
    async () => {
      const lines: string[] = [];
      const { clock, needsLooks, open, opened } = looksOn(lines);
      const found: [string, KnownLook][] = [];
      const first = [tool("echo")];
      const settled = [tool("echo"), tool("trigger-sampling-request")];
      ask(needsLooks, open, first, (l) => found.push(["first", l]));
      await clock.advance(LOOK_SETTLE_MS / 2);
      // The list changed before the first look began: only the newest is looked at, and its
      // settle time starts afresh.
      ask(needsLooks, open, settled, (l) => found.push(["settled", l]));
      await clock.advance(LOOK_SETTLE_MS / 2 + 1);
      expect(opened()).toBe(0);
      await clock.advance(LOOK_SETTLE_MS / 2);
      await eventually(() => found.length === 1, 30_000, "the look");
      expect(found[0]![0]).toBe("settled");
      expect(found[0]![1]).toEqual({
        of: lookedAt(undefined, settled),
        needs: { "trigger-sampling-request": ["sampling"] },
      });
      // A bare session lacks the sampling tool: one session per capability followed.
      expect(opened()).toBe(4);
      expect(lines.join("\n")).toMatch(
        /everything: 1 tool needs client capabilities \(looked in \d+ ms, 4 sessions\)/,
      );

      // The same tools again (a list_changed that changed nothing, or the catalog cache's finding):
      // the finding is handed back with no session.
      ask(needsLooks, open, settled, (l) => found.push(["again", l]));
      await clock.advance(LOOK_SETTLE_MS);
      await eventually(() => found.length === 2, 5_000, "the known finding");
      expect(found[1]).toEqual(["again", found[0]![1]]);
      expect(opened()).toBe(4);
      expect(lines.join("\n")).toContain(
        "everything: 1 tool needs client capabilities (as looked before, on the same tools)",
      );
    },
  );

  it(
    "a finding remembered from the catalog cache stands for tools it was made on only",
    { timeout: 60_000 },
    async () => {
      const { clock, needsLooks, open, opened } = looksOn();
      const tools = [tool("echo"), tool("get-roots-list")];
      const cached: KnownLook = {
        of: lookedAt(undefined, tools),
        needs: { "get-roots-list": ["roots"] },
      };
      needsLooks.remember("g", cached);
      expect(needsLooks.knownFor("g", lookedAt(undefined, tools))).toBe(cached);
      expect(
        needsLooks.knownFor("g", lookedAt({ capabilities: {}, name: "x", version: "2" }, tools)),
      ).toBeUndefined();
      const found: KnownLook[] = [];
      needsLooks.request("g", "everything", open, tools, cached.of, 20_000, (l) => found.push(l));
      await clock.advance(LOOK_SETTLE_MS);
      await eventually(() => found.length === 1, 5_000, "the cached finding");
      expect(found[0]).toBe(cached);
      expect(opened()).toBe(0);
    },
  );

  it(
    "drops a finding on tools the group no longer lists, and looks at the ones it does",
    { timeout: 60_000 },
    async () => {
      const { clock, needsLooks, open, opened } = looksOn();
      const before = [tool("echo")];
      const after = [tool("echo"), tool("trigger-sampling-request")];
      const found: [string, KnownLook][] = [];
      ask(needsLooks, open, before, (l) => found.push(["before", l]));
      await clock.advance(LOOK_SETTLE_MS);
      await eventually(() => opened() > 0, 10_000, "the first look under way");
      // The list changes while the first look runs.
      ask(needsLooks, open, after, (l) => found.push(["after", l]));
      // The first look ends (one session: the bare one lists echo) and hands nothing back.
      await eventually(() => opened() === 1 && clock.pending === 1, 20_000, "the first look's end");
      expect(found).toEqual([]);
      expect(needsLooks.knownFor("g", lookedAt(undefined, before))).toBeUndefined();
      await clock.advance(LOOK_SETTLE_MS);
      await eventually(() => found.length === 1, 30_000, "the look at the new list");
      expect(found[0]![0]).toBe("after");
      expect(found[0]![1].needs).toEqual({ "trigger-sampling-request": ["sampling"] });
    },
  );

  it("a list announced again and again with the same tools is still looked at", async () => {
    const clock = new FakeClock();
    const needsLooks = new NeedsLooks(quietLogger(), clock);
    looks.push(needsLooks);
    const tools = [tool("echo")];
    const cached: KnownLook = { of: lookedAt(undefined, tools), needs: {} };
    needsLooks.remember("g", cached);
    const found: KnownLook[] = [];
    for (let i = 0; i < 5; i++) {
      needsLooks.request("g", "everything", everything().open, tools, cached.of, 20_000, (l) =>
        found.push(l),
      );
      await clock.advance(LOOK_SETTLE_MS / 2 - 1);
    }
    // 2 s after the first ask (each ask half a second apart): its turn came once, not never.
    expect(found).toEqual([cached]);
  });

  it("close() ends a look still waiting to settle: no session is opened", async () => {
    const clock = new FakeClock();
    const needsLooks = new NeedsLooks(quietLogger(), clock);
    const { open, opened } = everything();
    needsLooks.request("g", "everything", open, [tool("echo")], "x", 20_000, () => {
      throw new Error("no look after close");
    });
    await needsLooks.close();
    await clock.advance(LOOK_SETTLE_MS * 2);
    expect(opened()).toBe(0);
    expect(clock.pending).toBe(0);
  });
});
