import type { Config, ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PromptDef, ResourceDef, ResourceTemplateDef, ToolDef } from "../types.js";
import {
  createClientFactory,
  type ClientFactory,
  type ListKind,
  type ServerIdentity,
  type UpstreamSession,
} from "./connection.js";

export type ServerStatus = "starting" | "ready" | "failed";

/** What the registry knows about one upstream: renderable, no live handles. */
export interface ServerState {
  readonly name: string;
  readonly config: ServerConfig;
  status: ServerStatus;
  /** Why the server is failed (never contains config secrets: messages come from the SDK/OS). */
  error?: string;
  identity?: ServerIdentity;
  tools: ToolDef[];
  resources: ResourceDef[];
  resourceTemplates: ResourceTemplateDef[];
  prompts: PromptDef[];
  /** When the catalog of this server was last fetched (ms since epoch). */
  updatedAt?: number;
}

export interface RegistryOptions {
  logger: Logger;
  /** Injectable connector: tests and future pools can supply their own factories. */
  factoryFor?: (server: ServerConfig) => ClientFactory;
  /** Delay before retrying a server whose control session closed; 0 disables. */
  reconnectDelayMs?: number;
  now?: () => number;
}

type ChangeListener = (server: string) => void;

/**
 * The catalog of every upstream: discovered in parallel at startup, cached, refreshed when an
 * upstream announces `list_changed`. One control session per upstream stays open to receive
 * those announcements; calls never run on it (see the executor).
 */
export class Registry {
  private readonly states = new Map<string, ServerState>();
  private readonly factories = new Map<string, ClientFactory>();
  private readonly control = new Map<string, UpstreamSession>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(
    private readonly config: Config,
    private readonly options: RegistryOptions,
  ) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    for (const server of config.servers) {
      this.states.set(server.name, {
        name: server.name,
        config: server,
        status: "starting",
        tools: [],
        resources: [],
        resourceTemplates: [],
        prompts: [],
      });
      const factoryFor =
        options.factoryFor ??
        ((s: ServerConfig) =>
          createClientFactory(s, {
            logger: this.log,
            connectTimeoutMs: config.discoveryTimeoutMs,
          }));
      this.factories.set(server.name, factoryFor(server));
    }
  }

  /** Discover every upstream in parallel. Never rejects: a failing upstream is recorded as failed. */
  async start(): Promise<void> {
    await Promise.all([...this.states.keys()].map((name) => this.discover(name)));
  }

  /** Every server, in config order. */
  servers(): readonly ServerState[] {
    return [...this.states.values()];
  }

  server(name: string): ServerState | undefined {
    return this.states.get(name);
  }

  /** The factory that opens fresh sessions with `server`. */
  factory(server: string): ClientFactory | undefined {
    return this.factories.get(server);
  }

  /** Called with a server's name whenever its part of the catalog or its status changes. */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Close every control session (and so every upstream process the registry started). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const sessions = [...this.control.values()];
    this.control.clear();
    await Promise.allSettled(sessions.map((s) => s.close()));
  }

  private async discover(name: string): Promise<void> {
    const state = this.states.get(name);
    const factory = this.factories.get(name);
    if (!state || !factory || this.closed) return;
    const timeoutMs = this.config.discoveryTimeoutMs;
    const started = this.now();
    let session: UpstreamSession | undefined;
    try {
      session = await withTimeout(
        factory(),
        timeoutMs,
        `did not start within ${timeoutMs} ms`,
        (s) => void s.close(),
      );
      if (this.closed) {
        await session.close();
        return;
      }
      const opts = { timeoutMs };
      const [tools, resources, resourceTemplates, prompts] = await Promise.all([
        session.listTools(opts),
        session.listResources(opts),
        session.listResourceTemplates(opts),
        session.listPrompts(opts),
      ]);
      Object.assign(state, {
        status: "ready",
        identity: session.identity,
        tools,
        resources,
        resourceTemplates,
        prompts,
        updatedAt: this.now(),
      });
      delete state.error;
      this.keepControl(name, session);
      this.log.info(
        `${name}: ready, ${tools.length} tools, ${resources.length} resources in ${this.now() - started} ms`,
      );
    } catch (err) {
      if (session) void session.close().catch(() => {});
      state.status = "failed";
      state.error = errorMessage(err);
      this.log.warn(`${name}: failed to start: ${state.error}`);
    }
    this.emit(name);
  }

  private keepControl(name: string, session: UpstreamSession): void {
    this.control.set(name, session);
    session.onListChanged((kind) => void this.refresh(name, session, kind));
    session.onClosed(() => {
      if (this.closed || this.control.get(name) !== session) return;
      this.control.delete(name);
      const state = this.states.get(name);
      if (state) {
        state.status = "failed";
        state.error = "the upstream connection closed";
        this.log.warn(`${name}: connection closed`);
        this.emit(name);
      }
      const delay = this.options.reconnectDelayMs ?? 1_000;
      if (delay > 0) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          void this.discover(name);
        }, delay);
        timer.unref();
        this.timers.add(timer);
      }
    });
  }

  private async refresh(name: string, session: UpstreamSession, kind: ListKind): Promise<void> {
    const state = this.states.get(name);
    if (!state || this.closed) return;
    const opts = { timeoutMs: this.config.discoveryTimeoutMs };
    try {
      switch (kind) {
        case "tools":
          state.tools = await session.listTools(opts);
          break;
        case "resources":
          [state.resources, state.resourceTemplates] = await Promise.all([
            session.listResources(opts),
            session.listResourceTemplates(opts),
          ]);
          break;
        case "prompts":
          state.prompts = await session.listPrompts(opts);
          break;
        default: {
          const never: never = kind;
          throw new Error(`unknown list kind ${String(never)}`);
        }
      }
      state.updatedAt = this.now();
      this.log.info(`${name}: ${kind} list changed; catalog refreshed`);
      this.emit(name);
    } catch (err) {
      this.log.warn(`${name}: refreshing ${kind} failed: ${errorMessage(err)}`);
    }
  }

  private emit(name: string): void {
    for (const l of this.listeners) {
      try {
        l(name);
      } catch (err) {
        this.log.error(`change listener failed: ${errorMessage(err)}`);
      }
    }
  }
}

/**
 * Bound a startup promise. When the bound wins, `dispose` cleans up whatever the late promise
 * still produces, so a slow upstream is never left running.
 */
function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  message: string,
  dispose: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(message));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (late) dispose(value);
        else resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
