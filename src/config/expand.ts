/**
 * `${VAR}` and `${VAR:-default}` expansion, as Claude Code does it in .mcp.json
 * (command, args, env, url, headers). An unset variable without a default is an error that names
 * the variable, never a value.
 */

const PATTERN = /\$\{([^}:]+)(?::-([^}]*))?\}/g;

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
  const expanded = text.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") {
      values.push(value);
      return value;
    }
    if (fallback !== undefined) return fallback;
    if (value !== undefined) return value;
    throw new MissingVariableError(name);
  });
  return { text: expanded, values };
}

/** Expand every `${...}` in `text` from `env`. Throws MissingVariableError. */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return expandTracked(text, env).text;
}
