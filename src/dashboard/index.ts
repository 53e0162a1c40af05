/**
 * The web dashboard, served with `--port` beside /mcp on the same origin: the page at `/`, its
 * files under `/assets/`, a JSON API under `/api/` and live updates at `/api/events`
 * (server-sent events). Host and Origin are checked before these routes (http.ts); auth.ts says
 * who may look. Everything it shows comes from hooks the proxy already has (state.ts), bounded.
 */
import express, { type Express, type Request, type Response } from "express";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "../server/context.js";
import type { Authenticator } from "../auth/authenticator.js";
import { DashboardApi } from "./api.js";
import { Assets } from "./assets.js";
import { DashboardAuth, signedInJson, type Viewer } from "./auth.js";
import { TokenEconomy } from "./economy.js";
import { DashboardState, DEFAULT_STATE_LIMITS, type StateLimits } from "./state.js";
import { DEFAULT_STREAM_LIMITS, EventHub, type StreamLimits } from "./stream.js";
import { DashboardSignIn, signInRoute } from "./sign-in.js";
import { TrustReview } from "./trust.js";

export interface DashboardOptions {
  tokens: Authenticator;
  limits?: { state?: Partial<StateLimits>; stream?: Partial<StreamLimits> };
}

export interface DashboardHandle {
  /** Dashboards streaming now. */
  readonly streams: number;
  /** End every event stream and stop listening to the proxy. */
  close(): void;
}

/**
 * The page may run only its own script and style, load nothing from elsewhere, and not be
 * framed; no URL of it leaks to another site through Referer. (Not `no-referrer`: with it a
 * browser posts the sign-in form with `Origin: null`, which the Origin check refuses.)
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
};

/** Mount the dashboard's routes on the HTTP server's app. */
export function mountDashboard(
  app: Express,
  ctx: ProxyContext,
  options: DashboardOptions,
): DashboardHandle {
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

  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(PAGE_HEADERS);
    next();
  });
  router.get("/", async (req, res) => {
    const token = req.query.token;
    // `/?token=…`: exchanged for a cookie, and the address bar cleaned by the redirect.
    if (typeof token === "string") return auth.signIn(req, res, token);
    if (!(await auth.viewer(req, res, true))) return;
    sendAsset(res, assets, "index.html");
  });
  router.post("/login", express.urlencoded({ extended: false, limit: "4kb" }), (req, res) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    return auth.signIn(req, res, typeof token === "string" ? token : undefined);
  });
  router.post("/logout", (req, res) => auth.signOut(req, res));
  router.get("/assets/:file", (req, res) => {
    // The page's own script and style: no data, so no sign-in (the login page uses the style).
    sendAsset(res, assets, String(req.params.file));
  });

  const json =
    (fn: (viewer: Viewer, req: Request) => unknown) => async (req: Request, res: Response) => {
      const viewer = await auth.viewer(req, res, false);
      if (!viewer) return;
      try {
        const body = await fn(viewer, req);
        if (body === undefined) res.status(404).json({ error: "No such server." });
        else res.json(body);
      } catch (err) {
        ctx.logger.error(`dashboard: ${req.path} failed: ${errorMessage(err)}`);
        if (!res.headersSent) res.status(500).json({ error: "Internal error" });
      }
    };
  const query = (req: Request, key: string) => {
    const v = req.query[key];
    return typeof v === "string" ? v : undefined;
  };
  router.get(
    "/api/status",
    json((v) => api.status(v)),
  );
  router.get(
    "/api/servers/:name",
    json((v, req) => api.server(v, String(req.params.name))),
  );
  router.get(
    "/api/calls",
    json((v) => api.calls(v)),
  );
  router.get(
    "/api/logs",
    json((v, req) => api.logs(v, query(req, "server"), query(req, "level"))),
  );
  router.get(
    "/api/economy",
    json((v) => api.tokenEconomy(v)),
  );
  router.get(
    "/api/search",
    json((v, req) => api.search(v, (query(req, "q") ?? "").slice(0, 500))),
  );
  router.get(
    "/api/describe",
    json((v, req) => {
      const controller = new AbortController();
      req.on("close", () => controller.abort());
      return api.describe(v, (query(req, "name") ?? "").slice(0, 500), controller.signal);
    }),
  );
  router.get(
    "/api/trust",
    json((v) => review.pending(api.viewOf(v))),
  );
  // Approving changes what callers are served: the same sign-in as every route, and JSON only,
  // so no other site's form can post it (a cross-origin JSON post needs CORS, which we never allow;
  // the Origin check and the SameSite=Strict cookie stand before it too).
  router.post(
    "/api/trust/approve",
    ...signedInJson((req, res) => auth.viewer(req, res, false)),
    (req, res) => {
      const viewer = res.locals.viewer as Viewer;
      try {
        const ref = (req.body as Record<string, unknown> | undefined)?.ref;
        const result = review.approve(api.viewOf(viewer), ref);
        if ("error" in result) {
          res.status(result.status).json({ error: result.error });
          return;
        }
        ctx.logger.info(
          `dashboard: ${viewer.caller ?? "this machine"} approved ${result.approved.join("; ")}`,
        );
        res.json(result);
      } catch (err) {
        ctx.logger.error(`dashboard: ${req.path} failed: ${errorMessage(err)}`);
        if (!res.headersSent) res.status(500).json({ error: "Internal error" });
      }
    },
  );
  // "Sign in" for a server that needs it: the same rules as approving (sign-in.ts).
  router.post(
    "/api/signin",
    ...signInRoute(
      new DashboardSignIn(ctx.registry, ctx.logger),
      (req, res) => auth.viewer(req, res, false),
      (v) => api.viewOf(v),
      ctx.logger,
    ),
  );
  router.get("/api/events", async (req, res) => {
    const viewer = await auth.viewer(req, res, false);
    if (viewer) hub.open(req, res, viewer);
  });
  app.use(router);

  return {
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

function sendAsset(res: Response, assets: Assets, name: string): void {
  const asset = assets.get(name);
  if (!asset) {
    res
      .status(404)
      .type("text")
      .send(
        name === "index.html"
          ? "The dashboard page was not built: run npm run build."
          : "No such file.",
      );
    return;
  }
  res.type(asset.type).send(asset.body);
}
