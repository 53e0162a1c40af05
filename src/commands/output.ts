/** How commands talk to the user: one line of what is wrong plus one of how to fix it; progress on a terminal. */
import { createLogger } from "../logger.js";

/** Print an error as two lines on stderr and return the exit code to use. */
export function fail(code: number, what: string, fix?: string): number {
  process.stderr.write(`mcpx: ${what}\n${fix ? `  ${fix}\n` : ""}`);
  return code;
}

/** A function that replaces every secret (env values, header values, tokens) with `***`. */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const logger = createLogger({ level: "silent", write: () => {} });
  logger.addSecrets(secrets);
  return (text) => logger.redact(text);
}

export interface Progress {
  /** One more step is done (`what` finished). */
  step(what: string): void;
  /** Clear the progress line. */
  done(): void;
}

/**
 * "connecting 3/16: github" on one line of stderr, rewritten in place; nothing at all when stderr
 * is not a terminal (CI logs, pipes), so output stays the same for scripts.
 */
export function progress(
  label: string,
  total: number,
  stream: Pick<NodeJS.WriteStream, "isTTY" | "columns" | "write"> = process.stderr,
): Progress {
  if (!stream.isTTY || total === 0) return { step: () => {}, done: () => {} };
  let count = 0;
  const draw = (what: string) => {
    const line = `${label} ${count}/${total}${what ? `: ${what}` : ""}`;
    stream.write(`\r\x1b[2K${line.slice(0, (stream.columns || 80) - 1)}`);
  };
  draw("");
  return {
    step: (what) => {
      count += 1;
      draw(what);
    },
    done: () => stream.write("\r\x1b[2K"),
  };
}

/** `1234` → "1,234". */
export function int(n: number): string {
  return n.toLocaleString("en-US");
}
