import { randomUUID } from "node:crypto";
import type { Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import { localhostHostValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express, { type Request, type Response } from "express";
import getPort from "get-port";
import { errorMessage } from "../errors.js";
import { healthReport } from "../health/status.js";
import type { ProxyContext } from "./context.js";
import { createMcpServer, type DownstreamServer } from "./mcp-server.js";

export interface HttpOptions {
  host: string;
  port: number;
}

export interface HttpHandle {
  /** The URL actually served, e.g. http://127.0.0.1:3000/mcp */
  readonly url: string;
  readonly port: number;
  /** True when the requested port was taken and another was chosen. */
  readonly portChanged: boolean;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  downstream: DownstreamServer;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
/** Tool arguments can carry whole files (filesystem write_file): allow more than express's 100 kB. */
const BODY_LIMIT = "32mb";

/**
 * Serve streamable HTTP at /mcp: POST for requests, GET for the server-to-client stream (Claude
 * Code opens it; a 405 breaks it), DELETE to end a session. One SDK server per session.
 */
export async function serveHttp(ctx: ProxyContext, options: HttpOptions): Promise<HttpHandle> {
  const log = ctx.logger;
  const sessions = new Map<string, Session>();
  const app = express();
  // DNS-rebinding protection: a page on another site must not reach a loopback proxy by name.
  if (LOOPBACK.has(options.host)) app.use(localhostHostValidation());
  app.use(express.json({ limit: BODY_LIMIT }));

  // 200 whenever mcpx serves; the body says how each upstream is doing.
  app.get("/healthz", (_req: Request, res: Response) => {
    res.json(healthReport(ctx.registry, (t) => ctx.logger.redact(t)));
  });

  const existing = (req: Request): Session | undefined => {
    const id = req.header("mcp-session-id");
    return id === undefined ? undefined : sessions.get(id);
  };

  app.post("/mcp", async (req: Request, res: Response) => {
    try {
      let session = existing(req);
      if (!session) {
        if (req.header("mcp-session-id") !== undefined) {
          jsonRpcError(res, 404, -32001, "Session not found: initialize a new session.");
          return;
        }
        if (!isInitializeRequest(req.body)) {
          jsonRpcError(
            res,
            400,
            -32000,
            "Bad request: no mcp-session-id header and not an initialize request.",
          );
          return;
        }
        const downstream = createMcpServer(ctx);
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, downstream });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
          void downstream.close().catch(() => {
            /* already closed */
          });
        };
        await downstream.server.connect(transport);
        session = { transport, downstream };
      }
      await session.transport.handleRequest(req, res, req.body);
    } catch (err) {
      log.error(`HTTP request failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  });

  const sessionRequest = async (req: Request, res: Response) => {
    const session = existing(req);
    if (!session) {
      jsonRpcError(
        res,
        req.header("mcp-session-id") ? 404 : 400,
        -32000,
        "Unknown or missing mcp-session-id.",
      );
      return;
    }
    try {
      await session.transport.handleRequest(req, res);
    } catch (err) {
      log.error(`HTTP ${req.method} failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
  app.get("/mcp", sessionRequest);
  app.delete("/mcp", sessionRequest);

  const { server, port, portChanged } = await listen(app, options);
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/mcp`;
  return {
    url,
    port,
    portChanged,
    close: async () => {
      // Stop accepting first, then end every session (their SSE streams keep sockets open).
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map((s) => s.downstream.close()));
      server.closeAllConnections();
      await closing;
    },
  };
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/** Listen on the requested port; when it is taken, on a free one chosen by get-port. */
async function listen(
  app: express.Express,
  { host, port }: HttpOptions,
): Promise<{ server: NodeServer; port: number; portChanged: boolean }> {
  try {
    const server = await bind(app, host, port);
    return { server, port: (server.address() as AddressInfo).port, portChanged: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const free = await getPort({ host });
    const server = await bind(app, host, free);
    return { server, port: (server.address() as AddressInfo).port, portChanged: true };
  }
}

function bind(app: express.Express, host: string, port: number): Promise<NodeServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once("listening", () => resolve(server));
    server.once("error", reject);
  });
}
