import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileSink } from "../../src/logfile.js";
import { createLogger, stderrSink } from "../../src/logger.js";
import { StderrRing } from "../../src/upstream/stderr.js";
import { tempDir } from "../helpers/proxy.js";
import { Writable } from "node:stream";

describe("log file", () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("is readable by its owner only, created or found (lines from upstreams land there)", async () => {
    const d = dir();
    const fresh = path.join(d, "new.log");
    const found = path.join(d, "found.log");
    writeFileSync(found, "old line\n", { mode: 0o644 });
    chmodSync(found, 0o644);
    for (const file of [fresh, found]) {
      const sink = fileSink({ file, maxBytes: 40, maxFiles: 1 }, () => {});
      sink.write("a line long enough to rotate the file later\n");
      sink.write("another line\n");
      await sink.close();
      expect(statSync(file).mode & 0o777, file).toBe(0o600);
      expect(statSync(`${file}.1`).mode & 0o777, `${file}.1`).toBe(0o600);
    }
  });

  it("rotates by size and keeps maxFiles generations", async () => {
    const file = path.join(dir(), "logs", "mcpx.log");
    const errors: string[] = [];
    const sink = fileSink({ file, maxBytes: 100, maxFiles: 2 }, (m) => errors.push(m));
    for (let i = 0; i < 12; i++)
      sink.write(`line ${String(i).padStart(2, "0")} ${"x".repeat(30)}\n`);
    await sink.flush();
    expect(errors).toEqual([]);
    const current = readFileSync(file, "utf8");
    expect(current).toContain("line 11");
    expect(Buffer.byteLength(current)).toBeLessThanOrEqual(100);
    expect(readFileSync(`${file}.1`, "utf8")).toContain("line 08");
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
  });

  it("rotates across batches, counting the size of a file it found at startup", async () => {
    const file = path.join(dir(), "mcpx.log");
    writeFileSync(file, "x".repeat(90) + "\n");
    const sink = fileSink({ file, maxBytes: 100, maxFiles: 1 }, () => {});
    sink.write("first batch\n");
    await sink.flush();
    sink.write("second batch\n");
    await sink.flush();
    expect(readFileSync(`${file}.1`, "utf8")).toBe("x".repeat(90) + "\n");
    expect(readFileSync(file, "utf8")).toBe("first batch\nsecond batch\n");
  });

  it("reports a file it cannot write once, without throwing", async () => {
    const errors: string[] = [];
    // A path under a regular file: no directory can be made there.
    const blocker = path.join(dir(), "a-file");
    writeFileSync(blocker, "");
    const sink = fileSink({ file: path.join(blocker, "x.log"), maxBytes: 1000, maxFiles: 1 }, (m) =>
      errors.push(m),
    );
    sink.write("a\n");
    await sink.flush();
    sink.write("b\n");
    await sink.flush();
    sink.flushSync();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("cannot write log file");
  });

  it("redacts secrets in the file too (the logger redacts before any sink)", async () => {
    const file = path.join(dir(), "mcpx.log");
    const sink = fileSink({ file, maxBytes: 10_000, maxFiles: 1 }, () => {});
    const log = createLogger({ write: sink.write });
    log.addSecrets(["tok-123456"]);
    log.info("header was tok-123456");
    await sink.close();
    expect(readFileSync(file, "utf8")).toContain("header was ***");
  });

  it("takes a burst of 10,000 lines without file I/O per line, and loses none", async () => {
    const file = path.join(dir(), "mcpx.log");
    const errors: string[] = [];
    const sink = fileSink({ file, maxBytes: 10_000_000, maxFiles: 1 }, (m) => errors.push(m));
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}\n`);
    for (const line of lines) sink.write(line);
    // Every write returned and nothing reached the disk: a chatty upstream never waits on it.
    expect(existsSync(file)).toBe(false);
    await sink.flush();
    expect(readFileSync(file, "utf8")).toBe(lines.join(""));
    expect(errors).toEqual([]);
  });

  it("writes everything at close, and a line logged after close at once", async () => {
    const file = path.join(dir(), "mcpx.log");
    const sink = fileSink({ file, maxBytes: 10_000_000, maxFiles: 1 }, () => {});
    for (let i = 0; i < 1000; i++) sink.write(`before ${i}\n`);
    await sink.close();
    sink.write("after close\n");
    const text = readFileSync(file, "utf8");
    expect(text.split("\n").filter((l) => l.startsWith("before "))).toHaveLength(1000);
    expect(text.endsWith("after close\n")).toBe(true);
  });

  it("writes queued lines synchronously on flushSync (process exit)", () => {
    const file = path.join(dir(), "mcpx.log");
    const sink = fileSink({ file, maxBytes: 10_000, maxFiles: 1 }, () => {});
    sink.write("last words\n");
    sink.flushSync();
    expect(readFileSync(file, "utf8")).toBe("last words\n");
  });

  it("bounds what waits for the disk: past maxQueuedBytes lines are dropped and counted", async () => {
    const file = path.join(dir(), "mcpx.log");
    const sink = fileSink({ file, maxBytes: 10_000_000, maxFiles: 1 }, () => {}, {
      maxQueuedBytes: 1000,
    });
    for (let i = 0; i < 100; i++)
      sink.write(`line ${String(i).padStart(3, "0")} ${"z".repeat(40)}\n`);
    await sink.flush();
    const kept = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("line "));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(30);
    expect(readFileSync(file, "utf8")).toContain(
      `WARN mcpx: ${100 - kept.length} log lines dropped`,
    );
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
