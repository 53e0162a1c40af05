/**
 * `mcpx validate <file>`: load a config as `mcpx <file>` would, without starting anything; with
 * --connect, start each server and list its tools. Exit 0 when valid (and, with --connect,
 * every server started), 1 otherwise. No secret value is printed: env and header values, URL user
 * names, passwords and query values show as `***`, and everything else is redacted against the config's secrets.
 */
import type { ValidateOptions } from "../cli.js";
import { labelOf } from "../config/formats/read.js";
import { ConfigError, loadConfig, type Config, type ServerConfig } from "../config/load.js";
import { maskedUrl } from "../config/secrets.js";
import { errorMessage } from "../errors.js";
import { connectAll } from "./connect.js";
import { checkUntrusted, isUntrustedRefusal, loadOptions } from "./load.js";
import { fail, redactor } from "./output.js";

export async function validate(o: ValidateOptions): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(o.file, process.env, loadOptions(o));
    await checkUntrusted(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      return fail(1, err.message, "Fix each key named above, then run mcpx validate again.");
    }
    if (isUntrustedRefusal(err)) return fail(1, err.message);
    throw err;
  }
  const redact = redactor(config.secrets);
  const lines = [
    `mcpx: ${config.file} is valid${config.format && config.format !== "mcpx" ? ` (${labelOf(config.format)} format)` : ""}${config.trust ? ", untrusted" : ""}: ${config.servers.length} server${config.servers.length === 1 ? "" : "s"}`,
    ...config.servers.map((s) => `  ${s.name.padEnd(16)} ${describeServer(s)}`),
    ...config.warnings.map((w) => `  warning: ${w}`),
  ];
  process.stdout.write(redact(lines.join("\n")) + "\n");
  if (!o.connect) return 0;

  const { proxy, servers } = await connectAll(config);
  try {
    let down = 0;
    const out: string[] = [];
    for (const s of servers) {
      if (s.status === "ready" || s.status === "degraded") {
        out.push(`  ${s.name}: ${s.tools.length} tools: ${s.tools.map((t) => t.name).join(", ")}`);
      } else {
        down += 1;
        out.push(`  ${s.name}: did not start: ${failedRequest(s.error)}`);
      }
      // Optional requests it failed: it works, without what they would have listed.
      for (const [method, why] of Object.entries(s.notes ?? {})) {
        out.push(
          `  ${s.name}: note: ${method} failed (${why}); treated as empty, the server works`,
        );
      }
    }
    process.stdout.write(redact(out.join("\n")) + "\n");
    if (down > 0) {
      return fail(
        1,
        `${down} of ${servers.length} servers did not start.`,
        "Each line above names the request that failed. When it is initialize, run the server's command by hand to see why, or check its url and headers; when it is tools/list, the server started and answered that request with an error.",
      );
    }
    return 0;
  } catch (err) {
    return fail(1, redact(errorMessage(err)));
  } finally {
    await proxy.close();
  }
}

/** A discovery error naming the request that failed: tools/list says so itself, else the connection. */
function failedRequest(error: string | undefined): string {
  if (!error) return "initialize failed";
  if (error.startsWith("tools/list failed") || error.startsWith("did not start within"))
    return error;
  return `initialize failed: ${error}`;
}

/** One line about a server with every value of env and headers hidden. */
function describeServer(s: ServerConfig): string {
  const spec = s.spec;
  const hidden = (map: Record<string, string>) =>
    Object.keys(map)
      .map((k) => `${k}=***`)
      .join(" ");
  if (spec.transport === "stdio") {
    const env = hidden(spec.env);
    return `stdio  ${[spec.command, ...spec.args].join(" ")}${env ? `  env: ${env}` : ""}${spec.cwd ? `  cwd: ${spec.cwd}` : ""}${filterNote(s)}`;
  }
  const headers = hidden(spec.headers);
  return `${spec.transport.padEnd(5)}  ${maskedUrl(spec.url)}${headers ? `  headers: ${headers}` : ""}${filterNote(s)}`;
}

function filterNote(s: ServerConfig): string {
  const f = s.tools;
  if (!f) return "";
  return `  tools:${f.include ? ` only ${f.include.join(", ")}` : ""}${f.exclude ? ` except ${f.exclude.join(", ")}` : ""}`;
}
