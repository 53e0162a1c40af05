/**
 * Traces and metrics (issue 29) with real parts: mcpx from dist/ over HTTP, a real upstream over
 * HTTP that records the trace context it received (test/fixtures/upstreams/traced.mjs), an
 * OTLP/HTTP endpoint in the test that decodes the exporter's real JSON payloads, and Debian's
 * `promtool check metrics` on what /metrics serves (CI installs `prometheus`: .ci/run).
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import getPort from "get-port";
import { attr, otlpReceiver } from "../helpers/otlp.js";
import {
  fixtureServer,
  newClient,
  startHttp,
  startStdio,
  startHttpFixture,
  stop,
  text,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(headers: Record<string, string>, era: "modern" | "legacy") {
  const upstream = await startHttpFixture({}, "traced.mjs");
  cleanup.push(() => stop(upstream.child));
  const otlp = await otlpReceiver();
  cleanup.push(() => otlp.close());
  const config = writeConfig({
    mcpServers: { traced: { type: "http", url: upstream.url } },
    tracing: { otlp: otlp.url },
  });
  const mcpx: RunningHttp = await startHttp(config, [], headers, { era, client: newClient(era) });
  cleanup.push(() => mcpx.close());
  const traces = async () =>
    (await (await fetch(`${upstream.base}/control/traces`)).json()) as {
      method: string;
      tool: string;
      header: string | null;
      meta: string | null;
    }[];
  return { upstream, otlp, mcpx, traces };
}

describe("traces", () => {
  it("continues the client's trace (HTTP header) to the upstream, in its header and _meta", async () => {
    const { otlp, mcpx, traces } = await setup({ traceparent: TRACEPARENT }, "legacy");
    const result = await mcpx.client.callTool({
      name: "call",
      arguments: { method: "traced.echo", arguments: { message: "hi" } },
    });
    expect(text(result)).toBe("hi");
    const [seen] = await traces();
    expect(seen?.header).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));
    // The same span both ways, and not the client's own: mcpx's upstream span.
    expect(seen?.meta).toBe(seen?.header);
    expect(seen?.header).not.toContain(CLIENT_SPAN);

    // Spans are exported at the latest when mcpx shuts down.
    await mcpx.close();
    const call = otlp.spans.find((s) => s.name === "call traced.echo");
    const up = otlp.spans.find((s) => s.name === "tools/call traced.echo");
    expect(call).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2 });
    expect(up).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: call?.spanId, kind: 3 });
    expect(seen?.header?.split("-")[2]).toBe(up?.spanId);
    expect(attr(call!, "mcpx.server")).toBe("traced");
    expect(attr(call!, "mcpx.tool")).toBe("echo");
    expect(attr(call!, "mcpx.outcome")).toBe("ok");
    expect(attr(call!, "mcpx.era")).toBe("legacy");
    expect(attr(call!, "mcpx.profile")).toBe("default");
    expect(attr(call!, "mcpx.caller")).toBe("mcpx-test");
    // Never arguments or result values.
    expect(JSON.stringify(otlp.spans)).not.toContain('"hi"');
  });

  it("makes a script's two inner calls children of the script's span (_meta.traceparent)", async () => {
    const { otlp, mcpx, traces } = await setup({}, "modern");
    const result = await mcpx.client.callTool({
      name: "call",
      arguments: {
        script:
          'const a = await servers.traced.echo({ message: "one" }); const b = await servers.traced.rows({}); return [a, b.length];',
      },
      _meta: { traceparent: TRACEPARENT },
    });
    expect(result.isError).toBeFalsy();
    const seen = await traces();
    expect(seen.map((t) => t.tool)).toEqual(["echo", "rows"]);
    await mcpx.close();
    const script = otlp.spans.find((s) => s.name === "script");
    expect(script).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    const inner = otlp.spans.filter((s) => s.parentSpanId === script?.spanId);
    expect(inner.map((s) => s.name).sort()).toEqual([
      "tools/call traced.echo",
      "tools/call traced.rows",
    ]);
    for (const span of inner) {
      expect(span.traceId).toBe(CLIENT_TRACE);
      const received = seen.find((t) => span.name.endsWith(`.${t.tool}`));
      expect(received?.meta).toBe(`00-${CLIENT_TRACE}-${span.spanId}-01`);
      expect(received?.header).toBe(received?.meta);
    }
    expect(attr(script!, "mcpx.era")).toBe("modern");
    // Every span of this run belongs to the client's trace: nothing started a trace of its own.
    expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(new Set([CLIENT_TRACE]));
  });
});

describe("traces of relayed requests", () => {
  for (const era of ["legacy", "modern"] as const) {
    it(`continue the client's trace to the upstream for resources/read and prompts/get (${era})`, async () => {
      const { otlp, mcpx, traces } = await setup({ traceparent: TRACEPARENT }, era);
      const read = await mcpx.client.readResource({ uri: "traced://readme" });
      expect(JSON.stringify(read.contents)).toContain("traced readme");
      const prompt = await mcpx.client.getPrompt({
        name: "traced__greet",
        arguments: { name: "Ada" },
      });
      expect(JSON.stringify(prompt.messages)).toContain("hello Ada");
      // The same read through the `resources` meta-tool.
      const viaTool = await mcpx.client.callTool({
        name: "resources",
        arguments: { uri: "traced://readme" },
      });
      expect(JSON.stringify(viaTool.content)).toContain("traced readme");
      const seen = await traces();
      expect(seen.map((t) => t.method)).toEqual([
        "resources/read",
        "prompts/get",
        "resources/read",
      ]);
      await mcpx.close();
      const metaTool = otlp.spans.find((s) => s.name === "tools/call resources");
      expect(metaTool).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
      const toolRead = otlp.spans.find((s) => s.parentSpanId === metaTool?.spanId);
      expect(toolRead).toMatchObject({
        name: "resources/read traced",
        traceId: CLIENT_TRACE,
        kind: 3,
      });
      expect(attr(toolRead!, "mcpx.outcome")).toBe("ok");
      expect(seen[2]?.header).toBe(`00-${CLIENT_TRACE}-${toolRead?.spanId}-01`);
      expect(seen[2]?.meta).toBe(seen[2]?.header);
      for (const [method, name] of [
        ["resources/read", "traced://readme"],
        ["prompts/get", "traced__greet"],
      ] as const) {
        const request = otlp.spans.find((s) => s.name === `${method} ${name}`);
        expect(request).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
        const up = otlp.spans.find((s) => s.parentSpanId === request?.spanId);
        expect(up).toMatchObject({ name: `${method} traced`, traceId: CLIENT_TRACE, kind: 3 });
        // The upstream got mcpx's upstream span both ways: header and _meta.traceparent.
        const received = seen.find((t) => t.method === method);
        expect(received?.header).toBe(`00-${CLIENT_TRACE}-${up?.spanId}-01`);
        expect(received?.meta).toBe(received?.header);
      }
    });
  }
});

describe("traces from the standard variables", () => {
  it("exports to OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces) with no tracing key in the config", async () => {
    const otlp = await otlpReceiver();
    cleanup.push(() => otlp.close());
    const config = writeConfig({ mcpServers: { alpha: fixtureServer("modern.mjs") } });
    // startHttp passes this process's environment to mcpx: set only around the spawn.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url.replace(/\/v1\/traces$/, "");
    let mcpx: RunningHttp;
    try {
      mcpx = await startHttp(config);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
    cleanup.push(() => mcpx.close());
    await mcpx.client.callTool({
      name: "call",
      arguments: { method: "alpha.echo", arguments: { message: "m" } },
    });
    await mcpx.close();
    const names = otlp.spans.map((s) => s.name).sort();
    expect(names).toEqual(["call alpha.echo", "tools/call alpha.echo"]);
    // No traceparent from the client: mcpx's call span starts the trace.
    const root = otlp.spans.find((s) => s.name === "call alpha.echo");
    expect(root?.parentSpanId ?? "").toBe("");
    expect(mcpx.stderr()).toContain("traces on: OTLP/HTTP to the OTEL_EXPORTER_OTLP_* endpoint");
  });
});

/** Debian's promtool, when installed (CI installs it); else the test says so and fails. */
function promtool(exposition: string): string {
  return execFileSync("promtool", ["check", "metrics"], { input: exposition, encoding: "utf8" });
}

describe("metrics", () => {
  it("serves /metrics that promtool accepts, counting calls, scripts and saved tokens", async () => {
    const { mcpx } = await setup({}, "modern");
    await mcpx.client.callTool({
      name: "call",
      arguments: { method: "traced.echo", arguments: { message: "x" } },
    });
    await mcpx.client.callTool({ name: "call", arguments: { method: "traced.rows" } });
    await mcpx.client.callTool({
      name: "call",
      arguments: { method: "traced.nope", arguments: {} },
    });
    await mcpx.client.callTool({
      name: "call",
      arguments: { script: 'return (await servers.traced.echo({ message: "s" }));' },
    });
    const res = await fetch(new URL("/metrics", mcpx.url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const body = await res.text();
    promtool(body);
    expect(body).toContain('mcpx_calls_total{server="traced",tool="echo",outcome="ok"} 2');
    expect(body).toContain('mcpx_calls_total{server="traced",tool="rows",outcome="ok"} 1');
    // A refused call's made-up tool name never becomes a label.
    expect(body).toContain('mcpx_calls_total{server="traced",tool="",outcome="refused"} 1');
    expect(body).not.toContain("nope");
    expect(body).toContain('mcpx_sandbox_runs_total{outcome="ok"} 1');
    expect(body).toContain('mcpx_upstream_status{server="traced",status="ready"} 1');
    expect(body).toMatch(/mcpx_call_duration_seconds_count\{server="traced",tool="echo"\} 2/);
    expect(body).toMatch(/mcpx_upstream_sessions\{server="traced",policy="client"\} \d+/);
    expect(body).toMatch(/mcpx_calls_in_flight 0/);
    const saved = /mcpx_result_tokens_saved_total\{server="traced"\} (\d+)/.exec(body);
    expect(Number(saved?.[1])).toBeGreaterThan(0);
    const direct = /mcpx_definition_tokens\{profile="default",path="direct"\} (\d+)/.exec(body);
    const through = /mcpx_definition_tokens\{profile="default",path="mcpx"\} (\d+)/.exec(body);
    expect(Number(direct?.[1])).toBeGreaterThan(0);
    expect(Number(through?.[1])).toBeGreaterThan(0);
  });
});

describe("metrics access", () => {
  const TOKEN_CI = "metrics-token-of-ci-0001";
  const TOKEN_OPS = "metrics-token-of-ops-002";

  it("under auth: 401 without a token; a token holder gets only its profile's servers", async () => {
    const config = writeConfig({
      mcpServers: { alpha: fixtureServer("modern.mjs"), beta: fixtureServer("modern.mjs") },
      auth: { tokens: { [TOKEN_CI]: "ci", [TOKEN_OPS]: "ops" } },
      profiles: { default: { servers: ["*"] }, ci: { servers: ["alpha"] } },
      callers: { ci: "ci" },
    });
    const mcpx = await startHttp(config, [], { Authorization: `Bearer ${TOKEN_OPS}` });
    cleanup.push(() => mcpx.close());
    for (const server of ["alpha", "beta"]) {
      await mcpx.client.callTool({
        name: "call",
        arguments: { method: `${server}.echo`, arguments: { message: "m" } },
      });
    }
    const url = new URL("/metrics", mcpx.url);
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    const scrape = async (token: string) => {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return res.text();
    };
    const ops = await scrape(TOKEN_OPS);
    promtool(ops);
    expect(ops).toContain('mcpx_calls_total{server="alpha",tool="echo",outcome="ok"} 1');
    expect(ops).toContain('mcpx_calls_total{server="beta",tool="echo",outcome="ok"} 1');
    const ci = await scrape(TOKEN_CI);
    promtool(ci);
    expect(ci).toContain('mcpx_calls_total{server="alpha",tool="echo",outcome="ok"} 1');
    expect(ci).not.toContain('server="beta"');
    // Tokens never show in what mcpx serves or logs.
    expect(ops + ci + mcpx.stderr()).not.toContain(TOKEN_CI);
    expect(ops + ci + mcpx.stderr()).not.toContain(TOKEN_OPS);
  });

  it("over stdio: served on 127.0.0.1 with --metrics-port (without it, nothing loads: lazy-modules)", async () => {
    const port = await getPort({ host: "127.0.0.1" });
    const config = writeConfig({ mcpServers: { alpha: fixtureServer("modern.mjs") } });
    const mcpx = await startStdio(config, ["--metrics-port", String(port)]);
    cleanup.push(() => mcpx.close());
    await mcpx.client.callTool({
      name: "call",
      arguments: { method: "alpha.echo", arguments: { message: "m" } },
    });
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const body = await res.text();
    promtool(body);
    expect(body).toContain('mcpx_calls_total{server="alpha",tool="echo",outcome="ok"} 1');
    expect(mcpx.stderr()).toContain(`metrics on http://127.0.0.1:${port}/metrics`);
  });
});

describe("spans per downstream request", () => {
  it("gives describe, prompts/get and resources/read a span each, their upstream requests as children", async () => {
    const otlp = await otlpReceiver();
    cleanup.push(() => otlp.close());
    const config = writeConfig({
      mcpServers: { modern: fixtureServer("modern.mjs") },
      tracing: { otlp: otlp.url },
    });
    const mcpx = await startHttp(config, [], { traceparent: TRACEPARENT }, { era: "legacy" });
    cleanup.push(() => mcpx.close());
    await mcpx.client.callTool({ name: "describe", arguments: { method: "modern" } });
    const prompt = await mcpx.client.getPrompt({
      name: "modern__greet",
      arguments: { name: "Ada" },
    });
    expect(JSON.stringify(prompt.messages)).toContain("hello Ada");
    const read = await mcpx.client.readResource({ uri: "modern://readme" });
    expect(JSON.stringify(read.contents)).toContain("modern readme");
    await mcpx.close();

    const byName = (name: string) => otlp.spans.find((s) => s.name === name);
    const describeSpan = byName("tools/call describe");
    expect(describeSpan).toMatchObject({
      traceId: CLIENT_TRACE,
      parentSpanId: CLIENT_SPAN,
      kind: 2,
    });
    expect(attr(describeSpan!, "mcp.method.name")).toBe("tools/call");
    expect(attr(describeSpan!, "mcpx.tool")).toBe("describe");
    expect(attr(describeSpan!, "mcpx.outcome")).toBe("ok");
    expect(attr(describeSpan!, "mcpx.era")).toBe("legacy");
    for (const [name, method] of [
      ["prompts/get modern__greet", "prompts/get"],
      ["resources/read modern://readme", "resources/read"],
    ] as const) {
      const request = byName(name);
      expect(request).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2 });
      const upstream = otlp.spans.filter((s) => s.parentSpanId === request?.spanId);
      expect(upstream.map((s) => s.name)).toEqual([`${method} modern`]);
      expect(upstream[0]).toMatchObject({ traceId: CLIENT_TRACE, kind: 3 });
      for (const span of [request!, upstream[0]!]) {
        expect(attr(span, "mcp.method.name")).toBe(method);
        expect(attr(span, "mcpx.server")).toBe("modern");
        expect(attr(span, "mcpx.caller")).toBe("mcpx-test");
        expect(attr(span, "mcpx.profile")).toBe("default");
        expect(attr(span, "mcpx.era")).toBe("legacy");
        expect(attr(span, "mcpx.outcome")).toBe("ok");
      }
    }
    // Arguments never in a span.
    expect(JSON.stringify(otlp.spans)).not.toContain("Ada");
  });
});
