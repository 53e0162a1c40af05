/** Code mode's pure parts: inner results as values, the script's answer, the typed API text. */
import { describe, expect, it } from "vitest";
import { SchemaCompiler } from "../../src/compression/schema.js";
import { innerResult, scriptResult } from "../../src/executor/script.js";
import type { ServerState } from "../../src/registry/registry.js";
import { renderApi } from "../../src/server/script-typings.js";
import type { ToolDef } from "../../src/types.js";

describe("an inner call's result as the script sees it", () => {
  it("structured content first, then JSON text, then { text, content }; isError is an error", () => {
    const image = { type: "image", data: "AAAA", mimeType: "image/png" };
    expect(
      innerResult({ content: [{ type: "text", text: "[1]" }], structuredContent: { a: 1 } }),
    ).toEqual({ value: { a: 1 } });
    expect(innerResult({ content: [{ type: "text", text: '{"b":[1,2]}' }] })).toEqual({
      value: { b: [1, 2] },
    });
    expect(innerResult({ content: [{ type: "text", text: "hello" }] })).toEqual({
      value: { text: "hello", content: [{ type: "text", text: "hello" }] },
    });
    // JSON-looking text next to an image is not the whole result: both are handed over.
    expect(innerResult({ content: [{ type: "text", text: "1" }, image] })).toEqual({
      value: { text: "1", content: [{ type: "text", text: "1" }, image] },
    });
    expect(
      innerResult({
        content: [
          { type: "text", text: "bad" },
          { type: "text", text: "input" },
        ],
        isError: true,
      }),
    ).toEqual({ error: "bad\ninput" });
    expect(innerResult({ content: [], isError: true })).toEqual({
      error: "the tool reported an error",
    });
  });
});

describe("the script's answer", () => {
  it("a string as itself, other values as JSON, console lines after; errors keep their lines", () => {
    expect(scriptResult({ ok: true, value: "plain", logs: [], calls: 1 }).result.content).toEqual([
      { type: "text", text: "plain" },
    ]);
    const value = scriptResult({ ok: true, value: { a: 1 }, logs: ["x", "y"], calls: 2 });
    expect(value.result.content).toEqual([
      { type: "text", text: '{"a":1}' },
      { type: "text", text: "console:\nx\ny" },
    ]);
    expect(scriptResult({ ok: true, value: undefined, logs: [], calls: 0 }).result.content).toEqual(
      [{ type: "text", text: "(the script returned no value)" }],
    );
    const failed = scriptResult({
      ok: false,
      error: { kind: "limit", limit: "timeMs", message: "Script stopped: …" },
      logs: ["started"],
      calls: 3,
    });
    expect(failed).toMatchObject({ outcome: "isError", error: "limit timeMs" });
    expect(failed.result).toMatchObject({
      isError: true,
      content: [
        { type: "text", text: "Script stopped: …" },
        { type: "text", text: "console:\nstarted" },
      ],
      _meta: { "mcpx/script": { calls: 3 } },
    });
    const syntax = { kind: "syntax", message: "SyntaxError" } as const;
    expect(scriptResult({ ok: false, error: syntax, logs: [], calls: 0 }).outcome).toBe("refused");
  });
});

describe("the typed API", () => {
  const server = (name: string, tools: ToolDef[]) =>
    ({ name, tools, config: {}, status: "ready" }) as unknown as ServerState;

  it("quotes names a script must write in brackets, on servers and tools alike", async () => {
    const text = await renderApi(
      [
        {
          server: server("brave-search", [
            {
              name: "web-search",
              description: "Searches the web. Returns pages.",
              inputSchema: {
                type: "object",
                properties: { q: { type: "string" } },
                required: ["q"],
              },
            },
          ]),
          tools: [],
        },
      ].map((s) => ({ ...s, tools: s.server.tools })),
      new SchemaCompiler(),
    );
    expect(text).toContain(
      'declare const servers: {\n  "brave-search": {\n    /** Searches the web. */\n    "web-search"(args: {\n      q: string\n    }): Promise<unknown>;\n  };\n};',
    );
  });

  it("a schema served as JSON is shown as such; a union root is written in place", async () => {
    const tools: ToolDef[] = [
      {
        name: "pick",
        inputSchema: {
          oneOf: [
            { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
            { type: "object", properties: { b: { type: "string" } }, required: ["b"] },
          ],
        },
      },
    ];
    const ts = await renderApi([{ server: server("s", tools), tools }], new SchemaCompiler());
    expect(ts).toMatch(
      /pick\(args: \(\{\n\s+a: string\n\s+\}\|\{\n\s+b: string\n\s+\}\)\): Promise<unknown>;/,
    );
    const json = await renderApi(
      [{ server: server("s", tools), tools }],
      new SchemaCompiler({ mode: "json" }),
    );
    expect(json).toContain("pick(args: object /* JSON Schema: {");
  });
});
