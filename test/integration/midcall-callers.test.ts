/**
 * Nothing an upstream asks mid-call ever reaches a caller other than the one whose call it is.
 * Two callers (a 2025-era and a 2026-07-28 client) call at the same time through the built
 * `mcpx` over HTTP, on one `shared` upstream session: server-everything over streamable HTTP
 * (its elicitation rides our request's stream, so it is attributed to that call), the modern
 * fixture (input_required, answered per call), and server-everything over stdio, where a request
 * cannot be told apart while two calls run: refused, never guessed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import getPort from "get-port";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool, connectHttp, type Asked } from "../helpers/asking.js";
import {
  eventually,
  fixtureServer,
  npmServer,
  ROOT,
  startHttp,
  startHttpFixture,
  stop,
  text,
  untilStarted,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

let everythingHttp: ChildProcess;
let modernHttp: { url: string; child: ChildProcess };
let mcpx: RunningHttp;

/** server-everything's streamable HTTP transport on a free port; resolves with its URL. */
async function startEverythingHttp(): Promise<string> {
  const port = await getPort();
  everythingHttp = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
      "streamableHttp",
    ],
    { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let err = "";
    everythingHttp.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("listening on port")) resolve();
    });
    everythingHttp.once("exit", (code) => reject(new Error(`server-everything exited ${code}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

beforeAll(async () => {
  const [everythingUrl, modern] = await Promise.all([
    startEverythingHttp(),
    startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs"),
  ]);
  modernHttp = modern;
  const file = writeConfig({
    mcpServers: {
      everything_http: { url: everythingUrl, session: "shared" },
      everything_stdio: {
        ...npmServer("@modelcontextprotocol/server-everything"),
        session: "shared",
      },
      modern_http: { url: modernHttp.url, session: "shared" },
      modern_stdio: { ...fixtureServer("modern.mjs"), session: "shared" },
    },
    compression: { results: "off" },
  });
  mcpx = await startHttp(file);
}, 60_000);

afterAll(async () => {
  await mcpx?.close();
  await Promise.all([everythingHttp && stop(everythingHttp), modernHttp && stop(modernHttp.child)]);
});

interface Caller {
  name: string;
  client: RunningHttp["client"];
  asked: Asked[];
}

/**
 * Alice (2025 era) and Bob (2026-07-28), each answering with its own name. An elicitation is
 * held until `release` resolves, so both calls are in flight when the first answer goes back.
 */
async function twoCallers(release: Promise<void>): Promise<[Caller, Caller]> {
  const make = async (era: "legacy" | "modern", name: string): Promise<Caller> => {
    const { client, asked } = askingClient(era, name, {
      elicit: async (params) => {
        await release;
        return String(params.message).startsWith("Please provide inputs")
          ? { action: "accept", content: { name, check: true } }
          : { action: "accept", content: { answer: name } };
      },
    });
    await connectHttp(client, mcpx.url);
    await untilStarted(client);
    return { name, client, asked };
  };
  const callers = await Promise.all([make("legacy", "alice"), make("modern", "bob")]);
  return callers;
}

const elicitations = (c: Caller) => c.asked.filter((a) => a.method === "elicitation/create");

describe("two callers with concurrent calls on one shared session", () => {
  it.each([
    ["everything_http", "trigger-elicitation-request", {}, (n: string) => `Name: ${n}`],
    ["modern_http", "ask", { kind: "elicit" }, (n: string) => `"answer":"${n}"`],
    ["modern_stdio", "ask", { kind: "elicit" }, (n: string) => `"answer":"${n}"`],
  ] as const)(
    "%s: each call's question goes to its own caller, and its answer to its own call",
    async (server, tool, args, expected) => {
      let open!: () => void;
      const release = new Promise<void>((resolve) => (open = resolve));
      const [alice, bob] = await twoCallers(release);
      try {
        const calls = [alice, bob].map((c) => callTool(c.client, `${server}.${tool}`, args));
        // Both questions asked (each of its own caller) before either is answered.
        await eventually(
          () => elicitations(alice).length === 1 && elicitations(bob).length === 1,
          20_000,
          "both callers to be asked",
        );
        open();
        const [forAlice, forBob] = await Promise.all(calls);
        expect(text(forAlice)).toContain(expected("alice"));
        expect(text(forAlice)).not.toContain("bob");
        expect(text(forBob)).toContain(expected("bob"));
        expect(text(forBob)).not.toContain("alice");
        expect(elicitations(alice)).toHaveLength(1);
        expect(elicitations(bob)).toHaveLength(1);
      } finally {
        open();
        await Promise.all([alice.client.close(), bob.client.close()]);
      }
    },
  );

  it("everything_stdio: a question that cannot be attributed is refused, never sent to the other caller", async () => {
    let open!: () => void;
    const release = new Promise<void>((resolve) => (open = resolve));
    const [alice, bob] = await twoCallers(release);
    try {
      const forAlice = callTool(alice.client, "everything_stdio.trigger-elicitation-request");
      // Alice's question arrived while hers was the only call: it is hers, held unanswered.
      await eventually(() => elicitations(alice).length === 1, 20_000, "alice to be asked");
      const forBob = await callTool(bob.client, "everything_stdio.trigger-elicitation-request");
      expect(forBob.isError).toBe(true);
      expect(text(forBob)).toContain("mcpx cannot tell which of the 2 calls");
      expect(text(forBob)).toContain('"session": "caller"');
      open();
      expect(text(await forAlice)).toContain("Name: alice");
      expect(elicitations(alice)).toHaveLength(1);
      expect(elicitations(bob)).toHaveLength(0);
    } finally {
      open();
      await Promise.all([alice.client.close(), bob.client.close()]);
    }
  });
});
