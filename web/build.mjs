/**
 * Builds the dashboard page into dist/web: web/src bundled and minified by esbuild into one
 * script, the HTML and the stylesheet copied. Run by `npm run build` after tsc.
 */
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "../dist/web");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(here, "src/main.ts")],
  outfile: path.join(out, "app.js"),
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
});
for (const file of ["index.html", "app.css"])
  copyFileSync(path.join(here, file), path.join(out, file));
const size = (f) => statSync(path.join(out, f)).size;
process.stderr.write(
  `dashboard page: app.js ${size("app.js")} B, app.css ${size("app.css")} B, index.html ${size("index.html")} B\n`,
);
