/**
 * The web dashboard, served with `--port` beside /mcp on the same origin: the page at `/`, its
 * files under `/assets/`, a JSON API under `/api/` and live updates at `/api/events`
 * (server-sent events). Host and Origin are checked before these routes (http.ts); auth.ts says
 * who may look. Everything it shows comes from hooks the proxy already has (state.ts), bounded.
 */
import type { ProxyContext } from "../server/context.js";
import { lazyImport } from "../install.js";
import type { MountedRoutes } from "../server/http.js";
import type { Authenticator } from "../auth/authenticator.js";
import { DashboardApi } from "./api.js";
import type { DashboardParts } from "./routes.js";
import { Assets } from "./assets.js";
import { DashboardAuth } from "./auth.js";
import { TokenEconomy } from "./economy.js";
import { DashboardState, DEFAULT_STATE_LIMITS, type StateLimits } from "./state.js";
import { DEFAULT_STREAM_LIMITS, EventHub, type StreamLimits } from "./stream.js";
import { TrustReview } from "./trust.js";

export interface DashboardOptions {
  tokens: Authenticator;
  limits?: { state?: Partial<StateLimits>; stream?: Partial<StreamLimits> };
}

export interface DashboardHandle extends MountedRoutes {
  /** Dashboards streaming now. */
  readonly streams: number;
  /** End every event stream and stop listening to the proxy. */
  close(): void;
}

/**
 * The dashboard's state, recording from now on; its routes join the HTTP server's app when the
 * app is built (routes.ts, with Express, at the first request that needs the app).
 */
export function mountDashboard(ctx: ProxyContext, options: DashboardOptions): DashboardHandle {
  const economy = new TokenEconomy(ctx.registry);
  // The hub asks the API (built below) only from its timers and requests, never before.
  const hub: EventHub = new EventHub(
    { visible: (v, e) => api.visible(v, e), status: (v) => api.status(v) },
    { ...DEFAULT_STREAM_LIMITS, ...options.limits?.stream },
  );
  const state = new DashboardState(
    ctx,
    (event) => {
      if (event.type === "status") hub.statusChanged();
      else
        hub.publish({
          type: event.type,
          data: event.record,
          ...(event.record.caller !== undefined && { caller: event.record.caller }),
        });
    },
    { ...DEFAULT_STATE_LIMITS, ...options.limits?.state },
  );
  const api = new DashboardApi(ctx, state, economy);
  const stopViews = ctx.views.onChange(() => api.invalidate());
  const auth = new DashboardAuth(ctx, options.tokens);
  const review = new TrustReview(ctx.registry, (text) => ctx.logger.redact(text));
  const assets = new Assets();

  const parts: DashboardParts = { ctx, auth, api, hub, review, assets };

  return {
    routes: async (app) => {
      const { dashboardRouter } = await lazyImport(() => import("./routes.js"));
      app.use(dashboardRouter(parts));
    },
    get streams() {
      return hub.size;
    },
    close: () => {
      hub.close();
      stopViews();
      state.close();
    },
  };
}
