/**
 * The catalog relay through the built `mcpx`: prompts, completion, resources and templates,
 * pagination, resource subscriptions and list_changed, against server-everything and the
 * catalog fixture (500 resources), with a 2025-era and a 2026-07-28 client over stdio and HTTP.
 */
import { ProtocolError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ERAS,
  eventually,
  fixtureServer,
  npmServer,
  startHttp,
  startStdio,
  text,
  writeConfig,
  type Era,
  type Running,
} from "../helpers/proxy.js";

// Shared sessions: a call and a subscription of one client land on the same upstream process.
const config = writeConfig({
  mcpServers: {
    everything: {
      ...npmServer("@modelcontextprotocol/server-everything", "stdio"),
      session: "shared",
    },
    catalog: { ...fixtureServer("catalog.mjs"), session: "shared" },
  },
});

const starts = {
  stdio: (era: Era) => startStdio(config, [], { era }),
  http: (era: Era) => startHttp(config, [], {}, { era }),
};
const matrix = (["stdio", "http"] as const).flatMap((t) => ERAS.map((era) => [t, era] as const));

const TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}";

/** The error a request failed with (a JSON-RPC error from mcpx). */
async function rejection(p: Promise<unknown>): Promise<ProtocolError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error("the request succeeded");
}

describe.each(matrix)("relay over %s, %s client", (transport, era) => {
  let proxy: Running;
  const notes = { resourcesChanged: 0, updated: [] as string[] };

  beforeAll(async () => {
    proxy = await starts[transport](era);
    proxy.client.setNotificationHandler("notifications/resources/list_changed", () => {
      notes.resourcesChanged += 1;
    });
    proxy.client.setNotificationHandler("notifications/resources/updated", (n) => {
      notes.updated.push(n.params.uri);
    });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const call = (method: string, args: Record<string, unknown> = {}) =>
    proxy.client.callTool({ name: "call", arguments: { method, arguments: args } });

  it("lists prompts as server__prompt and gets one with its arguments, messages unchanged", async () => {
    const { prompts } = await proxy.client.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "everything__simple-prompt",
        "everything__args-prompt",
        "everything__completable-prompt",
        "everything__resource-prompt",
        // The name mapping is data: a prompt whose own name has "__" is still found.
        "catalog__p__q",
      ]),
    );
    const args = prompts.find((p) => p.name === "everything__args-prompt");
    expect(args?.arguments?.map((a) => [a.name, a.required ?? false])).toEqual([
      ["city", true],
      ["state", false],
    ]);
    const got = await proxy.client.getPrompt({
      name: "everything__args-prompt",
      arguments: { city: "Paris", state: "Texas" },
    });
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "What's weather in Paris, Texas?" } },
    ]);
    const odd = await proxy.client.getPrompt({ name: "catalog__p__q" });
    expect(odd.messages[0]?.content).toEqual({ type: "text", text: "prompt p__q" });
    const embedded = await proxy.client.getPrompt({
      name: "everything__resource-prompt",
      arguments: { resourceType: "Text", resourceId: "2" },
    });
    expect(embedded.messages[1]?.content).toMatchObject({
      type: "resource",
      resource: { uri: "demo://resource/dynamic/text/2" },
    });
  });

  it("answers an unknown prompt with -32602, and an upstream's own error as it gave it", async () => {
    const unknown = await rejection(proxy.client.getPrompt({ name: "everything__nope" }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain('Unknown prompt "everything__nope"');
    // server-everything refuses a resourceType it does not know: its error comes back.
    const refused = await rejection(
      proxy.client.getPrompt({
        name: "everything__resource-prompt",
        arguments: { resourceType: "Video", resourceId: "1" },
      }),
    );
    expect(refused.message).toContain("Invalid resourceType");
  });

  it("completes prompt arguments and template variables through the owning upstream", async () => {
    const department = await proxy.client.complete({
      ref: { type: "ref/prompt", name: "everything__completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    expect(department.completion.values).toEqual(["Engineering"]);
    // The context of earlier arguments reaches the upstream too.
    const name = await proxy.client.complete({
      ref: { type: "ref/prompt", name: "everything__completable-prompt" },
      argument: { name: "name", value: "" },
      context: { arguments: { department: "Sales" } },
    });
    expect(name.completion.values).toEqual(["David", "Eve", "Frank"]);
    const id = await proxy.client.complete({
      ref: { type: "ref/resource", uri: TEXT_TEMPLATE },
      argument: { name: "resourceId", value: "42" },
    });
    expect(id.completion.values).toEqual(["42"]);
    const unknown = await rejection(
      proxy.client.complete({
        ref: { type: "ref/prompt", name: "nobody__nothing" },
        argument: { name: "x", value: "" },
      }),
    );
    expect(unknown.code).toBe(-32602);
  });

  it("lists resources and templates with the upstreams' URIs and reads them", async () => {
    const { resourceTemplates } = await proxy.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(
      expect.arrayContaining([TEXT_TEMPLATE, "fixture://item/{id}"]),
    );
    const { resources } = await proxy.client.listResources();
    const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/document/"));
    expect(doc).toBeDefined();
    const read = await proxy.client.readResource({ uri: doc!.uri });
    expect(read.contents[0]?.uri).toBe(doc!.uri);
    // Not listed, but server-everything's template matches it: read there.
    const templated = await proxy.client.readResource({ uri: "demo://resource/dynamic/text/7" });
    expect(templated.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/7" });
    expect(String((templated.contents[0] as { text?: string }).text)).toContain("Resource 7");
    const missing = await rejection(proxy.client.readResource({ uri: "nowhere://x" }));
    expect(missing.code).toBe(-32602);
  });

  it("the resources tool expands a template with arguments and reads it", async () => {
    const result = await proxy.client.callTool({
      name: "resources",
      arguments: { uri: TEXT_TEMPLATE, arguments: { resourceId: 5 } },
    });
    expect(result.isError).toBeFalsy();
    expect(result.content).toMatchObject([
      { type: "resource", resource: { uri: "demo://resource/dynamic/text/5" } },
    ]);
    const without = await proxy.client.callTool({
      name: "resources",
      arguments: { uri: TEXT_TEMPLATE },
    });
    expect(without.isError).toBe(true);
    expect(text(without)).toContain("resourceId missing");
  });

  it("describe() counts each server's prompts; describe(server) lists them with arguments", async () => {
    const all = text(await proxy.client.callTool({ name: "describe", arguments: {} }));
    expect(all).toMatch(/## everything \(\d+ tools, 4 prompts\)/);
    const one = text(
      await proxy.client.callTool({ name: "describe", arguments: { method: "everything" } }),
    );
    expect(one).toContain("everything__args-prompt(city, state?)");
    expect(one).toContain("everything__simple-prompt()");
  });

  it("forwards a resource subscription and the upstream's updates, and ends it", async () => {
    const uri = "fixture://item/3";
    const stream =
      era === "modern"
        ? await proxy.client.listen({ resourceSubscriptions: [uri] })
        : (await proxy.client.subscribeResource({ uri }), undefined);
    const subscribed = async () =>
      (JSON.parse(text(await call("catalog.subscriptions"))) as { uris: string[] }).uris.includes(
        uri,
      );
    // Acknowledged (modern) or answered (legacy) once the upstream took the subscription.
    expect(await subscribed()).toBe(true);
    expect(text(await call("catalog.touch", { uri }))).toBe(`touched ${uri}`);
    await eventually(() => notes.updated.includes(uri), 10_000, "resources/updated");
    if (stream) await stream.close();
    else await proxy.client.unsubscribeResource({ uri });
    await eventually(async () => !(await subscribed()), 10_000, "the upstream unsubscription");
  });

  it("forwards server-everything's own subscription updates", async () => {
    const uri = "demo://resource/static/document/architecture.md";
    const stream =
      era === "modern"
        ? await proxy.client.listen({ resourceSubscriptions: [uri] })
        : (await proxy.client.subscribeResource({ uri }), undefined);
    // Its toggle sends an update for every subscribed URI at once (then every 5 s).
    expect(text(await call("everything.toggle-subscriber-updates"))).toContain("Started");
    await eventually(() => notes.updated.includes(uri), 15_000, "everything's update");
    await call("everything.toggle-subscriber-updates");
    if (stream) await stream.close();
    else await proxy.client.unsubscribeResource({ uri });
  });

  it("pages 500+ resources; a change mid-walk says to start over; a forged cursor is refused", async () => {
    const page = (cursor?: string) =>
      proxy.client.request({
        method: "resources/list",
        params: cursor === undefined ? {} : { cursor },
      });
    const first = await page();
    expect(first.resources).toHaveLength(200);
    const second = await page(first.nextCursor);
    expect(second.resources).toHaveLength(200);
    expect(second.resources[0]?.uri).not.toBe(first.resources[0]?.uri);

    const forged = await rejection(page(`${first.nextCursor!.slice(0, -2)}xx`));
    expect(forged.code).toBe(-32602);
    expect(forged.message).toContain("Invalid cursor");

    // The catalog changes under the walk: mcpx learns it, and tells this client.
    const listening =
      era === "modern" ? await proxy.client.listen({ resourcesListChanged: true }) : undefined;
    const before = notes.resourcesChanged;
    await call("catalog.add_resource");
    await eventually(() => notes.resourcesChanged > before, 10_000, "resources list_changed");
    const stale = await rejection(page(second.nextCursor));
    expect(stale.code).toBe(-32602);
    expect(stale.message).toContain("without a cursor to start over");
    await listening?.close();

    // Starting over: every resource once, one more than before.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const next = await page(cursor);
      seen.push(...next.resources.map((r) => r.uri));
      cursor = next.nextCursor;
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain("fixture://item/500");
    expect(seen.filter((u) => u.startsWith("fixture://item/"))).toHaveLength(501);
  });
});
