/**
 * Downstream clients of either protocol era behind one small interface, so a suite can run the
 * same checks through each: the legacy one is the 2025-era SDK v2 client the proxy helpers
 * connect; the modern one an SDK v2 client pinned to 2026-07-28.
 */
import {
  Client as ModernClient,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
  type Client as LegacyClient,
} from "@modelcontextprotocol/client";

export type ClientEra = "legacy" | "modern";
type Level = "debug" | "info" | "notice" | "warning" | "error";

export interface CallOptions {
  onProgress?: (progress: { progress: number; total?: number }) => void;
  signal?: AbortSignal;
  /** The least severe log level this client wants while the call runs. */
  logLevel?: Level;
}

export interface LogLine {
  level: string;
  logger?: string;
  data: unknown;
}

/** A tool result as either client returns it. */
export type ToolAnswer = Record<string, unknown> & { content?: unknown; isError?: unknown };

/** What the era matrix does with a downstream client. */
export interface Downstream {
  readonly era: ClientEra;
  /** Run a tool through the `call` meta-tool. */
  call(method: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolAnswer>;
  /** The text of describe(target). */
  describe(target: string): Promise<string>;
  /** Resolves at the next tools list_changed mcpx sends this client. */
  nextToolsChanged(): Promise<void>;
  /** Log messages received so far. */
  readonly logs: LogLine[];
  close(): Promise<void>;
}

function firstText(result: ToolAnswer): string {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

/** Wrap a connected SDK 1.x client (the one startStdio/startHttp give). */
export function legacyDownstream(client: LegacyClient): Downstream {
  const logs: LogLine[] = [];
  let toolsChanged: (() => void)[] = [];
  client.setNotificationHandler("notifications/message", (n) => {
    logs.push(n.params);
  });
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    for (const resolve of toolsChanged.splice(0)) resolve();
  });
  let level: Level | undefined;
  return {
    era: "legacy",
    logs,
    async call(method, args, options = {}) {
      // Legacy clients set one level per session.
      if (options.logLevel && options.logLevel !== level) {
        await client.setLoggingLevel(options.logLevel);
        level = options.logLevel;
      }
      return client.callTool(
        { name: "call", arguments: { method, arguments: args } },
        {
          ...(options.onProgress && { onprogress: options.onProgress }),
          ...(options.signal && { signal: options.signal }),
          timeout: 60_000,
        },
      );
    },
    async describe(target) {
      return firstText(await client.callTool({ name: "describe", arguments: { method: target } }));
    },
    nextToolsChanged: () =>
      new Promise<void>((resolve) => (toolsChanged = [...toolsChanged, resolve])),
    close: () => client.close(),
  };
}

/** An SDK v2 client pinned to the modern era, on mcpx's streamable HTTP endpoint. */
export async function modernDownstream(url: string): Promise<Downstream> {
  const client = new ModernClient(
    { name: "mcpx-test-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const logs: LogLine[] = [];
  const toolsChanged: (() => void)[] = [];
  client.setNotificationHandler("notifications/message", (n) => {
    logs.push(n.params);
  });
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    for (const resolve of toolsChanged.splice(0)) resolve();
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // Modern servers announce list changes only on a listen stream.
  const subscription = await client.listen({ toolsListChanged: true });
  return {
    era: "modern",
    logs,
    call: (method, args, options = {}) =>
      client.callTool(
        {
          name: "call",
          arguments: { method, arguments: args },
          ...(options.logLevel && { _meta: { [LOG_LEVEL_META_KEY]: options.logLevel } }),
        },
        {
          ...(options.onProgress && { onprogress: options.onProgress }),
          ...(options.signal && { signal: options.signal }),
          timeout: 60_000,
        },
      ),
    async describe(target) {
      return firstText(await client.callTool({ name: "describe", arguments: { method: target } }));
    },
    nextToolsChanged: () => new Promise<void>((resolve) => toolsChanged.push(resolve)),
    async close() {
      await subscription.close();
      await client.close();
    },
  };
}
