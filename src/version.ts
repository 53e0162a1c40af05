import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const readVersion = (): string =>
  (
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    }
  ).version;

/** The package version, read once from package.json (one level above src/ and dist/). */
export const VERSION: string = readVersion();

/**
 * The version installed now, read again: an upgrade may have replaced the package since this
 * process started ({@link VERSION} is what it runs). {@link VERSION} when it cannot be read.
 */
export function installedVersion(): string {
  try {
    return readVersion();
  } catch {
    return VERSION;
  }
}

/**
 * Where the example config shipped with mcpx is: in the installed package (or the clone), so a
 * message can name a path that exists wherever mcpx runs from.
 */
export const EXAMPLE_CONFIG: string = fileURLToPath(
  new URL("../examples/npx.json", import.meta.url),
);
