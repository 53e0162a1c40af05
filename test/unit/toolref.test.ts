import { describe, expect, it } from "vitest";

import { formatToolRef, parseToolRef } from "../../src/registry/toolref.js";

describe("parseToolRef", () => {
  it("splits at the first dot: the server has none, the tool may have several", () => {
    expect(parseToolRef("github.create_issue")).toEqual({
      server: "github",
      tool: "create_issue",
    });
    expect(parseToolRef("a.b.c")).toEqual({ server: "a", tool: "b.c" });
    expect(parseToolRef("a..b")).toEqual({ server: "a", tool: ".b" });
  });

  it("keeps characters other than the dot as they are", () => {
    expect(parseToolRef("my-server_2.tool__with__underscores")).toEqual({
      server: "my-server_2",
      tool: "tool__with__underscores",
    });
  });

  it.each([
    ["no dot", "github"],
    ["leading dot", ".create_issue"],
    ["trailing dot", "github."],
    ["a lone dot", "."],
    ["empty string", ""],
  ])("returns undefined for %s (%j)", (_label, ref) => {
    expect(parseToolRef(ref)).toBeUndefined();
  });
});

describe("formatToolRef", () => {
  it("joins server and tool with a dot", () => {
    expect(formatToolRef({ server: "github", tool: "get_me" })).toBe("github.get_me");
  });

  it.each(["a.b", "a.b.c", "fs.read_file", "x-1.tool.with.dots"])(
    "round-trips %s through parse and format",
    (ref) => {
      const parsed = parseToolRef(ref);
      expect(parsed).toBeDefined();
      expect(formatToolRef(parsed!)).toBe(ref);
    },
  );

  it("round-trips a ref whose tool name contains dots, starting from data", () => {
    const ref = { server: "docs", tool: "v2.search.all" };
    expect(parseToolRef(formatToolRef(ref))).toEqual(ref);
  });
});
