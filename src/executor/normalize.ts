/**
 * The shapes of a `call` that models commonly produce, read the way they were meant when that is
 * unambiguous: `tool` or `name` for `method`, the tool's arguments at the top level instead of
 * inside `arguments`, `arguments` as a JSON string. Each reading is noted, for the answer's
 * `_meta` (the model's text stays the tool's own).
 */
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";

/** A `call` as the executor takes it. */
export interface CallInput {
  method: string;
  arguments: unknown;
  select?: string;
  /** What was read differently from the documented shape, e.g. "method from name". */
  notes: string[];
}

/** Keys `call` itself takes; every other top-level key is one of the tool's arguments. */
const OWN_KEYS = new Set(["method", "arguments", "select"]);
/** Names models use for `method`, in the order they are tried. */
const METHOD_ALIASES = ["tool", "name"] as const;

/** Read a `call`'s input, or say what is wrong with it and how to write it. */
export function normalizeCallInput(args: Record<string, unknown>): CallInput | { error: string } {
  const notes: string[] = [];
  let method = args.method;
  let alias: string | undefined;
  if (method === undefined || method === null || method === "") {
    alias = METHOD_ALIASES.find((k) => typeof args[k] === "string" && args[k] !== "");
    if (alias) {
      method = args[alias];
      notes.push(`method from ${alias}`);
    }
  }
  if (typeof method !== "string" || method === "") {
    return {
      error:
        '"method" is required: the tool to run as "server.tool" (describe() lists them), e.g. ' +
        'call({ method: "server.tool", arguments: { … } }).',
    };
  }
  const select = args.select;
  if (select !== undefined && (typeof select !== "string" || select.trim() === "")) {
    return {
      error: `"select" must be a JMESPath expression as a string, e.g. "items[].{id: id, title: title}"; got ${JSON.stringify(select)}.`,
    };
  }
  const extra = Object.keys(args).filter((k) => !OWN_KEYS.has(k) && k !== alias);
  if (extra.length === 0) {
    // One literal (a key added after a spread costs V8 a slow path).
    return {
      method,
      ...(select !== undefined && { select: select.trim() }),
      notes,
      arguments: args.arguments,
    };
  }
  const input = { method, ...(select !== undefined && { select: select.trim() }), notes };
  return withTopLevel(input, args, extra);
}

/** Move the tool's arguments written next to `method` into `arguments`, unless a key clashes. */
function withTopLevel(
  input: Omit<CallInput, "arguments">,
  args: Record<string, unknown>,
  extra: string[],
): CallInput | { error: string } {
  const top = Object.fromEntries(extra.map((k) => [k, args[k]]));
  const given = args.arguments;
  if (given === undefined || given === null || given === "") {
    input.notes.push("arguments from top level");
    return { ...input, arguments: top };
  }
  const parsed = parseArguments(given);
  if ("error" in parsed) return { error: parsed.error };
  const clash = extra.filter((k) => k in parsed.value);
  if (clash.length > 0) {
    return {
      error: `${clash.map((k) => `"${k}"`).join(", ")} given both at the top level and in "arguments". Put the tool's arguments in "arguments" only.`,
    };
  }
  if (parsed.fromString) input.notes.push("arguments from a JSON string");
  input.notes.push("arguments merged with top-level keys");
  return { ...input, arguments: { ...parsed.value, ...top } };
}

/** `arguments` may come as an object or, as models often send it, a JSON string. */
export function parseArguments(
  raw: unknown,
): { value: Record<string, unknown>; fromString: boolean } | { error: string } {
  if (raw === undefined || raw === null) return { value: {}, fromString: false };
  let value: unknown = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return { value: {}, fromString: false };
    try {
      value = JSON.parse(raw) as unknown;
    } catch (err) {
      return {
        error: `"arguments" is a string that is not valid JSON (${errorMessage(err)}). Pass an object.`,
      };
    }
  }
  if (!isRecord(value)) {
    return {
      error: `"arguments" must be an object of named parameters, not ${Array.isArray(value) ? "an array" : typeof value}.`,
    };
  }
  return { value: value, fromString: typeof raw === "string" };
}
