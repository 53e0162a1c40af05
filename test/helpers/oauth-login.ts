/**
 * `mcpx login <config> <server> --no-browser` against the real authorization server of
 * test/helpers/oidc.ts: the "browser" follows the URL mcpx prints (oidc-provider signs in and
 * consents at once), then calls mcpx's loopback listener with the redirect, as a browser would.
 */
import { spawn } from "node:child_process";
import { authorize } from "./oidc.js";
import { eventually, MCPX } from "./proxy.js";

export interface LoginRun {
  code: number | null;
  stderr: string;
}

export async function mcpxLogin(
  config: string,
  server: string,
  env: Record<string, string>,
): Promise<LoginRun> {
  const child = spawn(process.execPath, [MCPX, "login", config, server, "--no-browser"], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    await eventually(() => /^\s+(http\S+)$/m.test(stderr), 15_000, "the sign-in URL");
    const url = /^\s+(http\S+)$/m.exec(stderr)![1]!;
    const redirectUri = new URL(url).searchParams.get("redirect_uri")!;
    await fetch(await authorize(url, redirectUri));
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    throw new Error(`${String(err)}\nmcpx login said: ${stderr}`);
  }
  return { code: await exited, stderr };
}
