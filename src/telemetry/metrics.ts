/**
 * Prometheus metrics of one proxy. The hooks on the executor's call events and the registry's
 * status changes count from the start in plain numbers; prom-client (prom.ts, with its own
 * Registry per proxy) loads only on the first scrape, or once `PENDING_CALLS` ended calls wait to
 * be counted, so an idle proxy never loads it (issue 30: ~10 MB of idle RSS) and every counter is
 * exact from the first call. Nothing on the call path waits: a listener does a few updates and
 * returns.
 */
import type { TokenEconomy } from "../dashboard/economy.js";
import { errorMessage } from "../errors.js";
import type { CallEnded } from "../executor/events.js";
import type { ServerStatus } from "../registry/types.js";
import type { ProxyContext } from "../server/context.js";
import type { PromMetrics } from "./prom.js";
import type { CallCount, MetricsTally } from "./tally.js";
import { lazyImport } from "../install.js";

/** Ended calls kept before prom-client loads; at this many it loads and counts them in order. */
export const PENDING_CALLS = 256;

/** prom-client's exposition format (its `Registry.PROMETHEUS_CONTENT_TYPE`). */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export class ProxyMetrics implements MetricsTally {
  inFlight = 0;
  readonly restarts = new Map<string, number>();
  private readonly stops: (() => void)[] = [];
  /** Each server's last status, to count its recoveries (down → ready). */
  private readonly lastStatus = new Map<string, ServerStatus>();
  /** Calls ended before prom-client loaded, in order. */
  private pending: CallCount[] = [];
  private prom: PromMetrics | undefined;
  private loading: Promise<PromMetrics> | undefined;
  private closed = false;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly economy: TokenEconomy,
  ) {
    const known = (server: string | undefined) =>
      server !== undefined && ctx.registry.server(server) !== undefined ? server : "";
    this.stops.push(
      ctx.executor.events.on({
        started: () => {
          this.inFlight++;
        },
        ended: (e: CallEnded) => {
          this.inFlight--;
          const seconds = e.durationMs / 1000;
          let count: CallCount;
          if (e.ref === "script" && e.server === undefined) {
            count = { script: true, outcome: e.outcome, seconds };
          } else {
            // Only names mcpx knows become labels: a client's made-up refs must not grow series.
            const server = known(e.server);
            const tool = e.outcome === "refused" || server === "" ? "" : e.tool;
            count = {
              script: false,
              server,
              tool,
              outcome: e.outcome,
              seconds,
              ...(e.compression && { compression: e.compression }),
            };
          }
          this.counted(count);
        },
      }),
    );
    this.stops.push(
      ctx.registry.onChange((name) => {
        economy.invalidate();
        const status = ctx.registry.server(name)?.status;
        if (status === undefined) return;
        if (this.lastStatus.get(name) === "down" && status === "ready")
          this.restarts.set(name, (this.restarts.get(name) ?? 0) + 1);
        this.lastStatus.set(name, status);
      }),
    );
    this.stops.push(ctx.views.onChange(() => economy.invalidate()));
  }

  /** Whether prom-client is loaded (tests; lazy-modules.test.ts checks it from outside). */
  get loaded(): boolean {
    return this.prom !== undefined;
  }

  /**
   * The exposition text. `visible`: keep only the series of servers a viewer may see (under
   * auth, its profile's); series without a server label stay.
   */
  async text(visible?: (server: string) => boolean): Promise<string> {
    // Closed before prom-client ever loaded: an empty registry, as a cleared one reads.
    if (this.closed && !this.prom) return "\n";
    const prom = await this.load();
    const text = await prom.registry.metrics();
    if (!visible) return text;
    return text
      .split("\n")
      .filter((line) => {
        if (line.startsWith("#")) return true;
        const m = /[{,]server="((?:[^"\\]|\\.)*)"/.exec(line);
        return !m || m[1] === "" || visible(unescapeLabel(m[1] ?? ""));
      })
      .join("\n");
  }

  get contentType(): string {
    return this.prom?.registry.contentType ?? CONTENT_TYPE;
  }

  close(): void {
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
    this.pending = [];
    this.prom?.registry.clear();
  }

  private counted(count: CallCount): void {
    if (this.prom) return this.prom.count(count);
    // prom-client failed to load (a scrape tries again): the oldest waiting call is dropped.
    if (!this.loading && this.pending.length >= PENDING_CALLS) this.pending.shift();
    this.pending.push(count);
    if (this.pending.length === PENDING_CALLS) {
      this.load().catch((err: unknown) => {
        this.ctx.logger.error(`metrics: prom-client did not load: ${errorMessage(err)}`);
      });
    }
  }

  /** prom-client and this proxy's registry, loaded once; the waiting calls counted in order. */
  private load(): Promise<PromMetrics> {
    this.loading ??= lazyImport(() => import("./prom.js")).then(
      ({ PromMetrics }) => {
        const prom = new PromMetrics(this.ctx, this.economy, this);
        for (const count of this.pending.splice(0)) prom.count(count);
        if (this.closed) prom.registry.clear();
        else this.prom = prom;
        return prom;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }
}

function unescapeLabel(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}
