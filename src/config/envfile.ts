/** `envFile` of a stdio server: a dotenv file whose variables the server gets. */
import { readFileSync } from "node:fs";
import { parse } from "dotenv";
import type { Findings } from "./issues.js";

/**
 * The variables of a dotenv file. A file that cannot be read is a problem at `at`, naming the
 * path (never a value). Every value is a secret.
 */
export function readEnvFile(file: string, at: string, found: Findings): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    found.problems.push(
      code === "ENOENT"
        ? `${at}: ${file} does not exist. Create it, or remove "envFile".`
        : `${at}: cannot read ${file} (${code ?? "unknown error"}). Check its permissions.`,
    );
    return {};
  }
  const vars = parse(text);
  found.secrets.push(...Object.values(vars));
  return vars;
}
