/** Code mode's config: `profiles.<name>.codeMode`, its limits, and untrusted configs. */
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULTS, parseConfig, type Config } from "../../src/config/load.js";
import { codeModeLimitsSchema } from "../../src/config/schema.js";
import { DEFAULT_LIMITS, resolveLimits, type LimitName } from "../../src/sandbox/index.js";

const FILE = "/configs/mcpx.json";
const REMOTE = { remote: { type: "http", url: "https://mcp.example.com/mcp" } };

function parse(extra: Record<string, unknown>, untrusted = false): Config {
  return parseConfig({ mcpServers: REMOTE, ...extra }, FILE, {}, { untrusted });
}

function problems(extra: Record<string, unknown>, untrusted = false): string[] {
  try {
    parse(extra, untrusted);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("parseConfig did not throw");
}

const withProfile = (codeMode: unknown) => ({
  profiles: { default: { servers: ["*"], codeMode } },
});

describe("profiles.<name>.codeMode", () => {
  it("is on by default; true, false and an object of limits are read as written", () => {
    expect(parse({}).profiles.default?.codeMode).toBeUndefined();
    expect(parse({ profiles: { default: { servers: ["*"] } } }).profiles.default?.codeMode).toBe(
      undefined,
    );
    expect(parse(withProfile(true)).profiles.default?.codeMode).toBeUndefined();
    expect(parse(withProfile(false)).profiles.default?.codeMode).toBe(false);
    expect(parse(withProfile({ timeMs: 5_000, calls: 3 })).profiles.default?.codeMode).toEqual({
      timeMs: 5_000,
      calls: 3,
    });
  });

  it("names the key and the fix for a value of the wrong kind, a misspelled limit, a bad bound", () => {
    expect(problems(withProfile("yes"))).toEqual([
      'profiles.default.codeMode: must be true, false, or an object of limits like { "timeMs": 10000, "calls": 20 }.',
    ]);
    expect(problems(withProfile({ timems: 5_000 }))).toEqual([
      'profiles.default.codeMode.timems: unknown key. Did you mean "timeMs"?',
    ]);
    const [tooBig] = problems(withProfile({ stackBytes: 8 * 1024 * 1024 }));
    expect(tooBig).toMatch(/^profiles\.default\.codeMode\.stackBytes: .*4194304/);
    expect(problems(withProfile({ calls: 1.5 }))[0]).toMatch(
      /^profiles\.default\.codeMode\.calls: /,
    );
  });

  it("accepts exactly the limits the sandbox accepts, at both ends of each range", () => {
    const shape = codeModeLimitsSchema.shape;
    for (const name of Object.keys(DEFAULT_LIMITS) as LimitName[]) {
      const field = shape[name].unwrap();
      const min = field.minValue ?? 0;
      const max = field.maxValue ?? Number.MAX_SAFE_INTEGER;
      expect(resolveLimits({ [name]: min })[name], name).toBe(min);
      expect(resolveLimits({ [name]: max })[name], name).toBe(max);
      expect(codeModeLimitsSchema.safeParse({ [name]: min - 1 }).success, name).toBe(false);
      // Below the config's minimum is below the sandbox's too (or not an allowed value at all).
      expect(() => resolveLimits({ [name]: min - 1 }), name).toThrow(RangeError);
      // Every default is inside the config's range.
      expect(DEFAULT_LIMITS[name]).toBeGreaterThanOrEqual(min);
      expect(DEFAULT_LIMITS[name]).toBeLessThanOrEqual(max);
    }
  });
});

describe("an untrusted config", () => {
  it("cannot enable code mode: every profile has it off", () => {
    expect(parse({}, true).profiles.default?.codeMode).toBe(false);
    expect(
      parse({ profiles: { default: { servers: ["*"] } } }, true).profiles.default?.codeMode,
    ).toBe(false);
    expect(parse(withProfile(false), true).profiles.default?.codeMode).toBe(false);
  });

  it("that asks for it is refused, naming the key", () => {
    const refusal =
      "profiles.default.codeMode: refused: an untrusted config may not enable code mode (scripts run inside mcpx). Remove it, or run without --untrusted.";
    expect(problems(withProfile(true), true)).toEqual([refusal]);
    expect(problems(withProfile({ calls: 5 }), true)).toEqual([refusal]);
    // A file that calls itself untrusted is held to the same rule.
    expect(problems({ trust: "untrusted", ...withProfile(true) })).toEqual([refusal]);
  });
});

it("the top-level resultBudget is kept for scripts' values", () => {
  expect(parse({}).resultBudget).toBe(DEFAULTS.resultBudget);
  expect(parse({ resultBudget: 2_000 }).resultBudget).toBe(2_000);
});
