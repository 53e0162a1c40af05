/**
 * Each client's variable syntax, rewritten into mcpx's (`${VAR}`, `${VAR:-default}`, `$${` for a
 * literal `${`). Variables that name the environment stay references, so an imported file keeps
 * no secret the source did not hold; variables about places (`${userHome}`, `${workspaceFolder}`)
 * are resolved, since mcpx has no such names.
 */
import path from "node:path";
import { escapeLiteral } from "../expand.js";

/** A variable this client has but mcpx cannot honour; `message` says which and why. */
export class VariableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface Places {
  home: string;
  /** `${workspaceFolder}`: the project folder. */
  project: string;
}

/**
 * claude: Claude Code's `${VAR}` / `${VAR:-default}`, which is mcpx's own.
 * literal: no expansion at all (Claude Desktop, Codex): every `${` stays text.
 * vscode: VS Code and Cursor: `${env:NAME}`, `${input:id}`, `${userHome}`, `${workspaceFolder}`, …
 * gemini: Gemini CLI: `$NAME` and `${NAME}`.
 */
export type Syntax = "claude" | "literal" | "vscode" | "gemini";

/** The environment variable a VS Code `${input:id}` is read from: `MCPX_INPUT_<ID>`. */
export function inputVariable(id: string): string {
  return `MCPX_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * Where a value goes: `remote` (a URL or header of an untrusted file, sent to a host the file
 * chose) refuses the variables that resolve to local paths, which would tell that host the
 * user's name and folders.
 */
export interface Destination {
  remote?: boolean;
}

/** `text` in mcpx syntax. Throws VariableError for a variable mcpx cannot honour. */
export function toMcpxSyntax(
  text: string,
  syntax: Syntax,
  places: Places,
  to: Destination = {},
): string {
  switch (syntax) {
    case "claude":
      return text;
    case "literal":
      return escapeLiteral(text);
    case "vscode":
      return text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
        if (to.remote && PLACES.has(name)) {
          throw new VariableError(
            `\${${name}} is refused: it is a path on this machine, and an untrusted config may not send local paths to a remote host. Write the value, or run without --untrusted if you trust the file.`,
          );
        }
        return vscodeVariable(name, places);
      });
    case "gemini":
      return text.replace(
        /\$(?:([A-Za-z_]\w*)|\{([^}]+)\})/g,
        (match, bare: string | undefined, braced: string | undefined) => {
          const name = bare ?? braced ?? "";
          // Gemini leaves what is not a variable name as it is; so do we, as literal text.
          return /^[A-Za-z_]\w*$/.test(name) ? `\${${name}}` : escapeLiteral(match);
        },
      );
    default:
      return syntax satisfies never;
  }
}

/** The variables that resolve to a path on this machine (or part of one). */
const PLACES = new Set(["userHome", "workspaceFolder", "cwd", "workspaceFolderBasename"]);

/** Places resolved now; environment and inputs kept as references. */
function vscodeVariable(name: string, places: Places): string {
  const colon = name.indexOf(":");
  if (colon > 0) {
    const [kind, arg] = [name.slice(0, colon), name.slice(colon + 1)];
    if (kind === "env" && /^[A-Za-z_]\w*$/.test(arg)) return `\${${arg}}`;
    if (kind === "input" && arg !== "") return `\${${inputVariable(arg)}}`;
    throw new VariableError(
      `\${${name}} is not supported by mcpx (it supports \${env:NAME}, \${input:id}, \${userHome}, \${workspaceFolder}, \${workspaceFolderBasename}, \${pathSeparator}). Replace it with a value or \${env:NAME}.`,
    );
  }
  switch (name) {
    case "userHome":
      return escapeLiteral(places.home);
    case "workspaceFolder":
    case "cwd":
      return escapeLiteral(places.project);
    case "workspaceFolderBasename":
      return escapeLiteral(path.basename(places.project));
    case "pathSeparator":
    case "/":
      return path.sep;
    default:
      throw new VariableError(
        `\${${name}} is not a variable mcpx knows (it supports \${env:NAME}, \${input:id}, \${userHome}, \${workspaceFolder}, \${workspaceFolderBasename}, \${pathSeparator}). Replace it with a value or \${env:NAME}.`,
      );
  }
}
