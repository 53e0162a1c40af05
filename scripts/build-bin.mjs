/**
 * Bundles the package's bin, `dist/mcpx.cjs` (src/daemon/launch.ts): one CommonJS file of Node
 * built-ins, so a client's `--daemon` entry starts the shim without the ES module loader or any
 * dependency; every other command line imports `dist/index.js`. Run by `npm run build` after tsc.
 */
import { chmodSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.join(root, "dist/mcpx.cjs");
await build({
  stdin: {
    contents: `import { launch } from "./src/daemon/launch.ts";\nvoid launch(process.argv.slice(2), () => import("./index.js"));\n`,
    resolveDir: root,
    sourcefile: "mcpx-bin.ts",
    loader: "ts",
  },
  outfile,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Resolved beside the bundle at run time: the full CLI, loaded only when it is not the shim.
  external: ["./index.js"],
  // version.ts finds package.json from its own URL; in the bundle that is the bundle's.
  banner: {
    js: '#!/usr/bin/env node\nconst __mcpxUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  define: { "import.meta.url": "__mcpxUrl" },
  logLevel: "warning",
});
chmodSync(outfile, 0o755);
process.stderr.write(`bin: dist/mcpx.cjs ${statSync(outfile).size} B\n`);
