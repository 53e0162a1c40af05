/**
 * Building one server entry of a client's file into mcpx's terms, and naming servers as mcpx
 * needs them. The format modules say what each of their keys means; this file does the rest.
 */
import path from "node:path";
import { hasVariables } from "../expand.js";
import { formatPath, type KeyPath } from "../issues.js";
import { SERVER_KEYS, SERVER_NAME } from "../schema.js";
import type { ConvertContext, SourceEntry } from "./types.js";
import { toMcpxSyntax, VariableError, type Syntax } from "./variables.js";
import { isRecord } from "../../json.js";

/** Client keys whose values are sent to a remote host (URLs, and headers with their values). */
const REMOTE_KEYS = new Set(["url", "httpUrl", "serverUrl", "headers"]);

/** How the builder treats one client key. */
export type KeyRule =
  /** Copy as it is, variables rewritten to mcpx syntax. */
  | { kind: "copy"; to?: string }
  /** A path: variables rewritten, then made absolute against the project folder. */
  | { kind: "path"; to?: string }
  /** No mcpx equivalent that matters to running the server: left out, with a note. */
  | { kind: "drop"; why: string }
  /** mcpx cannot run the server as the client would (OAuth, a sandbox): the entry stays behind. */
  | { kind: "unsupported"; why: string }
  /** Handled by the format itself. */
  | { kind: "custom" };

/** Builds one entry; format modules call `apply` for their keys and `set` for what they map. */
export class EntryBuilder {
  readonly server: Record<string, unknown> = {};
  readonly dropped: Record<string, string> = {};
  readonly problems: string[] = [];
  private unsupported: string | undefined;

  constructor(
    readonly name: string,
    readonly at: KeyPath,
    private readonly syntax: Syntax,
    private readonly ctx: ConvertContext,
    /** Folder relative `cwd` and `envFile` values are relative to. */
    private readonly base: string,
  ) {}

  /** Apply `rules` to every key of `raw`; keys with no rule are mcpx's own or unknown. */
  apply(raw: Record<string, unknown>, rules: Readonly<Record<string, KeyRule>>): void {
    for (const [key, value] of Object.entries(raw)) {
      const rule = rules[key] ?? (SERVER_KEYS.includes(key) ? { kind: "copy" } : undefined);
      if (rule === undefined) {
        this.drop(key, "not a key this client or mcpx knows");
        continue;
      }
      switch (rule.kind) {
        case "copy":
          this.set(rule.to ?? key, this.translate(value, key));
          break;
        case "path":
          this.setPath(rule.to ?? key, value, key);
          break;
        case "drop":
          this.drop(key, rule.why);
          break;
        case "unsupported":
          this.refuse(`${key}: ${rule.why}`);
          break;
        case "custom":
          break;
        default:
          rule satisfies never;
      }
    }
  }

  set(key: string, value: unknown): void {
    if (value !== undefined) this.server[key] = value;
  }

  /** A path value, absolute against the project folder (mcpx would take the config file's). */
  setPath(key: string, value: unknown, from = key): void {
    const text = this.translate(value, from);
    if (typeof text !== "string") {
      this.set(key, text);
      return;
    }
    if (key === "cwd" && hasVariables(text)) {
      this.problems.push(
        `${this.keyAt(from)}: environment variables are not supported in a working directory. Write the path.`,
      );
      return;
    }
    this.set(
      key,
      path.isAbsolute(text) || hasVariables(text) ? text : path.resolve(this.base, text),
    );
  }

  /** A tool filter from the client's own keys (exact tool names; exclude wins). */
  setToolFilter(include: unknown, exclude: unknown): void {
    if (include === undefined && exclude === undefined) return;
    this.set("tools", {
      ...(include !== undefined && { include }),
      ...(exclude !== undefined && { exclude }),
    });
  }

  drop(key: string, why: string): void {
    this.dropped[key] = why;
  }

  refuse(why: string): void {
    this.unsupported ??= why;
  }

  /** Strings (also inside arrays and objects) rewritten into mcpx variable syntax. */
  translate(value: unknown, key: string | number, at: KeyPath = []): unknown {
    const here = [...at, key];
    if (typeof value === "string") {
      try {
        const remote = this.ctx.untrusted === true && REMOTE_KEYS.has(String(here[0]));
        return toMcpxSyntax(value, this.syntax, this.ctx, { remote });
      } catch (err) {
        if (!(err instanceof VariableError)) throw err;
        this.problems.push(`${this.keyAt(...here)}: ${err.message}`);
        return value;
      }
    }
    if (Array.isArray(value)) return value.map((v, i) => this.translate(v, i, here));
    if (isRecord(value)) {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, this.translate(v, k, here)]),
      );
    }
    return value;
  }

  keyAt(...keys: (string | number)[]): string {
    return formatPath([...this.at, ...keys]);
  }

  done(): SourceEntry {
    return {
      name: this.name,
      at: this.at,
      server: this.unsupported === undefined ? this.server : { unsupported: this.unsupported },
      dropped: this.dropped,
      problems: this.problems,
    };
  }
}

/** A name mcpx accepts (letters, digits, `_`, `-`), distinct from every name in `taken`. */
export function mcpxName(name: string, taken: ReadonlySet<string>): string {
  if (SERVER_NAME.test(name) && !taken.has(name)) return name;
  const base = name.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "server";
  let candidate = base;
  for (let i = 2; taken.has(candidate); i++) candidate = `${base}-${i}`;
  return candidate;
}

/** The entries of an object of servers, each with its key path. */
export function serverObjects(
  servers: unknown,
  at: KeyPath,
): { name: string; at: KeyPath; raw: unknown }[] {
  if (!isRecord(servers)) return [];
  return Object.entries(servers).map(([name, raw]) => ({ name, at: [...at, name], raw }));
}

/** An entry that is not an object: kept as it is, so mcpx reports it where it is. */
export function notAnObject(name: string, at: KeyPath, raw: unknown): SourceEntry {
  return {
    name,
    at,
    server: raw as Record<string, unknown>,
    dropped: {},
    problems: [],
  };
}
