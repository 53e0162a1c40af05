/**
 * The only place that writes logs. Everything goes to stderr (or an injected sink): in stdio mode
 * stdout carries JSON-RPC and nothing else.
 */

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** One line as written, handed to taps: already redacted. */
export interface LogLine {
  /** ms since epoch. */
  time: number;
  level: Exclude<LogLevel, "silent">;
  /** The child logger's tag: an upstream's name, `health`, `memory/…`; none for mcpx itself. */
  tag?: string;
  /** The message and its fields, redacted, without time, level or tag. */
  text: string;
  /** The call's caller, when the line is about one call (so a page can show each caller its own). */
  caller?: string;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line at `level` is written: a line built per call is built only then. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
  /** A logger whose lines carry `tag` (e.g. the upstream server name). */
  child(tag: string): Logger;
  /** Register values that must never appear in output (env values, header values, tokens). */
  addSecrets(values: Iterable<string>): void;
  /** `text` with every registered secret replaced by `***` (for errors shown outside logs). */
  redact(text: string): string;
  /**
   * Also hand every line written from now on (at the logger's level) to `listener`, synchronously;
   * returns how to stop. The logger keeps nothing for taps: a listener bounds what it keeps, and
   * what it logs itself while handling a line is not tapped again.
   */
  tap(listener: (line: LogLine) => void): () => void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; defaults to stderr without ever buffering without bound (stderrSink). */
  write?: (line: string) => void;
}

/**
 * Write to stderr, but never let a reader that does not drain it (a client that ignores our
 * stderr) grow memory without bound: past `maxBuffered` bytes waiting, lines are dropped and
 * counted, and the count is written once the pipe drains.
 */
export function stderrSink(
  stream: NodeJS.WritableStream & { writableLength: number } = process.stderr,
  maxBuffered = 1024 * 1024,
): (line: string) => void {
  let dropped = 0;
  return (line) => {
    if (stream.writableLength > maxBuffered) {
      dropped += 1;
      return;
    }
    if (dropped > 0) {
      stream.write(
        `${new Date().toISOString()} WARN mcpx: ${dropped} log lines dropped (stderr was not being read)\n`,
      );
      dropped = 0;
    }
    stream.write(line);
  };
}

/** How long an exit waits for stdout and stderr to take what was written to them. */
export const EXIT_DRAIN_MS = 2_000;

/**
 * Resolve once `streams` have handed every queued byte to the OS, or after `ms`. A pipe whose
 * reader is slow takes writes only as it reads, and `process.exit()` drops what is still queued:
 * the last log lines, or the last answers on stdio. A reader that stopped reading does not hold
 * the exit past `ms`.
 */
export async function drained(
  streams: readonly (NodeJS.WritableStream & { writableLength: number })[],
  ms = EXIT_DRAIN_MS,
): Promise<void> {
  const waiting = streams.filter((s) => s.writableLength > 0);
  if (waiting.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(waiting.map((s) => new Promise((resolve) => s.once("drain", resolve)))),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** Secrets shorter than this are too likely to be common words to redact safely. */
const MIN_SECRET_LENGTH = 4;

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? "info";
  const write = options.write ?? stderrSink();
  const secrets = new Set<string>();
  const taps = new Set<(line: LogLine) => void>();
  let tapping = false;

  // Longest first, so a secret that contains another is hidden whole; each also in its
  // JSON-escaped form, since fields are serialized before redaction.
  let patterns: string[] = [];
  const redact = (text: string): string => {
    let out = text;
    for (const s of patterns) if (out.includes(s)) out = out.split(s).join("***");
    return out;
  };

  const make = (tag: string | undefined): Logger => {
    const emit = (
      lvl: Exclude<LogLevel, "silent">,
      msg: string,
      fields?: Record<string, unknown>,
    ) => {
      if (RANK[lvl] < RANK[level]) return;
      const time = Date.now();
      const body = fields && Object.keys(fields).length > 0 ? `${msg} ${safeJson(fields)}` : msg;
      const line = `${new Date(time).toISOString()} ${lvl.toUpperCase()} ${tag ? `[${tag}] ` : ""}${body}`;
      write(redact(line) + "\n");
      if (taps.size > 0 && !tapping) {
        tapping = true;
        const caller = fields?.caller;
        const tapped: LogLine = {
          time,
          level: lvl,
          ...(tag !== undefined && { tag }),
          text: redact(body),
          ...(typeof caller === "string" && { caller }),
        };
        try {
          for (const t of taps) t(tapped);
        } catch {
          // A tap's failure must not break logging, nor the code that logged.
        } finally {
          tapping = false;
        }
      }
    };
    return {
      debug: (m, f) => emit("debug", m, f),
      info: (m, f) => emit("info", m, f),
      warn: (m, f) => emit("warn", m, f),
      error: (m, f) => emit("error", m, f),
      enabled: (lvl) => RANK[lvl] >= RANK[level],
      child: (t) => make(tag ? `${tag}/${t}` : t),
      redact,
      tap: (listener) => {
        taps.add(listener);
        return () => taps.delete(listener);
      },
      addSecrets: (values) => {
        for (const v of values) {
          if (v.length < MIN_SECRET_LENGTH) continue;
          secrets.add(v);
          secrets.add(JSON.stringify(v).slice(1, -1));
        }
        patterns = [...secrets].sort((a, b) => b.length - a.length);
      },
    };
  };
  return make(undefined);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (v instanceof Error ? v.message : v));
  } catch {
    // Circular or exotic values: a log line must never throw.
    return "[unserializable]";
  }
}
