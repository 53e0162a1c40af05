/**
 * The script's text: the wrapper that makes it the body of an async function, TypeScript type
 * stripping, and mapping engine positions back to the script as the caller wrote it.
 */
import { createRequire } from "node:module";

/** The file name the script's frames carry in QuickJS stack traces. */
export const SCRIPT_FILE = "mcpx-script.js";

/**
 * The wrapper sits on lines of its own, so columns are the script's own and lines shift by one.
 * A script that closes the wrapper early only changes its own result: it is still sandboxed.
 */
const WRAP_BEFORE = "(async () => {\n";
const WRAP_AFTER = "\n})()";
const WRAP_LINES = 1;

/** The script as the body of an async arrow function, called at once. */
export function wrapScript(script: string): string {
  return WRAP_BEFORE + script + WRAP_AFTER;
}

/** A 1-based position in the script as given. */
export interface Position {
  line: number;
  column: number;
}

/** Maps a 1-based line and column of the wrapped text to the script's own, if inside it. */
export function scriptPosition(
  line: number,
  column: number,
  scriptLines: number,
): Position | undefined {
  const own = line - WRAP_LINES;
  return own >= 1 && own <= scriptLines ? { line: own, column } : undefined;
}

/** Lines in the script, for telling its positions from the wrapper's. */
export function lineCount(script: string): number {
  return script.split("\n").length;
}

const FRAME = new RegExp(`${SCRIPT_FILE.replace(/\./g, "\\.")}:(\\d+):(\\d+)`);

/**
 * The position of the innermost frame of a QuickJS stack that lies in the script (frames of the
 * bridge, of built-ins and of the wrapper are skipped), e.g. `    at f (mcpx-script.js:3:9)`.
 */
export function positionInStack(
  stack: string | undefined,
  scriptLines: number,
): Position | undefined {
  for (const frame of (stack ?? "").split("\n")) {
    const m = FRAME.exec(frame);
    const position = m && scriptPosition(Number(m[1]), Number(m[2]), scriptLines);
    if (position) return position;
  }
  return undefined;
}

/** What stripping types from the wrapped script gave. */
export type Stripped =
  | { ok: true; code: string }
  | { ok: false; message: string; unsupported: boolean; position?: Position };

/** The shape of swc's errors (`SwcError`), checked before use. */
interface SwcError {
  code: string;
  message: string;
  startLine: number;
  startColumn: number;
}

function isSwcError(err: unknown): err is SwcError {
  const e = err as Partial<SwcError> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.code === "string" &&
    typeof e.message === "string" &&
    typeof e.startLine === "number" &&
    typeof e.startColumn === "number"
  );
}

type Transform = (source: string, options: { mode: "strip-only" }) => { code: string };

/**
 * Strips TypeScript types from wrapped source with @swc/wasm-typescript (swc in WebAssembly, the
 * stripper Node itself bundles through amaro). Strip-only mode replaces each annotation with spaces, so every position in the
 * result is the position in the source: errors need no source map. It is loaded on the first
 * TypeScript script a worker sees (it costs ~100 ms and ~30 MB), never for plain JavaScript.
 */
export function createStripper(): (wrapped: string, scriptLines: number) => Stripped {
  let transform: Transform | undefined;
  return (wrapped, scriptLines) => {
    transform ??= (
      createRequire(import.meta.url)("@swc/wasm-typescript") as { transformSync: Transform }
    ).transformSync;
    try {
      return { ok: true, code: transform(wrapped, { mode: "strip-only" }).code };
    } catch (err) {
      if (!isSwcError(err)) throw err;
      // swc's lines are 1-based, its columns 0-based.
      const position = scriptPosition(err.startLine, err.startColumn + 1, scriptLines);
      return {
        ok: false,
        message: err.message,
        unsupported: err.code === "UnsupportedSyntax",
        ...(position && { position }),
      };
    }
  };
}
