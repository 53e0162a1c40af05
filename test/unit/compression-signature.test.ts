import { describe, expect, it } from "vitest";

import { firstSentence, signature } from "../../src/compression/signature.js";

describe("signature", () => {
  it("lists required params first, in schema order, then optional ones with ?", () => {
    const schema = {
      type: "object",
      properties: { body: {}, owner: {}, labels: {}, repo: {}, title: {} },
      required: ["owner", "repo", "title"],
    };
    expect(signature("create_issue", schema)).toBe(
      "create_issue(owner, repo, title, body?, labels?)",
    );
  });

  it("shows a required param with a default as optional (the server fills it)", () => {
    expect(
      signature("shot", {
        type: "object",
        properties: { scale: { type: "string", default: "css" }, url: { type: "string" } },
        required: ["scale", "url"],
      }),
    ).toBe("shot(url: string, scale?: string)");
  });

  it("handles schemas without properties or required", () => {
    expect(signature("get_me", { type: "object" })).toBe("get_me()");
    expect(signature("get_me", { type: "object", properties: {} })).toBe("get_me()");
    expect(signature("f", { type: "object", properties: { a: {} } })).toBe("f(a?)");
    expect(signature("f", { properties: { a: {} }, required: "a" })).toBe("f(a?)");
  });
});

describe("signature types", () => {
  it("shows short scalar types and arrays of them, not objects, unions or enums", () => {
    const schema = {
      type: "object",
      properties: {
        message: { type: "string" },
        count: { type: "integer" },
        ratio: { type: "number" },
        draft: { type: "boolean" },
        labels: { type: "array", items: { type: "string" } },
        state: { type: "string", enum: ["open", "closed"] },
        opts: { type: "object", properties: { a: { type: "string" } } },
        either: { anyOf: [{ type: "string" }, { type: "null" }] },
        grid: { type: "array", items: { type: "array", items: { type: "number" } } },
      },
      required: ["message"],
    };
    expect(signature("f", schema)).toBe(
      "f(message: string, count?: int, ratio?: number, draft?: boolean, labels?: string[], state?, opts?, either?, grid?: number[][])",
    );
    expect(
      signature("echo", {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
      }),
    ).toBe("echo(message: string)");
  });
});

describe("firstSentence", () => {
  it("returns the first sentence, whitespace-collapsed", () => {
    expect(
      firstSentence(
        "Tools for listing GitHub Actions resources.\nUse this tool to list workflows.",
      ),
    ).toBe("Tools for listing GitHub Actions resources.");
    expect(firstSentence("  Get   details\n of a file.  More text.")).toBe(
      "Get details of a file.",
    );
  });

  it("does not cut at abbreviations or file names", () => {
    expect(firstSentence("Provide a file name (e.g. ci.yaml) to filter. Then more.")).toBe(
      "Provide a file name (e.g. ci.yaml) to filter.",
    );
  });

  it("ends at a blank line when the first paragraph has no full stop", () => {
    expect(firstSentence("List branches\n\nReturns a page of branches.")).toBe("List branches");
  });

  it("truncates long sentences at a word boundary with an ellipsis", () => {
    const long = `${"word ".repeat(60)}end.`;
    const out = firstSentence(long);
    expect(out.length).toBeLessThanOrEqual(120);
    expect(out.endsWith("word…")).toBe(true);
    expect(firstSentence(long, 20)).toBe("word word word word…");
  });

  it("returns an empty string for no description", () => {
    expect(firstSentence(undefined)).toBe("");
    expect(firstSentence("   ")).toBe("");
  });
});
