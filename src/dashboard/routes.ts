/**
 * The dashboard's routes (index.ts holds its state): the page, its assets, sign-in and the JSON
 * API. Loaded with Express, when the HTTP server first builds its app (src/server/http-app.ts).
 */
import express, { type Request, type Response, type Router } from "express";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "../server/context.js";
import type { DashboardApi } from "./api.js";
import type { Assets } from "./assets.js";
import type { DashboardAuth, Viewer } from "./auth.js";
import { DashboardSignIn, signedInJson, signInRoute } from "./sign-in.js";
import type { EventHub } from "./stream.js";
import type { TrustReview } from "./trust.js";

/** What the routes serve from (index.ts). */
export interface DashboardParts {
  ctx: ProxyContext;
  auth: DashboardAuth;
  api: DashboardApi;
  hub: EventHub;
  review: TrustReview;
  assets: Assets;
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

/** The dashboard's routes, mounted beside /mcp. */
export function dashboardRouter({ ctx, auth, api, hub, review, assets }: DashboardParts): Router {
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
  return router;
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
