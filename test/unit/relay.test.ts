/**
 * The catalog relay in one process: prompt names as data (`__` inside names, clashes), profiles'
 * prompts.allow/deny, URI clashes, resource subscriptions counted across clients and delivered
 * only where they belong, prompt and resource list_changed per view, and cursors any replica
 * takes. Real SDK servers upstream, real SDK clients downstream, over in-memory transports and
 * real HTTP.
 */
import {
  ProtocolError,
  StreamableHTTPClientTransport,
  type Client,
} from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { newClient, type Era } from "../helpers/clients.js";
import { connectClient, memoryConfig, memoryProxy, quietLogger } from "../helpers/inmemory.js";
import { eventually, startHttpFixture, stop, text } from "../helpers/proxy.js";

interface Upstream {
  make: () => McpServer;
  /** Every instance made (one per upstream session, as processes would be). */
  instances: McpServer[];
  /** The instance each URI was subscribed on. */
  subscribedOn: Map<string, McpServer>;
  subscribes: string[];
  unsubscribes: string[];
}

function upstream(
  name: string,
  items: { prompts?: string[]; resources?: string[]; subscribe?: boolean } = {},
): Upstream {
  const up: Upstream = {
    instances: [],
    subscribedOn: new Map(),
    subscribes: [],
    unsubscribes: [],
    make: () => {
      const server = new McpServer({ name, version: "1.0.0" });
      for (const prompt of items.prompts ?? []) {
        server.registerPrompt(prompt, { description: `${prompt} of ${name}.` }, () => ({
          messages: [{ role: "user", content: { type: "text", text: `${name}'s ${prompt}` } }],
        }));
      }
      for (const uri of items.resources ?? []) {
        server.registerResource(uri, uri, {}, () => ({
          contents: [{ uri, text: `${name}'s ${uri}` }],
        }));
      }
      if (items.subscribe) {
        server.server.registerCapabilities({ resources: { subscribe: true } });
        server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
          up.subscribes.push(request.params.uri);
          up.subscribedOn.set(request.params.uri, server);
          return {};
        });
        server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
          up.unsubscribes.push(request.params.uri);
          return {};
        });
      }
      up.instances.push(server);
      return server;
    },
  };
  return up;
}

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function start(
  upstreams: Record<string, Upstream>,
  access: Record<string, unknown> = {},
  lines: string[] = [],
): Promise<Proxy> {
  const proxy = memoryProxy(
    Object.fromEntries(Object.entries(upstreams).map(([n, u]) => [n, u.make])),
    { config: memoryConfig(Object.keys(upstreams), access), logger: quietLogger(lines) },
  );
  open.push(proxy);
  await proxy.start();
  return proxy;
}

async function client(proxy: Proxy, options: { caller?: string; era?: Era } = {}): Promise<Client> {
  const c = await connectClient(proxy, options);
  open.push(c);
  return c.client;
}

async function rejection(p: Promise<unknown>): Promise<ProtocolError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof ProtocolError) return err;
  throw new Error(`expected a JSON-RPC error, got ${String(err)}`);
}

describe("prompts: names as data, clashes, profiles", () => {
  it("finds a prompt whose name has __, keeps the first of two equal joined names and logs the clash once", async () => {
    const lines: string[] = [];
    // "a" + "b__c" and "a__b" + "c" both join to "a__b__c".
    const proxy = await start(
      { a: upstream("a", { prompts: ["b__c", "x"] }), a__b: upstream("a__b", { prompts: ["c"] }) },
      {},
      lines,
    );
    const c = await client(proxy);
    const names = (await c.listPrompts()).prompts.map((p) => p.name);
    expect(names).toEqual(["a__b__c", "a__x"]);
    const got = await c.getPrompt({ name: "a__b__c" });
    expect(got.messages[0]?.content).toEqual({ type: "text", text: "a's b__c" });
    await c.listPrompts();
    await c.callTool({ name: "describe", arguments: { method: "a__b" } });
    const clashes = lines.filter((l) => l.includes("prompt name a__b__c of a__b clashes with a's"));
    expect(clashes).toHaveLength(1);
  });

  it("prompts.allow/deny hide prompts from lists, describe and get, exactly like missing ones", async () => {
    const proxy = await start(
      {
        alpha: upstream("alpha", { prompts: ["public-one", "public-two", "secret"] }),
        beta: upstream("beta", { prompts: ["other"] }),
      },
      {
        profiles: {
          default: { servers: ["*"], prompts: { deny: ["alpha.secret"] } },
          narrow: {
            servers: ["*"],
            prompts: { allow: ["alpha.public-*"], deny: ["*.public-two"] },
          },
        },
        callers: { narrow: "narrow" },
      },
    );
    const plain = await client(proxy);
    expect((await plain.listPrompts()).prompts.map((p) => p.name)).toEqual([
      "alpha__public-one",
      "alpha__public-two",
      "beta__other",
    ]);
    const hidden = await rejection(plain.getPrompt({ name: "alpha__secret" }));
    const missing = await rejection(plain.getPrompt({ name: "alpha__nothing" }));
    expect(hidden.code).toBe(missing.code);
    expect(hidden.message.replace("secret", "X")).toBe(missing.message.replace("nothing", "X"));
    const described = text(
      await plain.callTool({ name: "describe", arguments: { method: "alpha" } }),
    );
    expect(described).toContain("alpha__public-one()");
    expect(described).not.toContain("secret");

    const narrow = await client(proxy, { caller: "narrow" });
    expect((await narrow.listPrompts()).prompts.map((p) => p.name)).toEqual(["alpha__public-one"]);
    expect(text(await narrow.callTool({ name: "describe", arguments: {} }))).toContain(
      "## alpha (0 tools, 1 prompts)",
    );
  });
});

describe("resources: one URI on two servers", () => {
  it("the first server keeps it in the native list and reads, the clash is logged once, the tool reaches both", async () => {
    const lines: string[] = [];
    const proxy = await start(
      {
        first: upstream("first", { resources: ["shared://doc", "first://own"] }),
        second: upstream("second", { resources: ["shared://doc"] }),
      },
      {},
      lines,
    );
    const c = await client(proxy);
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["shared://doc", "first://own"]);
    const read = await c.readResource({ uri: "shared://doc" });
    expect(read.contents[0]).toMatchObject({ text: "first's shared://doc" });
    await c.listResources();
    expect(
      lines.filter((l) => l.includes("resource shared://doc is listed by first and second")),
    ).toHaveLength(1);
    const viaTool = await c.callTool({
      name: "resources",
      arguments: { uri: "shared://doc", server: "second" },
    });
    expect(JSON.stringify(viaTool.content)).toContain("second's shared://doc");
  });
});

describe("resource subscriptions", () => {
  const uri = "alpha://doc";

  it.each(["legacy", "modern"] as const)(
    "a %s client's subscription is counted upstream across clients and released by the last",
    async (era) => {
      const later = "alpha://later";
      const alpha = upstream("alpha", { resources: [uri, later], subscribe: true });
      const proxy = await start({ alpha });
      const subscribe = async (c: Client, to: string) =>
        era === "legacy"
          ? (await c.subscribeResource({ uri: to }), () => c.unsubscribeResource({ uri: to }))
          : await c.listen({ resourceSubscriptions: [to] }).then((s) => () => s.close());
      const one = await client(proxy, { era });
      const two = await client(proxy, { era });
      const endOne = await subscribe(one, uri);
      const endTwo = await subscribe(two, uri);
      // Taken before the answer (legacy) or the acknowledgement (modern): no waiting.
      expect(alpha.subscribes).toEqual([uri]);
      await endOne();
      // Another subscription on the same upstream session: an unsubscribe sent at endOne
      // would have been handled before it.
      const endLater = await subscribe(one, later);
      expect(alpha.subscribes).toEqual([uri, later]);
      expect(alpha.unsubscribes).toEqual([]);
      await endTwo();
      await endLater();
      await eventually(() => alpha.unsubscribes.length === 2, 5_000, "the upstream unsubscribes");
      expect(alpha.unsubscribes.sort()).toEqual([uri, later].sort());
    },
  );

  it("an update reaches exactly the clients subscribed to that URI whose view holds the server", async () => {
    const other = "alpha://other";
    const alpha = upstream("alpha", { resources: [uri, other], subscribe: true });
    const proxy = await start(
      { alpha, beta: upstream("beta", { resources: ["beta://doc"] }) },
      {
        profiles: { default: { servers: ["*"] }, betaOnly: { servers: ["beta"] } },
        callers: { outsider: "betaOnly" },
      },
    );
    const got: Record<string, string[]> = { legacy: [], modern: [], bystander: [] };
    const watch = (c: Client, key: string) =>
      c.setNotificationHandler("notifications/resources/updated", (n) => {
        got[key]!.push(n.params.uri);
      });
    const legacy = await client(proxy, { era: "legacy" });
    const modern = await client(proxy, { era: "modern" });
    const bystander = await client(proxy, { era: "legacy" });
    watch(legacy, "legacy");
    watch(modern, "modern");
    watch(bystander, "bystander");
    await legacy.subscribeResource({ uri });
    await modern.listen({ resourceSubscriptions: [uri] });
    await bystander.subscribeResource({ uri: other });

    // A caller whose view lacks alpha cannot subscribe to its resources.
    const outsider = await client(proxy, { caller: "outsider", era: "legacy" });
    expect((await rejection(outsider.subscribeResource({ uri }))).code).toBe(-32602);

    await alpha.subscribedOn.get(uri)!.server.sendResourceUpdated({ uri });
    await eventually(() => got.legacy!.length > 0 && got.modern!.length > 0, 5_000, "updates");
    // Then one the bystander holds: on its connection it comes after anything sent before.
    await alpha.subscribedOn.get(other)!.server.sendResourceUpdated({ uri: other });
    await eventually(() => got.bystander!.length > 0, 5_000, "the bystander's update");
    expect(got).toEqual({ legacy: [uri], modern: [uri], bystander: [other] });
  });

  it("a resource of a server without subscriptions cannot be subscribed to", async () => {
    const proxy = await start({ plain: upstream("plain", { resources: [uri] }) });
    const c = await client(proxy, { era: "legacy" });
    const err = await rejection(c.subscribeResource({ uri }));
    expect(err.message).toContain("does not offer resource subscriptions");
  });
});

describe("a modern upstream's resource subscriptions", () => {
  it("ride its listen stream: subscribed with the URI, updates forwarded, re-opened without it", async () => {
    const fixture = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
    open.push({ close: () => stop(fixture.child) });
    const rpcs = async () =>
      ((await (await fetch(`${fixture.base}/control/requests`)).json()) as { rpc: string }[]).map(
        (r) => r.rpc,
      );
    const config = parseConfig(
      { mcpServers: { modern: { type: "http", url: fixture.url } } },
      "/t/mcpx.json",
      {},
    );
    const proxy = createProxy(config, { logger: quietLogger() });
    open.push(proxy);
    await proxy.start();
    const c = await client(proxy, { era: "legacy" });
    const updates: string[] = [];
    c.setNotificationHandler("notifications/resources/updated", (n) => {
      updates.push(n.params.uri);
    });
    const listens = async () => (await rpcs()).filter((r) => r === "subscriptions/listen").length;
    const before = await listens();
    // Answered once a listen stream with the URI in its filter is acknowledged upstream.
    await c.subscribeResource({ uri: "modern://readme" });
    expect(await listens()).toBeGreaterThan(before);
    const touched = await c.callTool({
      name: "call",
      arguments: { method: "modern.touch", arguments: { uri: "modern://readme" } },
    });
    expect(text(touched)).toBe("touched modern://readme");
    await eventually(() => updates.length > 0, 5_000, "the update");
    expect(updates).toEqual(["modern://readme"]);
    // 2026-07-28 has no resources/subscribe: the stream is the subscription.
    expect(await rpcs()).not.toContain("resources/subscribe");
    const withUri = await listens();
    await c.unsubscribeResource({ uri: "modern://readme" });
    await eventually(
      async () => (await listens()) > withUri,
      5_000,
      "a listen stream without the URI",
    );
  });
});

describe("prompt and resource list_changed", () => {
  it.each(["in memory", "over HTTP"] as const)(
    "reach only the clients whose view changed (%s)",
    async (transport) => {
      const alpha = upstream("alpha", { prompts: ["a"], resources: ["alpha://1"] });
      const beta = upstream("beta", { prompts: ["b"] });
      const proxy = await start(
        { alpha, beta },
        {
          profiles: { default: { servers: ["*"] }, alphaOnly: { servers: ["alpha"] } },
          callers: { narrow: "alphaOnly" },
        },
      );
      const events: Record<string, string[]> = { wide: [], narrow: [] };
      const watch = async (c: Client, key: string) => {
        c.setNotificationHandler("notifications/prompts/list_changed", () => {
          events[key]!.push("prompts");
        });
        c.setNotificationHandler("notifications/resources/list_changed", () => {
          events[key]!.push("resources");
        });
        if (c.getProtocolEra() === "modern")
          await c.listen({ promptsListChanged: true, resourcesListChanged: true });
      };
      let wide: Client;
      let narrow: Client;
      if (transport === "in memory") {
        wide = await client(proxy, { era: "modern" });
        narrow = await client(proxy, { caller: "narrow", era: "legacy" });
      } else {
        // 2026-07-28 listeners of two profiles: one SDK handler (and bus) per profile.
        const http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
        open.push(http);
        const connect = async (url: string) => {
          const c = newClient("modern");
          await c.connect(new StreamableHTTPClientTransport(new URL(url)));
          open.push(c);
          return c;
        };
        wide = await connect(http.url);
        narrow = await connect(`${http.url}/narrow`);
      }
      await watch(wide, "wide");
      await watch(narrow, "narrow");
      await wide.listPrompts();
      await narrow.listPrompts();

      // beta's prompts change: only the wide view holds beta.
      beta.instances.at(-1)!.registerPrompt("b2", { description: "new" }, () => ({ messages: [] }));
      await eventually(
        () => events.wide!.includes("prompts"),
        5_000,
        "wide's prompts list_changed",
      );
      // Then alpha's resources: both views hold alpha. On each stream it comes last.
      alpha.instances.at(-1)!.registerResource("r2", "alpha://2", {}, () => ({ contents: [] }));
      await eventually(
        () => events.wide!.includes("resources") && events.narrow!.includes("resources"),
        5_000,
        "resources list_changed",
      );
      expect(events).toEqual({ wide: ["prompts", "resources"], narrow: ["resources"] });
    },
  );
});

describe("cursors", () => {
  it("a page cursor from one replica is taken by another; a forged or foreign one is refused", async () => {
    const resources = Array.from({ length: 5 }, (_, i) => `item://${i}`);
    const access = {
      pageSize: 2,
      profiles: { default: { servers: ["*"] }, other: { servers: ["*"] } },
      callers: { other: "other" },
    };
    const replicas: HttpHandle[] = [];
    for (let i = 0; i < 2; i++) {
      const proxy = await start({ items: upstream("items", { resources }) }, access);
      const http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
      open.push(http);
      replicas.push(http);
    }
    const connect = async (url: string) => {
      const c = newClient("modern");
      await c.connect(new StreamableHTTPClientTransport(new URL(url)));
      open.push(c);
      return c;
    };
    const [a, b] = [await connect(replicas[0]!.url), await connect(replicas[1]!.url)];
    const page = (c: Client, cursor?: string) =>
      c.request({ method: "resources/list", params: cursor === undefined ? {} : { cursor } });
    const first = await page(a);
    const second = await page(b, first.nextCursor);
    const third = await page(a, second.nextCursor);
    expect([...first.resources, ...second.resources, ...third.resources].map((r) => r.uri)).toEqual(
      resources,
    );
    expect(third.nextCursor).toBeUndefined();

    const [body, mac] = first.nextCursor!.split(".");
    const claims = JSON.parse(Buffer.from(body!, "base64url").toString()) as { o: number };
    const moved = Buffer.from(JSON.stringify({ ...claims, o: 4 })).toString("base64url");
    expect((await rejection(page(a, `${moved}.${mac}`))).message).toContain("Invalid cursor");
    expect((await rejection(page(a, "not-a-cursor"))).code).toBe(-32602);
    // Another list's cursor, and another profile's.
    const prompts = rejection(
      a.request({ method: "prompts/list", params: { cursor: first.nextCursor! } }),
    );
    expect((await prompts).message).toContain("Invalid cursor");
    const other = await connect(`${replicas[0]!.url}/other`);
    expect((await rejection(page(other, first.nextCursor))).message).toContain("Invalid cursor");
  });
});
