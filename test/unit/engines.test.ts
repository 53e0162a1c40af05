import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import semver from "semver";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL("package-lock.json", root), "utf8")) as {
  packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
};
const readme = readFileSync(new URL("README.md", root), "utf8");

describe("the Node version mcpx names", () => {
  const floor = semver.minVersion(pkg.engines.node)!;

  it("satisfies every runtime dependency's engines (npm install warns EBADENGINE otherwise)", () => {
    const refused: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (where === "" || entry.dev === true) continue;
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (node !== undefined && !semver.satisfies(floor, node))
        refused.push(`${where} wants ${node}`);
    }
    expect(refused).toEqual([]);
  });

  it("is the one README names", () => {
    expect(readme).toContain(`Node.js ${floor.version} or later`);
  });
});
