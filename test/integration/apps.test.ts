/**
 * MCP Apps through the built `mcpx` (extension io.modelcontextprotocol/ui): `ui://` resources
 * relayed as `ui://<server>/<rest>` with their `_meta.ui`, tools' `_meta.ui.resourceUri`
 * rewritten to match, `apps: "direct"` listing app tools as `server__tool`, and the extension
 * declared downstream only when an upstream has it. The apps fixture on both sides, a 2025-era
 * and a 2026-07-28 client over stdio and HTTP.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ERAS,
  fixtureServer,
  startHttp,
  startStdio,
  text,
  writeConfig,
  type Era,
  type Running,
  type RunningHttp,
} from "../helpers/proxy.js";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

// Two servers of one fixture: their ui:// URIs would clash without the server in them.
const config = writeConfig({
  mcpServers: {
    apps: { ...fixtureServer("apps.mjs"), apps: "direct" },
    other: fixtureServer("apps.mjs"),
  },
});

const starts = {
  stdio: (era: Era) => startStdio(config, [], { era }),
  http: (era: Era) => startHttp(config, [], {}, { era }),
};
const matrix = (["stdio", "http"] as const).flatMap((t) => ERAS.map((era) => [t, era] as const));

type Meta = Record<string, unknown> | undefined;
const metaOf = (x: unknown): Meta => (x as { _meta?: Record<string, unknown> })._meta;

describe.each(matrix)("MCP Apps over %s, %s client", (transport, era) => {
  let proxy: Running;
  let client: Client;

  beforeAll(async () => {
    proxy = await starts[transport](era);
    client = proxy.client;
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("declares the extension downstream, as its upstreams do", () => {
    expect(client.getServerCapabilities()?.extensions?.[UI]).toBeDefined();
  });

  it('lists app tools of an `apps: "direct"` server as server__tool, with the UI under the server', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(["describe", "call", "resources"]);
    // Only the tools that declare a UI, only of the server that asks for it.
    expect(names.slice(3).sort()).toEqual(["apps__legacy_ui", "apps__weather"]);
    const weather = tools.find((t) => t.name === "apps__weather")!;
    expect(weather._meta).toEqual({
      ui: { resourceUri: "ui://apps/weather/view.html", visibility: ["model", "app"] },
    });
    expect(weather.description).toBe("The weather in a city, with an interactive view.");
    expect(weather.inputSchema.properties).toHaveProperty("city");
    const legacy = tools.find((t) => t.name === "apps__legacy_ui")!;
    expect(legacy._meta).toEqual({ "ui/resourceUri": "ui://apps/weather/legacy.html" });
  });

  it("calls a directly listed tool: the upstream's result as it came, _meta included", async () => {
    const result = await client.callTool({ name: "apps__weather", arguments: { city: "Oslo" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: "Oslo", tempC: 21 });
    expect(metaOf(result)?.["fixture/at"]).toBe("apps");
    expect(text(result)).toBe("Oslo: 21 C");
  });

  it("routes an app's calls of its server's tools by the upstream's names", async () => {
    const weather = await client.callTool({ name: "weather", arguments: { city: "Rome" } });
    expect(weather.structuredContent).toEqual({ city: "Rome", tempC: 21 });
    // Any tool of the one server with direct apps: an app may call tools it never lists.
    expect(text(await client.callTool({ name: "plain", arguments: {} }))).toBe("plain");
    await expect(client.callTool({ name: "nowhere", arguments: {} })).rejects.toThrow(
      /Unknown tool "nowhere"/,
    );
  });

  it("answers a direct name of a server without apps: direct as an unknown tool", async () => {
    await expect(client.callTool({ name: "other__weather", arguments: {} })).rejects.toThrow(
      /Unknown tool "other__weather"/,
    );
  });

  it("keeps a result's _meta through the call meta-tool", async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: "other.weather", arguments: { city: "Lima" } },
    });
    expect(result.isError).toBeFalsy();
    expect(metaOf(result)?.["fixture/at"]).toBe("apps");
  });

  it("lists each server's ui:// resources under its name, _meta.ui kept; other URIs as given", async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        "ui://apps/weather/view.html",
        "ui://apps/weather/legacy.html",
        "ui://other/weather/view.html",
        "ui://other/weather/legacy.html",
        "apps://notes",
      ]),
    );
    expect(uris.filter((u) => u === "apps://notes")).toHaveLength(1);
    const view = resources.find((r) => r.uri === "ui://other/weather/view.html")!;
    expect(view.mimeType).toBe(MIME);
    expect(metaOf(view)).toEqual({
      ui: {
        csp: {
          connectDomains: ["https://api.example.com"],
          resourceDomains: ["https://cdn.example.com"],
        },
        permissions: { clipboardWrite: {} },
        prefersBorder: true,
      },
    });
  });

  it("reads ui://<server>/<rest> from that server, contents' URI and _meta.ui as listed", async () => {
    for (const server of ["apps", "other"]) {
      const uri = `ui://${server}/weather/view.html`;
      const { contents } = await client.readResource({ uri });
      expect(contents).toHaveLength(1);
      const [c] = contents as { uri: string; mimeType?: string; text?: string }[];
      expect(c!.uri).toBe(uri);
      expect(c!.mimeType).toBe(MIME);
      expect(c!.text).toContain("<h1>view</h1>");
      expect((metaOf(c)?.ui as Record<string, unknown>).permissions).toEqual({
        clipboardWrite: {},
      });
    }
  });

  it("refuses a ui:// URI of no server of mcpx", async () => {
    await expect(client.readResource({ uri: "ui://nobody/weather/view.html" })).rejects.toThrow(
      /not found/,
    );
  });

  it("reads a UI through the resources meta-tool, and lists it there under its server", async () => {
    const listed = text(
      await client.callTool({ name: "resources", arguments: { server: "apps" } }),
    );
    expect(listed).toContain("ui://apps/weather/view.html");
    const read = await client.callTool({
      name: "resources",
      arguments: { uri: "ui://other/weather/legacy.html" },
    });
    expect(read.isError).toBeFalsy();
    const block = (read.content as { type: string; resource?: { uri: string } }[])[0]!;
    expect(block.type).toBe("resource");
    expect(block.resource?.uri).toBe("ui://other/weather/legacy.html");
  });

  it("tells upstreams it relays MCP Apps", async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: "apps.client_ui", arguments: {} },
    });
    expect(JSON.parse(text(result))).toEqual({ mimeTypes: [MIME] });
  });
});

describe.each(ERAS)("MCP Apps not declared without app upstreams, %s client", (era) => {
  it("declares no UI extension and lists only the meta-tools", async () => {
    const plain = writeConfig({ mcpServers: { modern: fixtureServer("modern.mjs") } });
    const proxy = await startStdio(plain, [], { era });
    try {
      expect(proxy.client.getServerCapabilities()?.extensions?.[UI]).toBeUndefined();
      const { tools } = await proxy.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["describe", "call", "resources"]);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * The same relay and direct listing when the app upstreams speak only the 2025 era (the fixture
 * answers server/discover -32601, so mcpx opens them with initialize), to clients of both eras.
 */
describe.each(ERAS)("MCP Apps from 2025-era upstreams, %s client over HTTP", (era) => {
  const legacyConfig = writeConfig({
    mcpServers: {
      apps: { ...fixtureServer("apps.mjs", { APPS_ERA: "legacy" }), apps: "direct" },
      other: fixtureServer("apps.mjs", { APPS_ERA: "legacy" }),
    },
  });
  let proxy: RunningHttp;
  let client: Client;

  beforeAll(async () => {
    proxy = await startHttp(legacyConfig, [], {}, { era });
    client = proxy.client;
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("opens the upstreams in the 2025 era and declares the extension downstream", async () => {
    const health = (await (await fetch(proxy.url.replace(/\/mcp$/, "/healthz"))).json()) as {
      servers: Record<string, { era?: string; protocolVersion?: string }>;
    };
    for (const server of ["apps", "other"]) {
      expect(health.servers[server]).toMatchObject({
        era: "legacy",
        protocolVersion: "2025-11-25",
      });
    }
    expect(client.getServerCapabilities()?.extensions?.[UI]).toBeDefined();
  });

  it("lists the app tools directly, resourceUri rewritten under the server", async () => {
    const { tools } = await client.listTools();
    expect(
      tools
        .map((t) => t.name)
        .slice(3)
        .sort(),
    ).toEqual(["apps__legacy_ui", "apps__weather"]);
    const weather = tools.find((t) => t.name === "apps__weather")!;
    expect(weather._meta).toEqual({
      ui: { resourceUri: "ui://apps/weather/view.html", visibility: ["model", "app"] },
    });
    const result = await client.callTool({ name: "apps__weather", arguments: { city: "Oslo" } });
    expect(result.structuredContent).toEqual({ city: "Oslo", tempC: 21 });
    expect(metaOf(result)?.["fixture/at"]).toBe("apps");
  });

  it("relays ui:// reads per server with their _meta.ui", async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(["ui://apps/weather/view.html", "ui://other/weather/view.html"]),
    );
    const { contents } = await client.readResource({ uri: "ui://other/weather/view.html" });
    const [c] = contents as { uri: string; mimeType?: string; text?: string }[];
    expect(c!.uri).toBe("ui://other/weather/view.html");
    expect(c!.mimeType).toBe(MIME);
    expect((metaOf(c)?.ui as Record<string, unknown>).csp).toEqual({
      connectDomains: ["https://api.example.com"],
      resourceDomains: ["https://cdn.example.com"],
    });
  });
});
