/**
 * Traces and metrics of one proxy (issue 29), loaded by serve.ts only when one of them is on:
 * prom-client and the OpenTelemetry SDK never load otherwise (and prom-client not before it is
 * needed: metrics.ts). Metrics are served as
 * `GET /metrics` on the HTTP port (mounted beside the dashboard) or, over stdio, on a loopback
 * port of their own (`--metrics-port`); who may read them follows the dashboard's rules
 * (dashboard/auth.ts): without `auth` only this machine, with `auth` a bearer token, whose
 * caller sees only the series of its profile's servers.
 */
import { createServer, type Server } from "node:http";
import type { Express, Request, Response } from "express";
import { AuthThrottle, DEFAULT_THROTTLE } from "../auth/throttle.js";
import { Authenticator } from "../auth/authenticator.js";
import { DashboardAuth } from "../dashboard/auth.js";
import { TokenEconomy } from "../dashboard/economy.js";
import { errorMessage } from "../errors.js";
import { lazyImport } from "../install.js";
import type { ProxyContext } from "../server/context.js";
import { ProxyMetrics } from "./metrics.js";
import type { Tracing, TracingOptions } from "./tracing.js";

export interface TelemetryOptions {
  metrics: boolean;
  /** Traces on, and where to: absent means off. */
  tracing?: TracingOptions;
}

export interface Telemetry {
  readonly metrics: ProxyMetrics | undefined;
  /** Mount `GET /metrics` on the HTTP server's app (a no-op without metrics). */
  mount(app: Express, tokens: Authenticator): void;
  /** Serve `/metrics` alone on 127.0.0.1:`port` (stdio `--metrics-port`). */
  listen(port: number): Promise<{ port: number; close(): Promise<void> }>;
  /** Stop listening to the proxy; export the spans still queued. */
  close(): Promise<void>;
}

/**
 * Start what `options` turns on. The OpenTelemetry SDK (tracing.ts, ~10 MB of RSS) is imported
 * only when traces are on; prom-client only at the first scrape (or after a few hundred calls)
 * when metrics are (metrics.ts).
 */
export async function startTelemetry(
  ctx: ProxyContext,
  options: TelemetryOptions,
): Promise<Telemetry> {
  const metrics = options.metrics
    ? new ProxyMetrics(ctx, new TokenEconomy(ctx.registry))
    : undefined;
  let tracing: Tracing | undefined;
  if (options.tracing) {
    const { createTracing } = await lazyImport(() => import("./tracing.js"));
    tracing = createTracing(options.tracing);
    ctx.executor.tracer = tracing.tracer;
    ctx.logger.info(
      `traces on: OTLP/HTTP to ${options.tracing.url ?? "the OTEL_EXPORTER_OTLP_* endpoint"}`,
    );
  }
  const mount = (app: Express, tokens: Authenticator) => {
    if (!metrics) return;
    const auth = new DashboardAuth(ctx, tokens);
    app.get("/metrics", (req, res) => void scrape(ctx, metrics, auth, req, res));
  };
  return {
    metrics,
    mount,
    listen: async (port) => {
      const { default: express } = await lazyImport(() => import("express"));
      const app = express();
      app.disable("x-powered-by");
      mount(
        app,
        new Authenticator(ctx.logger, new AuthThrottle(ctx.logger, Date.now, DEFAULT_THROTTLE)),
      );
      const server = createServer(app);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
      });
      const address = server.address();
      return {
        port: typeof address === "object" && address ? address.port : port,
        close: () => closeServer(server),
      };
    },
    close: async () => {
      metrics?.close();
      if (tracing) {
        ctx.executor.tracer = undefined;
        await tracing.close().catch((err: unknown) => {
          ctx.logger.warn(`traces not exported at shutdown: ${errorMessage(err)}`);
        });
      }
    },
  };
}

async function scrape(
  ctx: ProxyContext,
  metrics: ProxyMetrics,
  auth: DashboardAuth,
  req: Request,
  res: Response,
): Promise<void> {
  const viewer = await auth.viewer(req, res, false);
  if (!viewer) return;
  try {
    const caller = viewer.caller;
    const visible =
      caller === undefined
        ? undefined
        : new Set(
            ctx.views
              .forCaller(caller)
              .servers()
              .map((s) => s.name),
          );
    const body = await metrics.text(visible && ((server) => visible.has(server)));
    res.set("Cache-Control", "no-store").type(metrics.contentType).send(body);
  } catch (err) {
    ctx.logger.error(`/metrics failed: ${errorMessage(err)}`);
    if (!res.headersSent) res.status(500).type("text").send("Internal error\n");
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
