import { appendFileSync, chmodSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { appendFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { LogFileSettings } from "./config/load.js";

/**
 * Log files are readable by their owner only: lines are redacted, but what an upstream writes to
 * its stderr (and a secret mcpx never learned) lands there too. Applies to a file created later
 * (mode on create) and to one found at startup (chmod).
 */
const FILE_MODE = 0o600;
const APPEND = { mode: FILE_MODE } as const;

/** Bytes queued for the file before further lines are dropped (and counted). */
export const DEFAULT_MAX_QUEUED_BYTES = 8 * 1024 * 1024;

export interface FileSinkOptions {
  /** Bound on lines waiting for the disk; past it lines are dropped and the count logged. */
  maxQueuedBytes?: number;
}

/** A log file written in batches, off the event loop. */
export interface FileSink {
  /** Queue one line (ending in a newline). Does no file I/O itself and never throws. Bound. */
  readonly write: (line: string) => void;
  /** Resolves once every line queued so far is written, or its failure reported. */
  flush(): Promise<void>;
  /** Flush; lines written after this go to the file synchronously (nothing waits at exit). */
  close(): Promise<void>;
  /**
   * For a process "exit" handler: write the queued lines synchronously. A batch already being
   * written asynchronously completes only if the process lives long enough.
   */
  flushSync(): void;
}

/** One step of writing a batch: append text, or rotate the files first. */
type Step = { rotate: true } | { rotate: false; text: string };

/**
 * A log sink that appends to a file and rotates by size: `file` → `file.1` → … → `file.N`,
 * the oldest dropped. Lines are queued and written in one append per batch (everything logged
 * in one turn of the event loop), asynchronously: a chatty upstream's stderr never blocks the
 * proxy on disk I/O. Failures never reach the caller (logging must not take the proxy down);
 * they are reported once through `onError` until a write succeeds again.
 */
export function fileSink(
  settings: LogFileSettings,
  onError: (message: string) => void,
  options: FileSinkOptions = {},
): FileSink {
  return new BufferedLogFile(settings, onError, options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES);
}

class BufferedLogFile implements FileSink {
  private queue: string[] = [];
  private queuedBytes = 0;
  private dropped = 0;
  /** Bytes in the current file, counting what is being written. */
  private size = 0;
  private failed = false;
  private closed = false;
  private draining: Promise<void> | undefined;

  constructor(
    private readonly settings: LogFileSettings,
    private readonly onError: (message: string) => void,
    private readonly maxQueuedBytes: number,
  ) {
    try {
      mkdirSync(path.dirname(settings.file), { recursive: true });
      this.size = statSync(settings.file).size;
      chmodSync(settings.file, FILE_MODE);
    } catch {
      // No file yet: it is created on the first line.
    }
  }

  readonly write = (line: string): void => {
    if (this.queuedBytes > this.maxQueuedBytes) {
      this.dropped += 1;
      return;
    }
    this.queue.push(line);
    // Characters, not bytes: a bound, not an accounting.
    this.queuedBytes += line.length;
    // After close() nothing may wait in the queue, unless a batch is still going out (order).
    if (this.closed && !this.draining) this.flushSync();
    else this.draining ??= this.drain();
  };

  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  flushSync(): void {
    const steps = this.plan();
    try {
      for (const step of steps) {
        if (step.rotate) this.rotateSync();
        else appendFileSync(this.settings.file, step.text, APPEND);
      }
      this.failed = false;
    } catch (err) {
      this.fail(err);
    }
  }

  private async drain(): Promise<void> {
    try {
      // Let the current turn finish logging: a burst becomes one batch.
      await Promise.resolve();
      while (this.queue.length > 0 || this.dropped > 0) {
        try {
          for (const step of this.plan()) {
            if (step.rotate) await this.rotate();
            else await appendFile(this.settings.file, step.text, APPEND);
          }
          this.failed = false;
        } catch (err) {
          this.fail(err);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Take the queue and split it into appends, rotating before one that would pass maxBytes. */
  private plan(): Step[] {
    const lines = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.dropped > 0) {
      lines.push(
        `${new Date().toISOString()} WARN mcpx: ${this.dropped} log lines dropped (the log file could not keep up)\n`,
      );
      this.dropped = 0;
    }
    const steps: Step[] = [];
    let text = "";
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (this.size > 0 && this.size + bytes > this.settings.maxBytes) {
        if (text) steps.push({ rotate: false, text });
        steps.push({ rotate: true });
        text = "";
        this.size = 0;
      }
      text += line;
      this.size += bytes;
    }
    if (text) steps.push({ rotate: false, text });
    return steps;
  }

  private async rotate(): Promise<void> {
    const { file, maxFiles } = this.settings;
    await rm(`${file}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) {
      // A generation that does not exist yet has nothing to move.
      await rename(`${file}.${i}`, `${file}.${i + 1}`).catch(() => {});
    }
    await rename(file, `${file}.1`);
  }

  private rotateSync(): void {
    const { file, maxFiles } = this.settings;
    rmSync(`${file}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) {
      try {
        renameSync(`${file}.${i}`, `${file}.${i + 1}`);
      } catch {
        // That generation does not exist yet.
      }
    }
    renameSync(file, `${file}.1`);
  }

  private fail(err: unknown): void {
    if (!this.failed) {
      this.onError(`cannot write log file ${this.settings.file}: ${(err as Error).message}`);
    }
    this.failed = true;
  }
}
