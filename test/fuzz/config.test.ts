/**
 * Fuzz (fast-check): config files. Any file — JSON of any shape, mcpx's keys with values of the
 * wrong kind, other clients' file names and formats, deep nesting, `__proto__` keys, text that is
 * not JSON or TOML — either loads or is refused with a ConfigError; nothing else is thrown. And
 * `mcpx validate` / `mcpx <file>` on such a file exit 1 or 2 with a message, never a stack trace.
 * `npm run fuzz` runs more cases (MCPX_FUZZ_RUNS).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import {
  deepRawJson,
  fuzzRuns,
  fuzzTimeout,
  leaksInternals,
  nastyString,
  rawJson,
} from "../helpers/fuzz.js";
import { runMcpx, tempDir } from "../helpers/proxy.js";

const RUNS = fuzzRuns(300);
// Each case spawns mcpx once or twice: a large run gets at most 200 of them.
const SPAWNS = Math.min(fuzzRuns(12), 200);

const NAMES = [
  "mcpx.json",
  ".mcp.json",
  "claude_desktop_config.json",
  "mcp.json",
  "settings.json",
  "config.toml",
  ".claude.json",
  "x.jsonc",
  "noextension",
];

const str = (s: string) => JSON.stringify(s);
const SERVER_KEYS = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "transport",
  "type",
  "session",
  "prewarm",
  "maxSessions",
  "timeout",
  "idleTimeout",
  "description",
  "tools",
  "disabled",
  "health",
  "trust",
];
const TOP_KEYS = [
  "mcpServers",
  "servers",
  "mcp_servers",
  "callTimeout",
  "resultBudget",
  "profiles",
  "auth",
  "trust",
  "inheritEnv",
  "discoveryTimeout",
  "sessionSecret",
  "codeMode",
  "pageSize",
  "dashboard",
  "__proto__",
  "constructor",
];

/** A server entry: mostly real keys with values of any kind. */
const entry: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...SERVER_KEYS), nastyString),
      fc.oneof(rawJson, nastyString.map(str)),
    ),
    { maxLength: 6 },
  )
  .map((kv) => `{${kv.map(([k, v]) => `${str(k)}:${v}`).join(",")}}`);

const configJson: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.array(fc.tuple(nastyString, fc.oneof({ arbitrary: entry, weight: 3 }, rawJson)), {
        maxLength: 4,
      }),
      fc.array(fc.tuple(fc.constantFrom(...TOP_KEYS), rawJson), { maxLength: 4 }),
      fc.constantFrom("mcpServers", "servers", "mcp_servers"),
    )
    .map(
      ([servers, top, key]) =>
        `{${[`${str(key)}:{${servers.map(([n, e]) => `${str(n)}:${e}`).join(",")}}`, ...top.map(([k, v]) => `${str(k)}:${v}`)].join(",")}}`,
    ),
  rawJson,
  deepRawJson,
  deepRawJson.map((d) => `{"mcpServers":{"a":{"command":"node","args":${d}}}}`),
  fc.string(),
  // TOML-ish lines (Codex's config.toml).
  fc
    .array(fc.tuple(nastyString, nastyString), { maxLength: 5 })
    .map((kv) => `[mcp_servers.a]\n${kv.map(([k, v]) => `${k} = ${str(v)}`).join("\n")}\n`),
);

const file = fc.record({
  name: fc.constantFrom(...NAMES),
  text: configJson,
  untrusted: fc.boolean(),
});

it(
  `loads or refuses ${RUNS} hostile config files with a ConfigError, nothing else`,
  () => {
    const dir = tempDir();
    fc.assert(
      fc.property(file, ({ name, text, untrusted }) => {
        const at = path.join(dir, name);
        writeFileSync(at, text);
        try {
          loadConfig(at, {}, { untrusted });
        } catch (error) {
          if (!(error instanceof ConfigError)) {
            throw new Error(`${name} ${text.slice(0, 300)} threw ${String(error)}`, {
              cause: error,
            });
          }
          expect(error.problems.length, text.slice(0, 300)).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  },
  fuzzTimeout(RUNS, 50),
);

it(
  `mcpx on ${SPAWNS} hostile config files exits 0-2 with a message, no stack trace`,
  async () => {
    const dir = tempDir();
    await fc.assert(
      fc.asyncProperty(file, fc.constantFrom("validate", "serve"), async ({ name, text }, how) => {
        const at = path.join(dir, name);
        writeFileSync(at, text);
        // Serving a config that loads would run forever: serve only what validate refuses.
        const checked = await runMcpx(["validate", at]);
        const run = how === "serve" && checked.code !== 0 ? await runMcpx([at]) : checked;
        const shown = `${how} ${name} ${text.slice(0, 300)} → ${run.code}: ${run.stderr.slice(0, 1000)}`;
        expect([0, 1, 2], shown).toContain(run.code);
        expect(leaksInternals(run.stderr + run.stdout), shown).toBe(false);
      }),
      { numRuns: SPAWNS },
    );
  },
  fuzzTimeout(SPAWNS, 3000),
);
