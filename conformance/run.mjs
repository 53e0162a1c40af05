#!/usr/bin/env node
/**
 * `npm run conformance`: the MCP conformance suite (@modelcontextprotocol/conformance) in server
 * mode against the built mcpx over streamable HTTP, once per protocol era the suite covers, judged
 * against conformance/expected-failures.yaml. Exit 0 when every failing scenario is listed there
 * and every listed one still fails; 1 otherwise (a new failure, or a stale entry to delete).
 *
 * The suite and its Node >= 22 (the npm package `node@22`) are this folder's own dependencies
 * (`npm ci --prefix conformance`), not mcpx's: a `node` devDependency at the top would put Node 22
 * first on the PATH of every npm script. The suite runs on conformance/node_modules/node/bin/node
 * (CONFORMANCE_NODE overrides); mcpx itself runs on the Node running this script.
 *
 *   node conformance/run.mjs [--keep] [--markdown]
 *     --keep      keep the temp folder (mcpx log, the suite's output and checks.json per scenario)
 *     --markdown  also print the scenario × era table as Markdown
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";

const HERE = import.meta.dirname;
const ROOT = path.resolve(HERE, "..");
const BASELINE = path.join(HERE, "expected-failures.yaml");
const MCPX = path.join(ROOT, "dist/bundle/index.js");
const FIXTURE = path.join(ROOT, "test/fixtures/upstreams/conformance.mjs");
const NODE22 = process.env.CONFORMANCE_NODE ?? path.join(HERE, "node_modules/node/bin/node");

/**
 * One run of the suite per era. The 0.1.x releases cover the 2025 revisions; the 0.2.0 alphas add
 * 2026-07-28, run as exactly the scenarios that revision requires (`--requirements`).
 */
const RUNS = [
  {
    era: "legacy",
    label: "2025 (conformance 0.1.16, active suite)",
    suite: path.join(HERE, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    args: [],
  },
  {
    era: "modern",
    label: "2026-07-28 (conformance 0.2.0-alpha.12, --requirements 2026-07-28)",
    suite: path.join(HERE, "node_modules/conformance-2026/dist/index.js"),
    args: ["--requirements", "2026-07-28"],
  },
];

/** Bound on one whole run of the suite (it takes seconds; a hang must not stall CI). */
const RUN_TIMEOUT_MS = 5 * 60_000;

const say = (line = "") => process.stdout.write(`${line}\n`);

/** Run a command to completion; resolves with its exit code and combined output. */
function run(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c) => (output += c));
    child.stderr.on("data", (c) => (output += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? `killed (${signal})` : code, output });
    });
  });
}

/** Start `mcpx <config> --port 0`; resolves once it listens, with its URL and a stop function. */
function startMcpx(config, logFile) {
  const child = spawn(process.execPath, [MCPX, config, "--port", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (c) => (log += c));
  const stop = () =>
    new Promise((resolve) => {
      writeFileSync(logFile, log);
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    child.stderr.on("data", () => {
      const m = /mcpx listening on (\S+)/.exec(log);
      if (m) resolve({ url: m[1], stop });
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}:\n${log}`)));
  });
}

/** Wait until /healthz says every upstream is ready (the suite lists what they discovered). */
async function untilReady(url) {
  const healthz = new URL("/healthz", url);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const body = await fetch(healthz).then((r) => r.json());
    const servers = Object.values(body.servers ?? {});
    if (servers.length > 0 && servers.every((s) => s.status === "ready")) return;
    if (Date.now() > deadline) throw new Error(`upstreams not ready: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Scenario names the suite tags as extensions: not part of a protocol revision, not judged. */
async function extensionScenarios(suite) {
  const { output } = await run(NODE22, [suite, "list", "--server"], 60_000);
  return new Set(
    [...output.matchAll(/^\s*- (\S+) \[([^\]]*)\]/gm)]
      .filter((m) => m[2].split(",").includes("extension"))
      .map((m) => m[1]),
  );
}

/**
 * Per scenario of one run, from the suite's `-o` folder (`server-<scenario>-<timestamp>/
 * checks.json`): failed when any check is a FAILURE. WARNINGs (unmet SHOULDs) are counted, not
 * failed — the suite prints ✓ for them too.
 */
function readResults(outDir) {
  const results = new Map();
  for (const entry of readdirSync(outDir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry);
    if (!m) continue;
    const checks = JSON.parse(readFileSync(path.join(outDir, entry, "checks.json"), "utf8"));
    const count = (status) => checks.filter((c) => c.status === status).length;
    results.set(m[1], {
      failed: count("FAILURE") > 0,
      failures: count("FAILURE"),
      warnings: count("WARNING"),
      passed: count("SUCCESS"),
      firstFailure: checks.find((c) => c.status === "FAILURE")?.errorMessage,
    });
  }
  return results;
}

/** conformance/expected-failures.yaml: `{ legacy: { scenario: reason }, modern: {...} }`. */
function readBaseline() {
  const doc = parseYaml(readFileSync(BASELINE, "utf8")) ?? {};
  const out = {};
  for (const { era } of RUNS) {
    const entries = doc[era] ?? {};
    for (const [scenario, reason] of Object.entries(entries)) {
      if (typeof reason !== "string" || reason.trim() === "") {
        throw new Error(`${BASELINE}: ${era}.${scenario} needs a one-line reason`);
      }
    }
    out[era] = entries;
  }
  const unknown = Object.keys(doc).filter((k) => !RUNS.some((r) => r.era === k));
  if (unknown.length) throw new Error(`${BASELINE}: unknown keys ${unknown.join(", ")}`);
  return out;
}

/** Compare one era's results with its baseline; returns the problems, one line each. */
function judge(era, results, expected) {
  const problems = [];
  for (const [scenario, r] of results) {
    if (r.failed && !(scenario in expected)) {
      problems.push(`${era}: NEW FAILURE ${scenario}: ${r.firstFailure ?? "(no message)"}`);
    }
  }
  for (const scenario of Object.keys(expected)) {
    const r = results.get(scenario);
    if (!r)
      problems.push(`${era}: STALE ${scenario}: the suite no longer runs it; delete the line`);
    else if (!r.failed) problems.push(`${era}: STALE ${scenario}: passes now; delete the line`);
  }
  return problems;
}

function cell(r, expected) {
  if (!r) return "–";
  const warn = r.warnings ? ` (${r.warnings} warn)` : "";
  if (!r.failed) return `pass${warn}`;
  return expected ? `fail, expected${warn}` : `FAIL, NEW${warn}`;
}

function table(byEra, baseline) {
  const scenarios = [...new Set(RUNS.flatMap(({ era }) => [...byEra[era].keys()]))];
  const rows = scenarios.map((s) => [
    s,
    ...RUNS.map(({ era }) => cell(byEra[era].get(s), s in baseline[era])),
  ]);
  return [["scenario", ...RUNS.map((r) => r.era)], ...rows];
}

function markdown(rows) {
  const [head, ...body] = rows;
  return [head, head.map(() => "---"), ...body].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

function plain(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ")).join("\n");
}

async function main() {
  const keep = process.argv.includes("--keep");
  for (const file of [MCPX, NODE22]) {
    if (!existsSync(file)) {
      throw new Error(`${file} is missing: run npm run build and npm ci --prefix conformance`);
    }
  }
  const baseline = readBaseline();
  const dir = mkdtempSync(path.join(tmpdir(), "mcpx-conformance-"));
  const config = path.join(dir, "mcpx.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { conformance: { command: process.execPath, args: [FIXTURE] } },
    }),
  );
  const mcpx = await startMcpx(config, path.join(dir, "mcpx.log"));
  const byEra = {};
  const problems = [];
  try {
    await untilReady(mcpx.url);
    for (const r of RUNS) {
      const outDir = path.join(dir, r.era);
      const args = [r.suite, "server", "--url", mcpx.url, "-o", outDir, ...r.args];
      const { code, output } = await run(NODE22, args, RUN_TIMEOUT_MS);
      writeFileSync(path.join(dir, `${r.era}.log`), output);
      const skip = await extensionScenarios(r.suite);
      const results = existsSync(outDir) ? readResults(outDir) : new Map();
      for (const s of skip) results.delete(s);
      if (results.size === 0) problems.push(`${r.era}: the suite ran nothing (exit ${code})`);
      byEra[r.era] = results;
      problems.push(...judge(r.era, results, baseline[r.era]));
      say(`${r.label}: ${results.size} scenarios, suite exit ${code}`);
    }
  } finally {
    await mcpx.stop();
  }
  const rows = table(byEra, baseline);
  say();
  say(plain(rows));
  if (process.argv.includes("--markdown")) say(`\n${markdown(rows)}`);
  say();
  if (keep) say(`output kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  if (problems.length) {
    say(`conformance: ${problems.length} problem(s) against ${path.relative(ROOT, BASELINE)}:`);
    for (const p of problems) say(`  ${p}`);
    if (!keep) say("(rerun with --keep to see each scenario's checks)");
    process.exitCode = 1;
  } else {
    say("conformance: every failure is an expected one, and every expected one still fails");
  }
}

main().catch((err) => {
  process.stderr.write(`conformance: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
