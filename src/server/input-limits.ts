/**
 * The limits of src/limits.ts that every meta-tool's input is held to before its handler runs,
 * on every transport: nesting depth, size as JSON, and the length of the names and text it
 * takes. What exceeds one is answered as an isError result naming the limit (the model reads it
 * and can send less), never passed on to an upstream.
 */
import { nestsDeeper } from "../json.js";
import { LIMITS, megabytes } from "../limits.js";

type Kind = "name" | "names" | "text";

/** The inputs of each meta-tool whose length is bounded, and how. */
const FIELDS: Record<string, Record<string, Kind>> = {
  describe: { method: "names", query: "text" },
  call: { method: "name", select: "text" },
  resources: { server: "name", uri: "text" },
};

/** `call` reads these as its method when `method` is absent (see executor/normalize.ts). */
const CALL_ALIASES = ["tool", "name"];

/** What is wrong with a meta-tool's arguments against the limits, or undefined when nothing. */
export function inputProblem(tool: string, args: Record<string, unknown>): string | undefined {
  if (nestsDeeper(args, LIMITS.argumentDepth)) {
    return `The arguments of ${tool} nest objects and arrays more than ${LIMITS.argumentDepth} levels deep, the most mcpx takes. Flatten them.`;
  }
  const bytes = Buffer.byteLength(JSON.stringify(args));
  if (bytes > LIMITS.argumentBytes) {
    return `The arguments of ${tool} are ${megabytes(bytes)} as JSON; mcpx takes at most ${megabytes(LIMITS.argumentBytes)}. Pass large content another way, e.g. as a file the server reads.`;
  }
  const fields = FIELDS[tool];
  for (const key in fields) {
    const problem = fieldProblem(tool, key, fields[key]!, args[key]);
    if (problem) return problem;
  }
  if (tool === "call" && (args.method === undefined || args.method === "")) {
    for (const alias of CALL_ALIASES) {
      const problem = fieldProblem(tool, alias, "name", args[alias]);
      if (problem) return problem;
    }
  }
  return undefined;
}

function fieldProblem(tool: string, key: string, kind: Kind, value: unknown): string | undefined {
  if (kind === "names" && Array.isArray(value)) {
    if (value.length > LIMITS.describeNames) {
      return `${tool} takes at most ${LIMITS.describeNames} names at once; "${key}" has ${value.length}. Split them over several calls.`;
    }
    return value.map((v) => fieldProblem(tool, key, "name", v)).find((p) => p !== undefined);
  }
  if (typeof value !== "string") return undefined;
  const max = kind === "text" ? LIMITS.textChars : LIMITS.nameChars;
  if (value.length <= max) return undefined;
  const what = kind === "text" ? "" : " (a server or tool name)";
  return `"${key}"${what} is ${value.length} characters long; ${tool} takes at most ${max}.`;
}
