/**
 * `mcpx login <config> <server>`: sign in to an OAuth-protected remote server of the config
 * (src/upstream/oauth/login.ts). Opens the browser — `$BROWSER` when set (as xdg-open and Python's
 * webbrowser read it), else the platform's opener — or with --no-browser (or no display and no
 * `$BROWSER`) prints the URL on stderr and reads the redirect URL pasted on stdin. Exit 0 signed
 * in, 1 the sign-in failed, 2 bad config or server.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { LoginOptions, LogoutOptions } from "../cli.js";
import { ConfigError, loadConfig, type Config, type ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import { createLogger } from "../logger.js";
import { signIn } from "../upstream/oauth/login.js";
import { scopeUnion } from "../upstream/oauth/step-up.js";
import { defaultStateDir, TokenStore, type SignInStore } from "../upstream/oauth/store.js";
import type { Logger } from "../logger.js";
import { openShared } from "../shared/index.js";
import { sessionKey } from "../server/session-token.js";
import { sharedSignIns } from "../proxy.js";
import { loadOptions } from "./load.js";
import { fail } from "./output.js";

type Remote = ServerConfig & { spec: { transport: "http" | "sse"; url: string } };

/** The config's remote server `name`, or the exit code of what is wrong (printed). */
export function remoteServer(
  o: LoginOptions | LogoutOptions,
): { config: Config; server: Remote } | number {
  let config: Config;
  try {
    config = loadConfig(o.file, process.env, loadOptions(o));
  } catch (err) {
    if (err instanceof ConfigError) return fail(2, err.message, "Fix each key named above.");
    throw err;
  }
  const server = config.servers.find((s) => s.name === o.server);
  if (!server) {
    const names = config.servers.map((s) => s.name).join(", ") || "none";
    return fail(2, `no server "${o.server}" in ${config.file}.`, `Its servers: ${names}.`);
  }
  if (server.spec.transport === "stdio") {
    return fail(
      2,
      `server "${o.server}" is a local command: mcpx signs in only to remote (http, sse) servers.`,
      "Give it credentials through its env instead.",
    );
  }
  return { config, server: server as Remote };
}

export async function login(o: LoginOptions): Promise<number> {
  const found = remoteServer(o);
  if (typeof found === "number") return found;
  const { config, server } = found;
  const logger = createLogger({ level: "warn" });
  logger.addSecrets(config.secrets);
  const signIns = openSignIns(config, logger);
  const store = signIns.store;
  const browser = process.env.BROWSER?.trim();
  const headless =
    o.noBrowser ||
    (!browser &&
      process.platform === "linux" &&
      !process.env.DISPLAY &&
      !process.env.WAYLAND_DISPLAY);
  // Step-up: what the sign-in had, what the server asked for since (403 insufficient_scope), and
  // --scope, together; none of them: what the server's challenge or metadata names.
  const earlier = await store.read(server.spec.url).catch(() => undefined);
  const client = server.spec.oauth;
  const scope = scopeUnion(
    client?.scopes?.join(" "),
    earlier?.tokens?.scope,
    earlier?.wantedScope,
    o.scope,
  );
  const lines = createInterface({ input: process.stdin, terminal: false });
  const pasted = new Promise<string>((resolve) => {
    lines.on("line", (line) => {
      if (line.trim()) resolve(line);
    });
  });
  try {
    const result = await signIn({
      resource: server.spec.url,
      store,
      logger,
      pasted,
      ...(scope && { scope }),
      ...(client && { client }),
      configKey: `mcpServers.${server.name}.oauth`,
      open: (authorizationUrl) => {
        const url = authorizationUrl.toString();
        const opened = !headless && openBrowser(url, browser);
        process.stderr.write(
          opened
            ? `mcpx: opened the browser to sign in to ${server.name}. If it did not open, visit:\n  ${url}\n`
            : `mcpx: to sign in to ${server.name}, open this URL in a browser:\n  ${url}\nthen paste here the address the browser was sent to (http://127.0.0.1:…/callback?…):\n`,
        );
      },
    });
    process.stderr.write(
      `mcpx: signed in to ${server.name} at ${result.issuer}${result.scope ? ` (scope: ${result.scope})` : ""}; tokens in ${store.where}\n`,
    );
    return 0;
  } catch (err) {
    return fail(
      1,
      `sign-in to ${server.name} failed: ${logger.redact(errorMessage(err))}`,
      `Run mcpx login ${o.file} ${o.server} again.`,
    );
  } finally {
    lines.close();
    process.stdin.destroy();
    await signIns.close();
  }
}

/**
 * Where this config's sign-ins are: Redis, sealed, when it has `redis` with an `encryptionKey`
 * (the same namespace as its replicas: src/proxy.ts), else the state folder.
 */
export function openSignIns(
  config: Config,
  logger: Logger,
): { store: SignInStore; close(): Promise<void> } {
  if (config.redis === undefined || config.redisKey === undefined) {
    return { store: new TokenStore(defaultStateDir(process.env)), close: async () => {} };
  }
  const shared = openShared({ redis: config.redis, deployment: sessionKey(config), logger });
  const store = sharedSignIns(config, shared, logger);
  return {
    store: store ?? new TokenStore(defaultStateDir(process.env)),
    close: () => shared.close(),
  };
}

/**
 * Open `url` in the user's browser; false when no opener could be started. `browser` is
 * `$BROWSER`: a command line, run by /bin/sh with the URL as its argument (`%s` in it stands for
 * the URL, else the URL is appended), its first entry when it lists several with `:` as
 * xdg-open allows. The URL is passed as "$1", never pasted into the shell's text.
 */
export function openBrowser(url: string, browser?: string): boolean {
  const first = browser
    ?.split(":")
    .map((c) => c.trim())
    .find(Boolean);
  const [command, args] = first
    ? [
        "/bin/sh",
        ["-c", first.includes("%s") ? first.replaceAll("%s", '"$1"') : `${first} "$1"`, "sh", url],
      ]
    : [
        process.platform === "darwin"
          ? "open"
          : process.platform === "win32"
            ? "explorer"
            : "xdg-open",
        [url],
      ];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
    return child.pid !== undefined;
  } catch {
    return false;
  }
}
