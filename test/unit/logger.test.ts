import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";

import { createLogger, drained, type LogLevel } from "../../src/logger.js";

/** A logger writing into an array. */
function capture(level?: LogLevel) {
  const lines: string[] = [];
  const log = createLogger({ ...(level && { level }), write: (line) => lines.push(line) });
  return { log, lines };
}

function logAll(log: ReturnType<typeof capture>["log"]): void {
  log.debug("d-msg");
  log.info("i-msg");
  log.warn("w-msg");
  log.error("e-msg");
}

describe("createLogger levels", () => {
  it.each([
    ["debug", ["d-msg", "i-msg", "w-msg", "e-msg"]],
    ["info", ["i-msg", "w-msg", "e-msg"]],
    ["warn", ["w-msg", "e-msg"]],
    ["error", ["e-msg"]],
    ["silent", []],
  ] as const)("at %s writes only %j", (level, expected) => {
    const { log, lines } = capture(level);
    logAll(log);
    expect(lines.map((l) => /(\w-msg)/.exec(l)?.[1])).toEqual(expected);
    // enabled() says the same, so a line built per call is built only when written.
    const enabled = (["debug", "info", "warn", "error"] as const).filter((l) => log.enabled(l));
    expect(enabled.map((l) => `${l[0]}-msg`)).toEqual(expected);
    expect(log.child("t").enabled("info")).toBe(log.enabled("info"));
  });

  it("defaults to info", () => {
    const { log, lines } = capture();
    logAll(log);
    expect(lines).toHaveLength(3);
    expect(lines.join("")).not.toContain("d-msg");
  });

  it("writes one line per call: timestamp, upper-case level, message, newline", () => {
    const { log, lines } = capture("debug");
    log.warn("disk almost full");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN disk almost full\n$/);
  });

  it("appends fields as JSON, and omits an empty fields object", () => {
    const { log, lines } = capture();
    log.info("started", { port: 8080, servers: ["a", "b"] });
    log.info("plain", {});
    expect(lines[0]).toMatch(/ INFO started \{"port":8080,"servers":\["a","b"\]\}\n$/);
    expect(lines[1]).toMatch(/ INFO plain\n$/);
  });

  it("writes an Error field as its message and never throws on circular fields", () => {
    const { log, lines } = capture();
    log.error("failed", { err: new Error("spawn ENOENT") });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => log.error("loop", circular)).not.toThrow();
    expect(lines[0]).toContain('{"err":"spawn ENOENT"}');
    expect(lines[1]).toContain("loop [unserializable]");
  });

  it("tags child lines, nesting tags with /", () => {
    const { log, lines } = capture();
    const child = log.child("github");
    child.info("ready");
    child.child("stderr").warn("deprecated flag");
    log.info("untagged");
    expect(lines[0]).toMatch(/ INFO \[github\] ready\n$/);
    expect(lines[1]).toMatch(/ WARN \[github\/stderr\] deprecated flag\n$/);
    expect(lines[2]).toMatch(/ INFO untagged\n$/);
  });

  it("applies the parent's level to children", () => {
    const { log, lines } = capture("warn");
    log.child("x").info("hidden");
    log.child("x").warn("shown");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("shown");
  });
});

describe("addSecrets", () => {
  const TOKEN = "ghp_abcdef1234567890";

  it("redacts a secret in the message and in fields", () => {
    const { log, lines } = capture();
    log.addSecrets([TOKEN]);
    log.info(`using token ${TOKEN} twice ${TOKEN}`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(lines[0]).not.toContain(TOKEN);
    expect(lines[0]).toContain("using token *** twice ***");
    expect(lines[0]).toContain('"Authorization":"Bearer ***"');
  });

  it("does not redact before the secret is registered", () => {
    const { log, lines } = capture();
    log.info(TOKEN);
    log.addSecrets([TOKEN]);
    log.info(TOKEN);
    expect(lines[0]).toContain(TOKEN);
    expect(lines[1]).not.toContain(TOKEN);
  });

  it("redacts in child loggers, whichever logger registered the secret", () => {
    const { log, lines } = capture();
    const child = log.child("upstream");
    log.addSecrets(["parent-secret"]);
    child.addSecrets(["child-secret"]);
    child.info("parent-secret child-secret", { v: "parent-secret" });
    child.child("deeper").warn("child-secret");
    log.info("child-secret");
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain("parent-secret");
      expect(line).not.toContain("child-secret");
    }
    expect(lines[0]).toContain("[upstream] *** ***");
  });

  it("accepts any iterable", () => {
    const { log, lines } = capture();
    log.addSecrets(new Set(["from-a-set"]));
    log.info("from-a-set");
    expect(lines[0]).not.toContain("from-a-set");
  });

  it("does not redact values shorter than 4 characters", () => {
    const { log, lines } = capture();
    log.addSecrets(["abc", "", "x", "four"]);
    log.info("abc x four");
    expect(lines[0]).toContain("INFO abc x ***\n");
  });

  it("redacts a longer secret whole when a shorter one is a part of it", () => {
    const { log, lines } = capture();
    log.addSecrets(["abcd", "abcd-rest-of-the-secret"]);
    log.info("value abcd-rest-of-the-secret");
    expect(lines[0]).not.toContain("rest-of-the-secret");
  });

  it("redacts secrets with quotes, backslashes or newlines inside JSON fields", () => {
    const { log, lines } = capture();
    const secrets = ['pa"ss-word', "C:\\secret\\key", "line-one\nline-two"];
    log.addSecrets(secrets);
    log.info("fields", { a: secrets[0], b: secrets[1], c: secrets[2] });
    expect(lines[0]).not.toContain("pa\\");
    expect(lines[0]).not.toContain("secret\\");
    expect(lines[0]).not.toContain("line-one");
  });
});

describe("drained (before an exit)", () => {
  /** A stream whose reader takes a chunk only when `take()` is called. */
  function slowPipe() {
    const pending: (() => void)[] = [];
    const stream = new Writable({
      highWaterMark: 16,
      write(_chunk, _enc, done) {
        pending.push(done);
      },
    });
    return { stream, take: () => pending.shift()?.() };
  }

  it("waits until the reader has taken every queued byte", async () => {
    const { stream, take } = slowPipe();
    for (let i = 0; i < 4; i++) stream.write("x".repeat(10));
    expect(stream.writableLength).toBeGreaterThan(0);
    let done = false;
    const wait = drained([stream], 60_000).then(() => (done = true));
    take();
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    for (let i = 0; i < 3; i++) take();
    await wait;
    expect(stream.writableLength).toBe(0);
  });

  it("does not wait for a reader that stopped reading past its bound", async () => {
    const { stream } = slowPipe();
    stream.write("x".repeat(100));
    await drained([stream], 10);
    expect(stream.writableLength).toBeGreaterThan(0);
  });

  it("returns at once when nothing is queued", async () => {
    await drained([new Writable({ write: (_c, _e, done) => done() })], 60_000);
  });
});
