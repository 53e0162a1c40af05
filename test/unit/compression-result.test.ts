import { decode as decodeToon } from "@toon-format/toon";
import { encode as countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";

import { compressResult, estimateTokens } from "../../src/compression/result.js";
import type { ToolResult } from "../../src/types.js";

const text = (t: string): ToolResult => ({ content: [{ type: "text", text: t }] });
const only = (result: ToolResult): string => result.content[0]!.text as string;

const USERS = Array.from({ length: 20 }, (_, i) => ({
  id: 1000 + i,
  login: `user${i}`,
  name: `User Number ${i}`,
  site_admin: i % 5 === 0,
}));

/** An irregular, nested object, where TOON's indentation and keys cost more than JSON. */
const ISSUE = {
  user: {
    login: "octocat",
    id: 1,
    node_id: "MDQ6VXNlcjE=",
    avatar_url: "https://github.com/images/error/octocat_happy.gif",
    site_admin: false,
  },
  labels: [
    {
      id: 208045946,
      name: "bug",
      color: "f29513",
      default: true,
      description: "Something isn't working",
    },
  ],
  body: "I'm having a problem with this.\nLine 2",
  title: "Found a bug",
  number: 1347,
  state: "open",
};

describe("compressResult", () => {
  it("chooses TOON for a uniform array of objects, and it is smaller", () => {
    const json = JSON.stringify(USERS);
    const out = only(compressResult(text(JSON.stringify(USERS, null, 2)), "auto"));
    expect(out).toMatch(/^\[20\]\{id,login,name,site_admin\}:/);
    expect(decodeToon(out)).toEqual(USERS);
    expect(out.length).toBeLessThan(json.length);
    expect(countTokens(out).length).toBeLessThan(countTokens(json).length);
  });

  it("keeps compact JSON for an irregular nested object where TOON is not smaller", () => {
    const out = only(compressResult(text(JSON.stringify(ISSUE, null, 2)), "auto"));
    expect(out).toBe(JSON.stringify(ISSUE));
  });

  it("never passes pretty JSON through, in any mode but off", () => {
    const pretty = `\n  ${JSON.stringify(ISSUE, null, 4)}\n`;
    for (const mode of ["auto", "json", "toon"] as const) {
      const out = only(compressResult(text(pretty), mode));
      expect(out, mode).not.toBe(pretty);
      expect(out, mode).not.toContain("\n    ");
    }
    expect(only(compressResult(text(pretty), "json"))).toBe(JSON.stringify(ISSUE));
  });

  it("forces TOON in toon mode, losslessly", () => {
    const out = only(compressResult(text(JSON.stringify(ISSUE)), "toon"));
    expect(out).not.toBe(JSON.stringify(ISSUE));
    expect(decodeToon(out)).toEqual(ISSUE);
  });

  it("leaves non-JSON text, JSON scalars, images and resources untouched", () => {
    const input: ToolResult = {
      content: [
        { type: "text", text: "Created issue #12" },
        { type: "text", text: "[not json" },
        { type: "text", text: '"just a string"' },
        { type: "text", text: "42" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.json", text: '{ "a": 1 }' } },
        { type: "resource_link", uri: "file:///b", name: "b" },
      ],
    };
    const out = compressResult(input, "auto");
    expect(out).toBe(input);
  });

  it("keeps structuredContent, isError, _meta and block fields", () => {
    const structured = { items: USERS };
    const input: ToolResult = {
      content: [
        {
          type: "text",
          text: JSON.stringify(structured, null, 2),
          annotations: { audience: ["assistant"] },
        },
      ],
      structuredContent: structured,
      isError: true,
      _meta: { trace: "x" },
    };
    const out = compressResult(input, "auto");
    expect(out.structuredContent).toBe(structured);
    expect(out.isError).toBe(true);
    expect(out._meta).toEqual({ trace: "x" });
    expect(out.content[0]!.annotations).toEqual({ audience: ["assistant"] });
    expect(decodeToon(only(out))).toEqual(structured);
  });

  it("keeps content as is when structuredContent has no JSON text block", () => {
    const input: ToolResult = {
      content: [{ type: "text", text: "Done." }],
      structuredContent: { ok: true },
    };
    expect(compressResult(input, "auto")).toBe(input);
  });

  it("passes everything through in off mode", () => {
    const input = text(JSON.stringify(USERS, null, 2));
    expect(compressResult(input, "off")).toBe(input);
  });

  it("emits compact JSON in json mode", () => {
    expect(only(compressResult(text(JSON.stringify(USERS, null, 2)), "json"))).toBe(
      JSON.stringify(USERS),
    );
  });

  it("does not mutate the input", () => {
    const input: ToolResult = {
      content: [
        { type: "text", text: JSON.stringify(USERS, null, 2) },
        { type: "text", text: "note" },
      ],
      structuredContent: { users: USERS },
    };
    const before = structuredClone(input);
    const out = compressResult(input, "auto");
    expect(out).not.toBe(input);
    expect(input).toEqual(before);
  });

  it("does not round integers past 2^53: such JSON is only minified", () => {
    const raw = '{\n  "id": 1234567890123456789012,\n  "name": "a b"\n}';
    for (const mode of ["auto", "toon", "json"] as const) {
      expect(only(compressResult(text(raw), mode))).toBe(
        '{"id":1234567890123456789012,"name":"a b"}',
      );
    }
  });

  it("never returns more (estimated) tokens than compact JSON in auto mode", () => {
    const samples: unknown[] = [
      USERS,
      ISSUE,
      { a: [1, 2, 3] },
      [[1, 2], [3]],
      { nested: { deep: { x: [USERS[0]] } } },
      [],
    ];
    for (const sample of samples) {
      const out = only(compressResult(text(JSON.stringify(sample)), "auto"));
      expect(estimateTokens(out)).toBeLessThanOrEqual(estimateTokens(JSON.stringify(sample)));
      expect(countTokens(out).length).toBeLessThanOrEqual(
        countTokens(JSON.stringify(sample)).length,
      );
    }
  });
});

describe("estimateTokens", () => {
  it("ranks TOON against JSON as o200k does on typical payloads", () => {
    const samples: unknown[] = [
      USERS,
      ISSUE,
      { list: USERS.slice(0, 3), meta: { page: 1, total: 3 } },
    ];
    for (const sample of samples) {
      const json = JSON.stringify(sample);
      const toon = compressResult(text(json), "toon").content[0]!.text as string;
      const estimate = estimateTokens(toon) < estimateTokens(json);
      const real = countTokens(toon).length < countTokens(json).length;
      expect(estimate).toBe(real);
    }
  });
});
