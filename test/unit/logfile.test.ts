import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSink } from "../../src/logfile.js";
import { createLogger, stderrSink } from "../../src/logger.js";
import { StderrRing } from "../../src/registry/stderr.js";
import { tempDir } from "../helpers/proxy.js";
import { Writable } from "node:stream";

describe("log file", () => {
  it("rotates by size and keeps maxFiles generations", () => {
    const file = path.join(tempDir(), "logs", "mcpx.log");
    const errors: string[] = [];
    const write = fileSink({ file, maxBytes: 100, maxFiles: 2 }, (m) => errors.push(m));
    for (let i = 0; i < 12; i++) write(`line ${String(i).padStart(2, "0")} ${"x".repeat(30)}\n`);
    expect(errors).toEqual([]);
    const current = readFileSync(file, "utf8");
    expect(current).toContain("line 11");
    expect(Buffer.byteLength(current)).toBeLessThanOrEqual(100);
    expect(readFileSync(`${file}.1`, "utf8")).toContain("line 08");
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
  });

  it("reports a file it cannot write once, without throwing", () => {
    const errors: string[] = [];
    // A path under a regular file: no directory can be made there.
    const blocker = path.join(tempDir(), "a-file");
    writeFileSync(blocker, "");
    const write = fileSink(
      { file: path.join(blocker, "x.log"), maxBytes: 1000, maxFiles: 1 },
      (m) => errors.push(m),
    );
    write("a\n");
    write("b\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("cannot write log file");
  });

  it("redacts secrets in the file too (the logger redacts before any sink)", () => {
    const file = path.join(tempDir(), "mcpx.log");
    const log = createLogger({
      write: fileSink({ file, maxBytes: 10_000, maxFiles: 1 }, () => {}),
    });
    log.addSecrets(["tok-123456"]);
    log.info("header was tok-123456");
    expect(readFileSync(file, "utf8")).toContain("header was ***");
  });
});

describe("bounded output", () => {
  it("drops and counts lines while stderr is not drained, and says so once it is", () => {
    // A stream whose reader never reads: nothing completes until we say so.
    const written: string[] = [];
    const pending: (() => void)[] = [];
    const stream = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _enc, done) {
        written.push(chunk.toString());
        pending.push(done);
      },
    });
    const write = stderrSink(stream, 64);
    for (let i = 0; i < 50; i++) write(`line ${i} ${"y".repeat(20)}\n`);
    // Only what fits in 64 bytes (plus one line) was queued; the rest was dropped, not buffered.
    expect(stream.writableLength).toBeLessThan(200);
    pending.splice(0).forEach((done) => done());
    while (pending.length > 0) pending.splice(0).forEach((done) => done());
    write("after\n");
    pending.splice(0).forEach((done) => done());
    const out = written.join("");
    expect(out).toMatch(/WARN mcpx: \d+ log lines dropped/);
    expect(out).toContain("after");
    expect(written.filter((w) => w.startsWith("line ")).length).toBeLessThan(10);
  });

  it("keeps the last N stderr lines of an upstream and counts the rest", () => {
    const ring = new StderrRing(3);
    for (let i = 1; i <= 10; i++) ring.push(`l${i}`);
    expect(ring.tail()).toEqual(["l8", "l9", "l10"]);
    expect(ring.counts()).toEqual({ total: 10, dropped: 7 });
  });
});
