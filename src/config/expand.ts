/**
 * `${VAR}` and `${VAR:-default}` expansion, as Claude Code does it in .mcp.json
 * (command, args, env, url, headers). An unset variable without a default is an error that names
 * the variable, never a value. `$${` is a literal `${` (how a file imported from a client that
 * does not expand variables keeps its text as it was).
 */

const PATTERN = /\$\$\{|\$\{([^}:]+)(?::-([^}]*))?\}/g;

export class MissingVariableError extends Error {
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set`);
    this.name = new.target.name;
  }
}

/** The expanded text and the environment values it took (secrets: they must never be logged). */
export interface Expansion {
  text: string;
  /** Non-empty values taken from the environment; defaults written in the config are not here. */
  values: string[];
}

/** Expand every `${...}` in `text` from `env`, saying which values came from it. Throws MissingVariableError. */
export function expandTracked(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): Expansion {
  const values: string[] = [];
  const expanded = text.replace(
    PATTERN,
    (match, name: string | undefined, fallback: string | undefined) => {
      if (name === undefined) return "${"; // `$${`: an escaped, literal `${`
      const value = env[name];
      if (value !== undefined && value !== "") {
        values.push(value);
        return value;
      }
      if (fallback !== undefined) return fallback;
      if (value !== undefined) return value;
      throw new MissingVariableError(name);
    },
  );
  return { text: expanded, values };
}

/** Expand every `${...}` in `text` from `env`. Throws MissingVariableError. */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return expandTracked(text, env).text;
}

/** Whether `text` refers to any variable (an escaped `$${` does not count). */
export function hasVariables(text: string): boolean {
  return [...text.matchAll(PATTERN)].some((m) => m[1] !== undefined);
}

/** `text` as a literal in mcpx syntax: every `${` escaped, so nothing in it expands. */
export function escapeLiteral(text: string): string {
  return text.replaceAll("${", () => "$${");
}
