/** The word diff `mcpx trust diff` prints and the dashboard shows (src/registry/trust-diff.ts). */
import { describe, expect, it } from "vitest";
import { pendingChanges, plainWordDiff, statusText } from "../../src/registry/trust-diff.js";
import { emptyEntry } from "../../src/registry/trust-store.js";

const compile = (schema: unknown, name: string) =>
  Promise.resolve(`interface ${name} ${JSON.stringify(schema)}`);

describe("pending changes", () => {
  it("diffs a changed tool, lists a new one and a removed one, and only the one named", async () => {
    const entry = emptyEntry("k", "s");
    entry.pinned.tools = { add: { hash: "h1" }, gone: { hash: "h3" } };
    entry.pending.tools = { add: { hash: "h2" }, fresh: { hash: "h4" }, gone: { removed: true } };
    const defs = {
      h1: { name: "add", description: "Add two numbers.", inputSchema: {} },
      h2: { name: "add", description: "Add two numbers quietly.", inputSchema: {} },
      h4: { name: "fresh", description: "New\u200b tool.", inputSchema: {} },
    };
    const all = await pendingChanges(entry, defs, undefined, compile);
    expect(all.map((c) => [c.name, c.status])).toEqual([
      ["add", "changed"],
      ["fresh", "unapproved"],
      ["gone", "removed"],
    ]);
    expect(plainWordDiff(all[0]!.diff)).toBe(
      "Add two numbers {+quietly+}.\ninput: interface Input {}",
    );
    // Invisible characters are escaped, as describe shows them.
    expect(plainWordDiff(all[1]!.diff)).not.toContain("\u200b");
    expect(all[2]!.diff.every((p) => p.removed)).toBe(true);
    expect((await pendingChanges(entry, defs, "add", compile)).map((c) => c.name)).toEqual(["add"]);
    expect(statusText("unapproved")).toBe("not approved yet");
  });

  it("says so when a definition was not kept (it quoted a secret)", async () => {
    const entry = emptyEntry("k", "s");
    entry.pending.tools = { add: { hash: "h9" } };
    const [c] = await pendingChanges(entry, {}, undefined, compile);
    expect(plainWordDiff(c!.diff)).toContain("definition not kept");
  });
});
