/**
 * Process facts from /proc (Linux), for runs that must prove they left nothing behind and did
 * not grow: a process's memory, and a process identity that survives pid reuse.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Resident memory of `pid` now and at its peak (VmRSS, VmHWM), in bytes; undefined once gone. */
export function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { rss: kb("VmRSS") * 1024, peak: kb("VmHWM") * 1024 };
}

/**
 * When `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined when
 * it is gone or a zombie. A pid plus its start time names one process, even after the pid is
 * reused.
 */
export function startTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ")".
    const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (after[0] === "Z") return undefined;
    return Number(after[19]);
  } catch {
    return undefined;
  }
}

/** Processes seen at some point, checked later for survivors. */
export class SeenProcesses {
  private readonly seen = new Map<number, number>();

  /** Remember these pids (as the processes they are now). */
  add(pids: readonly number[]): void {
    for (const pid of pids) {
      if (this.seen.has(pid)) continue;
      const start = startTime(pid);
      if (start !== undefined) this.seen.set(pid, start);
    }
  }

  get size(): number {
    return this.seen.size;
  }

  /** The remembered processes still running (same pid, same start time). */
  survivors(): number[] {
    return [...this.seen].filter(([pid, start]) => startTime(pid) === start).map(([pid]) => pid);
  }

  /** Wait up to `ms` for every remembered process to be gone; returns those that are not. */
  async untilGone(ms: number): Promise<number[]> {
    const deadline = Date.now() + ms;
    let left = this.survivors();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      left = this.survivors();
    }
    return left;
  }
}

/** Pids of running processes whose command line mentions `text` (a temp folder, say). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}
