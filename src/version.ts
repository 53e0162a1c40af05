import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The package version, read once from package.json (one level above src/ and dist/). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

/**
 * Where the example config shipped with mcpx is: in the installed package (or the clone), so a
 * message can name a path that exists wherever mcpx runs from.
 */
export const EXAMPLE_CONFIG: string = fileURLToPath(
  new URL("../examples/npx.json", import.meta.url),
);
