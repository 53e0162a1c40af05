/**
 * Baseline: this build of mcpx against the build of another commit, over stdio, in one run. The
 * other commit (`MCPX_BENCH_BASELINE`, default `HEAD`: the last commit against the working tree)
 * is checked out in a temporary worktree beside this one and compiled there with this
 * checkout's node_modules. Four arms, interleaved call by call with the first arm rotating: the
 * echo server reached directly, through the byte relay, and through each build (`"session":
 * "shared"`). What a change to the call path saves shows as the difference of the two builds'
 * added p50, round by round; the relay is the floor of any stdio proxy.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { percentile } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import {
  ECHO_SERVER,
  echoConfig,
  MCPX,
  RELAY,
  stdioArm,
  untilReady,
  type Arm,
} from "./speed-arms.js";
import { ROOT } from "./upstreams.js";

const CALLS = Number(process.env.MCPX_BENCH_BASELINE_CALLS ?? 2000);
const ROUNDS = 3;
const WARMUP = 300;

const git = (...args: string[]) =>
  execFileSync("git", args, {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();

/** The other commit's CLI (`dist/bundle/index.js`, else `dist/index.js`), built in a worktree under `dir`. */
function buildBaseline(ref: string, dir: string): { entry: string; commit: string } {
  const commit = git("rev-parse", "--short", ref);
  const tree = path.join(dir, "tree");
  git("worktree", "add", "--detach", tree, commit);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"));
  // The server and its dependencies only: enough for stdio (no dashboard page, no bin).
  execFileSync(
    process.execPath,
    [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: tree,
      stdio: "inherit",
    },
  );
  // Run as the bin runs it: bundled, when that commit bundles its CLI (scripts/build-bin.mjs).
  if (existsSync(path.join(tree, "scripts/build-bin.mjs"))) {
    execFileSync(process.execPath, [path.join(tree, "scripts/build-bin.mjs")], {
      cwd: tree,
      stdio: "inherit",
    });
  }
  const bundled = path.join(tree, "dist/bundle/index.js");
  const entry = existsSync(bundled) ? bundled : path.join(tree, "dist/index.js");
  if (!existsSync(entry)) throw new Error(`building ${commit} made no ${entry}`);
  return { entry, commit };
}

export async function runBaselineBench(): Promise<BenchSection> {
  const ref = process.env.MCPX_BENCH_BASELINE ?? "HEAD";
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcpx-bench-baseline-"));
  const arms: (Arm & { stop(): Promise<void> })[] = [];
  try {
    console.error(`bench baseline: building ${ref}`);
    const baseline = buildBaseline(ref, dir);
    const config = echoConfig(dir);
    const args = (entry: string) => [entry, config, "--log-level", "warn"];
    arms.push(await stdioArm([ECHO_SERVER], false));
    arms.push(await stdioArm([RELAY, ECHO_SERVER], false));
    arms.push(await stdioArm(args(MCPX), true));
    arms.push(await stdioArm(args(baseline.entry), true));
    await untilReady(arms[2]!.client);
    await untilReady(arms[3]!.client);
    for (let i = 0; i < WARMUP; i++) for (const arm of arms) await arm.call();
    const rows: string[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const times = arms.map((): number[] => []);
      for (let i = 0; i < CALLS; i++) {
        for (let j = 0; j < arms.length; j++) {
          const k = (i + j) % arms.length;
          const t0 = performance.now();
          await arms[k]!.call();
          times[k]!.push(performance.now() - t0);
        }
      }
      const [direct, relay, mine, theirs] = times.map((t) => percentile(t, 50)) as [
        number,
        number,
        number,
        number,
      ];
      const added = (x: number) => `+${(x - direct).toFixed(3)}`;
      rows.push([
        String(round),
        direct.toFixed(3),
        added(theirs),
        added(mine),
        `${(((mine - theirs) / (theirs - direct)) * 100).toFixed(1)} %`,
        added(relay),
      ]);
      console.error(`bench baseline: round ${round}: ${rows.at(-1)!.join(" ")}`);
    }
    const markdown = [
      `This build against \`${baseline.commit}\` (\`MCPX_BENCH_BASELINE=${ref}\`), over stdio, ` +
        `${CALLS} calls per arm per round, the four arms interleaved call by call. ` +
        "Added p50 over the echo server reached directly, in ms; the change is this build's added p50 " +
        "against the baseline's. Load average " +
        `${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}.`,
      "",
      table(
        [
          "round",
          "direct p50",
          `${baseline.commit} added`,
          "this build added",
          "change",
          "byte relay added",
        ],
        rows,
      ),
    ].join("\n");
    return { id: "baseline", title: "Baseline (this build against another commit)", markdown };
  } finally {
    await Promise.all(arms.map((a) => a.stop()));
    try {
      git("worktree", "remove", "--force", path.join(dir, "tree"));
    } catch {
      // Never added (the build failed before): nothing to remove.
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
