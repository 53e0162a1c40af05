import { describe, expect, it } from "vitest";
import { progress, redactor } from "../../src/commands/output.js";

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, s: { isTTY, columns: 60, write: (t: string) => written.push(t) > 0 } };
}

describe("progress", () => {
  it("draws count and name on one rewritten line of a terminal, then clears it", () => {
    const { written, s } = stream(true);
    const p = progress("connecting", 2, s);
    p.step("github");
    p.step("memory");
    p.done();
    expect(written).toEqual([
      "\r\x1b[2Kconnecting 0/2",
      "\r\x1b[2Kconnecting 1/2: github",
      "\r\x1b[2Kconnecting 2/2: memory",
      "\r\x1b[2K",
    ]);
  });

  it("writes nothing when stderr is not a terminal", () => {
    const { written, s } = stream(false);
    const p = progress("connecting", 2, s);
    p.step("github");
    p.done();
    expect(written).toEqual([]);
  });
});

describe("redactor", () => {
  it("hides every secret, also JSON-escaped", () => {
    const redact = redactor(['se"cret-1', "other-secret"]);
    expect(redact('a se"cret-1 b other-secret {"x":"se\\"cret-1"}')).toBe(
      'a *** b *** {"x":"***"}',
    );
  });
});
