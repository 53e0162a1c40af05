/**
 * `mcpx daemon run|status|stop|logs <config>`: the shared daemon of a config file (see
 * src/daemon/shim.ts for how clients attach to it).
 */
import { readFileSync } from "node:fs";
import type { DaemonOptions } from "../cli.js";
import { daemonPaths, type DaemonPaths } from "../daemon/paths.js";
import { control } from "../daemon/shim.js";
import { errorMessage } from "../errors.js";

export async function daemon(options: DaemonOptions): Promise<number | undefined> {
  if (options.action === "run") return (await import("./serve.js")).serve(options.serve);
  let paths: DaemonPaths;
  try {
    paths = daemonPaths(options.serve.config);
  } catch (err) {
    process.stderr.write(`mcpx: cannot read the config file: ${errorMessage(err)}\n`);
    return 2;
  }
  if (options.action === "logs") {
    try {
      process.stdout.write(readFileSync(paths.log, "utf8"));
      return 0;
    } catch {
      process.stderr.write(`mcpx: no daemon log for ${paths.config} (${paths.log}).\n`);
      return 1;
    }
  }
  let answer;
  try {
    answer = await control(paths.socket, { mcpx: options.action });
  } catch {
    process.stdout.write(`no mcpx daemon runs for ${paths.config}\n`);
    return options.action === "stop" ? 0 : 1;
  }
  if (answer.mcpx === "stopping") {
    process.stdout.write(`stopping the mcpx daemon of ${paths.config}\n`);
    return 0;
  }
  if (answer.mcpx !== "status") {
    process.stderr.write(`mcpx: unexpected answer from the daemon: ${JSON.stringify(answer)}\n`);
    return 1;
  }
  const uptime = Math.round((Date.now() - Date.parse(answer.started)) / 1000);
  const lines = [
    `mcpx daemon of ${answer.config}`,
    `  pid ${answer.pid}, mcpx ${answer.version}, up ${uptime} s, ${answer.clients} client(s) attached`,
    `  socket ${paths.socket}`,
    `  log ${paths.log}`,
    ...answer.upstreams.map(
      (u) => `  ${u.name}: ${u.status}${u.running ? "" : " (not running)"}, ${u.tools} tools`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
