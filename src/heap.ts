/**
 * V8 settings for a long-running proxy (issue 30): heap sizing, and how soon hot code is
 * optimized, set once the proxy serves (src/index.ts).
 *
 * By default V8 lets the old generation grow to several times what is live before a full GC:
 * mcpx's live heap stays near 30 MB under load, yet its RSS climbed to ~250 MB. With
 * `--heap-growing-percent=50` the old generation grows at most half past what the last full GC
 * kept. 20 % kept RSS after load ~8 MB lower still (~136 against ~144 MB, 32 HTTP clients), but
 * after an idle trim (below) it cost ~10 % more CPU per call under load (0.34 against 0.31 ms,
 * interleaved, two runs), as full GCs came that much more often; V8's own growth reached
 * 170–210 MB.
 *
 * The young generation: V8 grows it under load to 32 MB (two semi-spaces of 16 MB) and keeps it,
 * which was most of what RSS gained after load (~125 MB after 5,000 calls from 32 HTTP clients).
 * Capped at 16 MB (`YoungCap`), RSS after that load was ~109–111 MB against ~123–124 MB, for
 * ~3–9 % fewer calls/s (interleaved, three runs). Smaller costs more: 8 MB ~15 %, 1 MB
 * (`--semi-space-growth-factor=1` throughout) ~30 % of CPU per call, as more of each call's garbage
 * is promoted and collected with the old generation. V8 reads its largest size only at start-up
 * (`--max-semi-space-size`, which only node's command line sets), so the cap is kept from inside:
 * after each GC, the growth factor is the one that takes the young generation from its size to
 * the cap (1 once there), so that after an idle trim (`IdleTrim`) the next burst grows it back to
 * the cap in one step, not by doubling over thousands of calls that each cost more meanwhile.
 * A user who prefers memory can keep it smaller still with `NODE_OPTIONS=--max-semi-space-size=1`
 * (node refuses most V8 flags in NODE_OPTIONS, this one included among the few it accepts). A
 * user's own choice wins: nothing is set when node's command line already names the setting
 * (`node --heap-growing-percent=0 …/mcpx.cjs`), and no cap is kept when it names a semi-space one.
 *
 * V8 optimizes a function once it has run through a budget of bytecode (`--interrupt-budget`,
 * 66 KB by default): the few functions each call runs reach it only after ~2,000 calls, while a
 * model's session makes tens or hundreds. With 4 KB they are optimized within the first hundred
 * calls (TurboFan compiles on a background thread): the p50 latency mcpx adds over stdio in the
 * 400 calls after 50 warm-up ones fell by ~35 % (0.66 → 0.44 ms, one run, interleaved), and by
 * ~10 % after thousands; CPU per call under 32 HTTP clients went down 4 %, RSS the same.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Clock } from "./clock.js";

/** The young generation's largest size under load, both semi-spaces (V8's own: 32 MB). */
export const YOUNG_CAP_BYTES = 16 * 1024 * 1024;
/** From the smallest young generation after a trim (2 MB) to the cap in one step (YoungCap). */
const YOUNG_GROWTH = 8;
const GROWTH_FLAG = `--semi-space-growth-factor=${YOUNG_GROWTH}`;

/** The flags, with the settings they replace when the user gave none. */
export const V8_FLAGS: readonly { flag: string; unless: readonly string[] }[] = [
  { flag: "--heap-growing-percent=50", unless: ["heap-growing", "heap_growing"] },
  // After the idle trim (IdleTrim below) the young generation is 1–2 MB: the first time a burst
  // fills it, it grows straight to the cap (YoungCap below), not by doubling.
  { flag: GROWTH_FLAG, unless: ["semi-space", "semi_space"] },
  // Hot code optimized within a session's first calls, not after thousands (see above).
  { flag: "--interrupt-budget=4096", unless: ["interrupt-budget", "interrupt_budget"] },
];

/** Apply {@link V8_FLAGS} the user did not set; returns the flags applied. */
export function tuneHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = [...execArgv, nodeOptions].join(" ");
  const applied: string[] = [];
  for (const { flag, unless } of V8_FLAGS) {
    if (unless.some((u) => given.includes(u))) continue;
    setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}

/**
 * Heap settings for a proxy that serves: {@link tuneHeap}, the {@link YoungCap} unless the user
 * set the young generation's size, and the {@link IdleTrim}.
 */
export function tuneForServing(clock: Clock): IdleTrim {
  // The growth factor is set where the user set nothing of the young generation: so is the cap.
  if (tuneHeap().includes(GROWTH_FLAG)) YoungCap.observe();
  return new IdleTrim({ clock });
}

export interface YoungCapOptions {
  /** The young generation's size now, in bytes (default V8's new space). */
  size?: () => number;
  /** Sets a V8 flag (default `v8.setFlagsFromString`). */
  setFlag?: (flag: string) => void;
  cap?: number;
}

/**
 * Keeps V8's young generation at {@link YOUNG_CAP_BYTES} at most: {@link check}, after each GC,
 * sets the growth factor that takes the young generation from its size now to the cap in one
 * growth, not past it (1 once it is there), so that it grows again, in one step, once V8 or the
 * idle trim shrank it. One flag set per change, none in between.
 *
 * V8's flags are the process's: while the main thread holds its young generation at the cap,
 * the worker threads' (code mode's sandbox, `select`) cannot grow theirs either. Their work is
 * short, and the sandbox's own heap is WebAssembly memory, outside V8's young generation.
 */
export class YoungCap {
  private readonly size: () => number;
  private readonly setFlag: (flag: string) => void;
  private readonly cap: number;
  private current = YOUNG_GROWTH;

  constructor(options: YoungCapOptions = {}) {
    this.size = options.size ?? newSpaceBytes;
    this.setFlag = options.setFlag ?? setFlagsFromString;
    this.cap = options.cap ?? YOUNG_CAP_BYTES;
  }

  /** The growth factor set now (tuneHeap's to begin with). */
  get factor(): number {
    return this.current;
  }

  check(): void {
    const size = this.size();
    if (!(size > 0)) return;
    const factor = Math.max(1, Math.floor(this.cap / size));
    if (factor === this.current) return;
    this.current = factor;
    this.setFlag(`--semi-space-growth-factor=${factor}`);
  }

  /** A cap checked after every GC of this process until the returned function stops it. */
  static observe(options: YoungCapOptions = {}): () => void {
    const cap = new YoungCap(options);
    cap.check();
    const observer = new PerformanceObserver(() => cap.check());
    observer.observe({ entryTypes: ["gc"] });
    return () => observer.disconnect();
  }
}

function newSpaceBytes(): number {
  for (const space of getHeapSpaceStatistics())
    if (space.space_name === "new_space") return space.space_size;
  return 0;
}

/** How often the idle trim looks at the event loop. */
export const IDLE_CHECK_MS = 10_000;
/**
 * Quiet looks in a row before the trim: 40–50 s without work. A shorter pause is part of a
 * burst; after a trim the young generation grows back over thousands of calls, each costing more
 * meanwhile (a burst of 3,000 calls 15 s after the last one cost ~30 % more CPU per call).
 */
export const QUIET_LOOKS = 4;
/** Share of a look's interval the event loop may have been busy for mcpx to count as idle. */
const QUIET_SHARE = 0.01;

export interface IdleTrimOptions {
  clock: Clock;
  /** Milliseconds the event loop has been busy so far (default from `performance.eventLoopUtilization()`). */
  busyMs?: () => number;
  /** A full, memory-reducing GC (default V8's `gc()`, exposed for this). */
  collect?: () => void;
  intervalMs?: number;
}

/**
 * Gives memory back once mcpx is idle. V8 sizes its young generation for the busiest moment it
 * saw (start-up, a burst of calls: 32 MB) and keeps it while nothing allocates: an idle mcpx held
 * ~113 MB of RSS for good. So when the event loop was busy less than 1 % of each of
 * `QUIET_LOOKS` looks in a row (no request, no work: V8 shrinks the young generation at a full
 * GC only while allocation has stopped for a few seconds), one full GC runs, which shrinks the
 * young generation to 1 MB and returns the freed pages (`npm run bench -- cpu`). One collection
 * per quiet period (~20 ms of CPU on a ~25 MB heap), none while anything runs; the next activity
 * arms it again.
 */
export class IdleTrim {
  private readonly busyMs: () => number;
  private readonly collect: () => void;
  private readonly intervalMs: number;
  private last: number;
  private quietLooks = 0;
  /** A collection ran since the last activity: nothing more to give back. */
  private trimmed = false;
  private timer: unknown;
  private stopped = false;
  /** Collections run so far. */
  count = 0;

  constructor(private readonly options: IdleTrimOptions) {
    this.busyMs = options.busyMs ?? (() => performance.eventLoopUtilization().active);
    // V8's gc() is fetched at the first trim, not at start-up (it makes a vm context).
    let gc: (() => void) | undefined;
    this.collect = options.collect ?? (() => (gc ??= exposedGc())());
    this.intervalMs = options.intervalMs ?? IDLE_CHECK_MS;
    this.last = this.busyMs();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => this.look(), this.intervalMs);
  }

  private look(): void {
    const busy = this.busyMs();
    if (busy - this.last > this.intervalMs * QUIET_SHARE) {
      this.quietLooks = 0;
      this.trimmed = false;
    } else if (++this.quietLooks >= QUIET_LOOKS && !this.trimmed) {
      this.collect();
      this.count += 1;
      this.trimmed = true;
    }
    // The collection's own time is not activity.
    this.last = this.busyMs();
    this.schedule();
  }
}

/** V8's `gc()`: the flag is on only while a fresh context is made, which then holds it. */
function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
