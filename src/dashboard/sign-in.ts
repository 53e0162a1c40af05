/**
 * The dashboard's "Sign in" for a server that needs sign-in (docs/oauth.md): `POST /api/signin`
 * (`{ "server": "<name>" }`) starts the same flow as `mcpx login` (src/upstream/oauth/login.ts)
 * inside the running mcpx and answers the authorization URL; the page sends the browser there.
 * The authorization server redirects back to the sign-in's one-time loopback listener on
 * 127.0.0.1 (so the browser must run on mcpx's machine), the tokens go to the same store, and the
 * store's watcher reconnects the server: its tools reach clients through list_changed. Only the
 * dashboard's signed-in viewer, for a server its profile sees; JSON only, after the Origin check.
 */
import express, { type Request, type RequestHandler, type Response } from "express";
import { errorMessage, signInCommandOf } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Registry } from "../registry/registry.js";
import type { CatalogView } from "../registry/view.js";
import { signIn } from "../upstream/oauth/login.js";
import { scopeUnion } from "../upstream/oauth/step-up.js";
import type { Viewer } from "./auth.js";

/** What starting a sign-in answers: where to send the browser, or why not. */
export type SignInStart = { url: string } | { status: 400 | 404 | 409 | 503; error: string };

export class DashboardSignIn {
  /** Sign-ins under way, by resource: a second click gets the same authorization URL. */
  private readonly running = new Map<string, Promise<string>>();

  constructor(
    private readonly registry: Registry,
    private readonly logger: Logger,
  ) {}

  /** Start signing in to `name` if `view` shows it and it needs sign-in. */
  async start(view: CatalogView, name: unknown): Promise<SignInStart> {
    const store = this.registry.signIns;
    if (!store) return { status: 503, error: "mcpx keeps no sign-ins here (no state folder)." };
    if (typeof name !== "string" || name === "" || name.length > 500)
      return { status: 400, error: 'Send {"server": "<name>"}.' };
    // A hidden server is answered exactly like a missing one.
    const server = view.server(name);
    if (!server) return { status: 404, error: "No such server." };
    const spec = server.config.spec;
    if (spec.transport === "stdio" || !signInCommandOf(server.error))
      return { status: 409, error: `${name} does not need sign-in.` };
    const resource = spec.url;
    let pending = this.running.get(resource);
    if (!pending) {
      const earlier = await store.read(resource).catch(() => undefined);
      const scope = scopeUnion(
        spec.oauth?.scopes?.join(" "),
        earlier?.tokens?.scope,
        earlier?.wantedScope,
      );
      let shown: (url: string) => void = () => {};
      const url = new Promise<string>((resolve) => (shown = resolve));
      const done = signIn({
        resource,
        store,
        logger: this.logger,
        ...(scope && { scope }),
        ...(spec.oauth && { client: spec.oauth }),
        configKey: `mcpServers.${name}.oauth`,
        open: (u) => shown(u.toString()),
      });
      pending = Promise.race([
        url,
        done.then(() => {
          throw new Error("the server asked for no sign-in");
        }),
      ]);
      this.running.set(resource, pending);
      void done
        .then(
          (r) => this.logger.info(`dashboard: signed in to ${name} at ${r.issuer}`),
          (err: unknown) =>
            this.logger.warn(`dashboard: sign-in to ${name} failed: ${errorMessage(err)}`),
        )
        .finally(() => this.running.delete(resource));
    }
    try {
      return { url: await pending };
    } catch (err) {
      return { status: 409, error: `sign-in to ${name} failed: ${errorMessage(err)}` };
    }
  }
}

/** The handlers of `POST /api/signin`: signed in (before the body is read), JSON only. */
export function signInRoute(
  signIns: DashboardSignIn,
  viewerOf: (req: Request, res: Response) => Promise<Viewer | undefined>,
  viewOf: (viewer: Viewer) => CatalogView,
  logger: Logger,
): RequestHandler[] {
  return [
    ...signedInJson(viewerOf),
    (req, res) => {
      const viewer = res.locals.viewer as Viewer;
      const name = (req.body as Record<string, unknown> | undefined)?.server;
      signIns.start(viewOf(viewer), name).then(
        (result) => {
          if ("error" in result) res.status(result.status).json({ error: result.error });
          else {
            logger.info(`dashboard: ${viewer.caller ?? "this machine"} started a sign-in`);
            res.json(result);
          }
        },
        (err: unknown) => {
          logger.error(`dashboard: ${req.path} failed: ${errorMessage(err)}`);
          if (!res.headersSent) res.status(500).json({ error: "Internal error" });
        },
      );
    },
  ];
}

/**
 * The first handlers of a dashboard POST that changes something: JSON only (415 otherwise; no
 * other site's form can post it), signed in before the body is read (the viewer in
 * `res.locals.viewer`), then the body parsed (4 KB at most).
 */
export function signedInJson(
  viewerOf: (req: Request, res: Response) => Promise<Viewer | undefined>,
): RequestHandler[] {
  return [
    async (req, res, next) => {
      if (!req.is("application/json")) {
        res.status(415).json({ error: "Send JSON: Content-Type: application/json." });
        return;
      }
      const viewer = await viewerOf(req, res);
      if (!viewer) return;
      res.locals.viewer = viewer;
      next();
    },
    express.json({ limit: "4kb" }),
  ];
}
