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

/** Expand every `${...}` in `text` from `env`. Throws MissingVariableError. */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return text.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    if (value !== undefined) return value;
    throw new MissingVariableError(name);
  });
}
