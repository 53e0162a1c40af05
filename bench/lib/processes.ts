/**
 * Processes for every benchmark: facts read from /proc (memory, CPU time, command line), a
 * spawned helper's readiness line, and the reaper that makes sure a case leaves nothing running.
 * Linux only where /proc is read; elsewhere the readers answer NaN or "?".
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { memoryOf, startTime } from "../../test/helpers/procfs.js";
import { descendants } from "../../test/helpers/proxy.js";

/** Resident memory of `pid` now and at its peak (VmRSS, VmHWM) in kB; NaN once it is gone. */
export function memoryKb(pid: number): { rssKb: number; peakKb: number } {
  const m = memoryOf(pid);
  return { rssKb: m ? m.rss / 1024 : Number.NaN, peakKb: m ? m.peak / 1024 : Number.NaN };
}

/** CPU time (user + system) `pid` has used, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The command line of `pid`, for messages; "?" once it is gone. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "?"; // exited while we looked
  }
}

/**
 * Wait until `child` writes `ready` on `stream` (a helper server's "listening" line); rejects,
 * with what it wrote, if it exits first.
 */
export function untilOutput(
  child: ChildProcess,
  stream: "stdout" | "stderr",
  ready: string,
  name: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = "";
    child[stream]?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes(ready)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}: ${out}`)));
  });
}

/** Counts and kills what a case left running; see createReaper. */
export type Reaper = (watched: readonly number[]) => Promise<number>;

/**
 * Wait for the processes a case started to exit: `watched` (mcpx and its children, which would
 * be orphaned rather than stay our descendants if mcpx died first) and any new descendant of the
 * bench. Processes in `baseline` (there before the benchmark: tsx's esbuild service) are never
 * counted. Whatever still runs after `graceMs` is counted as leaked and killed by pid, so the
 * next case starts clean.
 */
export function createReaper(
  baseline: ReadonlySet<number>,
  label: string,
  graceMs = 5_000,
): Reaper {
  return async (watched) => {
    const left = () => [
      ...new Set([
        // startTime is undefined for a process that is gone or a zombie (exited, not yet reaped).
        ...watched.filter((pid) => !baseline.has(pid) && startTime(pid) !== undefined),
        ...descendants(process.pid).filter((pid) => !baseline.has(pid)),
      ]),
    ];
    const deadline = Date.now() + graceMs;
    let still = left();
    while (still.length > 0 && Date.now() < deadline) {
      await sleep(50);
      still = left();
    }
    if (still.length > 0) {
      console.error(
        `${label}: still running after close: ${still.map((p) => `${p} (${commandLine(p)})`).join(", ")}`,
      );
    }
    for (const pid of still) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // exited between the check and the kill
      }
    }
    return still.length;
  };
}

/** The machine's busy and total CPU time so far, in ms, over all cores. */
function machineCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const used = times.user + times.nice + times.sys + times.irq;
    busy += used;
    total += used + times.idle;
  }
  return { busy, total };
}

/** How long a wait for a quiet machine took, and whether it came (see `untilQuiet`). */
export interface QuietWait {
  waitedMs: number;
  quiet: boolean;
}

/**
 * Waits until the machine's CPUs were busy less than `maxShare` of a `windowMs` window (what a
 * benchmark started just before, a process still starting, is done), at most `timeoutMs`.
 */
export async function untilQuiet(
  maxShare = 0.15,
  windowMs = 500,
  timeoutMs = 30_000,
): Promise<QuietWait> {
  const started = performance.now();
  for (;;) {
    const a = machineCpu();
    await sleep(windowMs);
    const b = machineCpu();
    const share = (b.busy - a.busy) / Math.max(1, b.total - a.total);
    const waitedMs = performance.now() - started;
    if (share < maxShare) return { waitedMs, quiet: true };
    if (waitedMs >= timeoutMs) return { waitedMs, quiet: false };
  }
}
