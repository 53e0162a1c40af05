/**
 * Scale-out behind a real load balancer: two mcpx processes with one config (one sessionSecret)
 * behind nginx running examples/nginx/mcpx.conf — plain round-robin, no affinity. A 2026-07-28
 * client, a 2025 client (SDK v2 default mode) and an SDK 1.x client each open, list, describe,
 * call with progress and get list_changed on their stream, as two callers whose profiles differ.
 * Each client sends one request at a time, and nginx names the replica that answered
 * (X-Replica): consecutive requests must come from different replicas.
 *
 * Needs nginx (`apt-get install nginx`); skipped without it, except with MCPX_REQUIRE_NGINX=1
 * (.ci/run sets it), where a missing nginx fails.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findNginx,
  serialFetch,
  startNginx,
  type RunningNginx,
  type Served,
} from "../helpers/nginx.js";
import {
  cacheEnv,
  fixtureServer,
  MCPX,
  newClient,
  onToolsChanged,
  stop,
  text,
  writeConfig,
} from "../helpers/proxy.js";
import { eventually } from "../helpers/eventually.js";

const NGINX = findNginx();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";

const SERVERS = {
  // A small result budget, so a long echo is cut and answered with a result handle.
  modern: { ...fixtureServer("modern.mjs"), resultBudget: 300 },
  faulty: fixtureServer("faulty.mjs"),
};
/** alice sees the modern fixture, bob the faulty one; `wider` lets alice see both. */
function config(wider = false) {
  return {
    sessionSecret: "nginx-test-secret-0123456789abcdef0123456789abcdef",
    mcpServers: SERVERS,
    profiles: {
      default: { servers: [] },
      alice: { servers: wider ? ["modern", "faulty"] : ["modern"] },
      bob: { servers: ["faulty"] },
    },
    callers: { alice: "alice", bob: "bob" },
  };
}

interface Replica {
  port: number;
  child: ChildProcess;
}

/** `mcpx <file> --port 0`, resolved once it listens and its upstreams are ready. */
async function startReplica(file: string): Promise<Replica> {
  const child = spawn(process.execPath, [MCPX, file, "--port", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...cacheEnv() },
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      const m = /mcpx listening on (\S+)/.exec(stderr);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${stderr}`)));
  });
  let health: unknown;
  const ready = async () => {
    health = await fetch(new URL("/healthz", url)).then((r) => r.json());
    return (health as { status: string }).status === "ok";
  };
  await eventually(ready, 30_000, "the replica to be ready").catch(() => {
    throw new Error(`replica never ready: ${JSON.stringify(health)}`);
  });
  return { port: Number(new URL(url).port), child };
}

/** What the suite does with a client, whatever its SDK and era. */
interface Driver {
  tools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, onProgress?: () => void): Promise<string>;
  /** Start listening for tools/list_changed; resolves once the stream is open. */
  listen(onChanged: () => void, served: Served[]): Promise<void>;
  close(): Promise<void>;
}

type Kind = "modern" | "legacy" | "sdk1";
const KINDS: Kind[] = ["modern", "legacy", "sdk1"];

/** An open GET stream of this client (2025 clients): list_changed comes on it. */
async function untilGetStream(served: Served[]) {
  await eventually(
    () => served.some((s) => s.http === "GET" && s.status === 200),
    10_000,
    "the client to open its GET stream",
  );
}

async function connect(kind: Kind, url: URL, lb: ReturnType<typeof serialFetch>): Promise<Driver> {
  if (kind === "sdk1") {
    const client = new Sdk1Client({ name: "sdk1-client", version: "1.0.0" });
    await client.connect(new Sdk1Transport(url, { fetch: lb.fetch }));
    return {
      tools: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name, args, onProgress) =>
        text(
          await client.callTool({ name, arguments: args }, CallToolResultSchema, {
            ...(onProgress && { onprogress: onProgress }),
          }),
        ),
      listen: async (onChanged, served) => {
        client.setNotificationHandler(ToolListChangedNotificationSchema, onChanged);
        await untilGetStream(served);
      },
      close: () => client.close(),
    };
  }
  const client = newClient(kind, `${kind}-client`);
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: lb.fetch }));
  return {
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args, onProgress) =>
      text(
        await client.callTool(
          { name, arguments: args },
          { ...(onProgress && { onprogress: onProgress }) },
        ),
      ),
    listen: async (onChanged, served) => {
      await onToolsChanged(client, onChanged);
      if (kind === "legacy") await untilGetStream(served);
    },
    close: () => client.close(),
  };
}

/** Every request answered by the other replica than the one before it, and both used. */
function expectAlternating(served: Served[]) {
  const trace = served.map((s) => `${s.replica} ${s.http} ${s.rpc} → ${s.status}`).join("\n");
  for (let i = 1; i < served.length; i++) {
    if (served[i]!.replica === served[i - 1]!.replica) {
      throw new Error(`requests ${i - 1} and ${i} went to the same replica:\n${trace}`);
    }
  }
  expect(new Set(served.map((s) => s.replica)).size, trace).toBe(2);
  expect(
    served.every((s) => s.status < 400),
    trace,
  ).toBe(true);
}

if (!NGINX && !REQUIRED) {
  console.warn("nginx.test.ts: SKIPPED, nginx is not installed (apt-get install nginx)");
}

const title = NGINX
  ? "two mcpx replicas behind nginx (round-robin)"
  : "two mcpx replicas behind nginx (SKIPPED: nginx is not installed; apt-get install nginx)";

describe.skipIf(!NGINX && !REQUIRED)(title, () => {
  let file: string;
  let replicas: Replica[] = [];
  let nginx: RunningNginx | undefined;

  beforeAll(async () => {
    if (!NGINX) throw new Error("MCPX_REQUIRE_NGINX=1 but nginx is not installed");
    file = writeConfig(config());
    replicas = await Promise.all([startReplica(file), startReplica(file)]);
    nginx = await startNginx(NGINX, [replicas[0]!.port, replicas[1]!.port]);
  }, 60_000);

  afterAll(async () => {
    await nginx?.close();
    await Promise.all(replicas.map((r) => stop(r.child)));
  });

  const url = (caller: string) => new URL(`${nginx!.base}/mcp/${caller}`);

  describe.each(KINDS)("a %s client", (kind) => {
    it("opens, lists, describes and calls with progress, each request on the other replica", async () => {
      const lb = serialFetch();
      const alice = await connect(kind, url("alice"), lb);
      try {
        expect(await alice.tools()).toEqual(expect.arrayContaining(["describe", "call"]));
        for (let i = 0; i < 2; i++) {
          // The same caller → profile answer from both replicas.
          const described = await alice.call("describe", {});
          expect(described).toContain("modern");
          expect(described).not.toContain("faulty");
          let progress = 0;
          const slow = await alice.call(
            "call",
            { method: "modern.slow", arguments: { ms: 100 } },
            () => (progress += 1),
          );
          expect(slow).toBe("done");
          expect(progress).toBeGreaterThan(0);
          const echo = await alice.call("call", {
            method: "modern.echo",
            arguments: { message: `m${i}` },
          });
          expect(echo).toBe(`m${i} (modern)`);
        }
        expectAlternating(lb.served);
        const calls = lb.served.filter((s) => s.rpc === "tools/call");
        expect(new Set(calls.map((c) => c.replica)).size).toBe(2);
      } finally {
        await alice.close();
      }
    });

    it("reads a cut result's handle only on the replica that made it", async () => {
      const lb = serialFetch();
      const alice = await connect(kind, url("alice"), lb);
      try {
        const cut = await alice.call("call", {
          method: "modern.echo",
          arguments: { message: "word ".repeat(1000) },
        });
        const uri = /mcpx:\/\/results\/[\w-]+/.exec(cut)?.[0];
        expect(uri, cut).toBeDefined();
        const made = lb.served.at(-1)!.replica;
        const pages = [];
        for (let i = 0; i < 2; i++) {
          const page = await alice.call("resources", { uri, offset: 0 });
          pages.push({ replica: lb.served.at(-1)!.replica, page });
        }
        for (const { replica, page } of pages) {
          if (replica === made) expect(page).toContain("word word");
          else expect(page).toMatch(/^No result mcpx:\/\/results\//);
        }
        expectAlternating(lb.served);
      } finally {
        await alice.close();
      }
    });

    it("gives each caller its own profile on both replicas", async () => {
      const lb = serialFetch();
      const bob = await connect(kind, url("bob"), lb);
      try {
        for (let i = 0; i < 2; i++) {
          const described = await bob.call("describe", {});
          expect(described).toContain("faulty");
          expect(described).not.toContain("modern");
          expect(
            await bob.call("call", { method: "faulty.echo", arguments: { message: "b" } }),
          ).toBe("b");
          // Outside bob's profile: answered like a server that does not exist.
          const hidden = await bob.call("call", {
            method: "modern.echo",
            arguments: { message: "x" },
          });
          expect(hidden).toMatch(/unknown|not found|no server/i);
        }
        expectAlternating(lb.served);
      } finally {
        await bob.close();
      }
    });

    it("gets list_changed on its stream when the shared config changes", async () => {
      const lb = serialFetch();
      const alice = await connect(kind, url("alice"), lb);
      let changed = 0;
      try {
        await alice.listen(() => (changed += 1), lb.served);
        writeFileSync(file, JSON.stringify(config(true)));
        const deadline = Date.now() + 20_000;
        await eventually(() => changed > 0, 20_000, "tools/list_changed");
        // Both replicas reload the file; each must show alice the wider profile.
        const wider = new Set<string>();
        while (wider.size < 2) {
          if (Date.now() > deadline) throw new Error("the replicas never both reloaded");
          const described = await alice.call("describe", {});
          if (described.includes("faulty")) wider.add(lb.served.at(-1)!.replica);
        }
        expectAlternating(lb.served);
      } finally {
        writeFileSync(file, JSON.stringify(config()));
        await alice.close();
      }
      await untilBothShow(kind, (d) => !d.includes("faulty"));
    });
  });

  /** Wait until both replicas describe alice's profile as `ok` says (after a config restore). */
  async function untilBothShow(kind: Kind, ok: (described: string) => boolean) {
    const lb = serialFetch();
    const alice = await connect(kind, url("alice"), lb);
    const seen = new Set<string>();
    const deadline = Date.now() + 20_000;
    try {
      while (seen.size < 2) {
        if (Date.now() > deadline) throw new Error("the replicas never both reloaded");
        if (ok(await alice.call("describe", {}))) seen.add(lb.served.at(-1)!.replica);
      }
    } finally {
      await alice.close();
    }
  }
});
