import { appendFileSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import type { LogFileSettings } from "./config/load.js";

/**
 * A log sink that appends to a file and rotates by size: `file` → `file.1` → … → `file.N`,
 * the oldest dropped. Synchronous on purpose: log volume is small, and a line written before
 * a crash or exit is never lost in a buffer. Failures never reach the caller (logging must not
 * take the proxy down); they are reported once through `onError`.
 */
export function fileSink(
  settings: LogFileSettings,
  onError: (message: string) => void,
): (line: string) => void {
  let size = 0;
  let failed = false;
  try {
    mkdirSync(path.dirname(settings.file), { recursive: true });
    size = statSync(settings.file).size;
  } catch {
    // No file yet: it is created on the first line.
  }
  const rotate = () => {
    rmSync(`${settings.file}.${settings.maxFiles}`, { force: true });
    for (let i = settings.maxFiles - 1; i >= 1; i--) {
      try {
        renameSync(`${settings.file}.${i}`, `${settings.file}.${i + 1}`);
      } catch {
        // That generation does not exist yet.
      }
    }
    renameSync(settings.file, `${settings.file}.1`);
    size = 0;
  };
  return (line) => {
    try {
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > settings.maxBytes) rotate();
      appendFileSync(settings.file, line);
      size += bytes;
      failed = false;
    } catch (err) {
      if (!failed) onError(`cannot write log file ${settings.file}: ${(err as Error).message}`);
      failed = true;
    }
  };
}
