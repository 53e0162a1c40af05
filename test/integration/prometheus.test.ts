/**
 * A real Prometheus scraping mcpx (issue 29): Debian's `prometheus` (CI installs it: .ci/run),
 * started by the test on a free loopback port with its own temp TSDB and a scrape config pointing
 * at the built mcpx's `/metrics` under `auth` (bearer token from a file), a 1 s scrape interval.
 * The test polls Prometheus's HTTP API until the target is up and a call made through mcpx
 * shows in a query; Prometheus is killed and its folder removed after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import getPort from "get-port";
import { afterEach, describe, expect, it } from "vitest";
import {
  eventually,
  fixtureServer,
  startHttp,
  stop,
  tempDir,
  writeConfig,
} from "../helpers/proxy.js";

const TOKEN = "prometheus-scrape-token-0001";

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

interface Prometheus {
  child: ChildProcess;
  query(q: string): Promise<Sample[]>;
  log(): string;
}

interface Job {
  job: string;
  /** host:port of mcpx. */
  target: string;
  /** The bearer token Prometheus sends, in a file (as a deployment keeps it). */
  tokenFile: string;
}

/** Start Debian's prometheus scraping each job's target every second. */
async function startPrometheus(jobs: Job[]): Promise<Prometheus> {
  const dir = tempDir();
  const port = await getPort({ host: "127.0.0.1" });
  const config = path.join(dir, "prometheus.yml");
  // YAML is a superset of JSON: the scrape config written as JSON.
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: "1s", scrape_timeout: "900ms", evaluation_interval: "1s" },
      scrape_configs: jobs.map((j) => ({
        job_name: j.job,
        metrics_path: "/metrics",
        authorization: { type: "Bearer", credentials_file: j.tokenFile },
        static_configs: [{ targets: [j.target] }],
      })),
    }),
  );
  const child = spawn(
    "prometheus",
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (c: Buffer) => (log += c.toString()));
  const base = `http://127.0.0.1:${port}`;
  const query = async (q: string): Promise<Sample[]> => {
    const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { result: Sample[] } };
    expect(body.status).toBe("success");
    return body.data.result;
  };
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
      return fetch(`${base}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
    },
    60_000,
    "prometheus ready",
    100,
  );
  return { child, query, log: () => log };
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe("Prometheus scraping mcpx", () => {
  it("scrapes /metrics with a bearer token: up is 1, a call's count shows in a query; a wrong token is down", async () => {
    const dir = tempDir();
    const tokenFile = path.join(dir, "token");
    const wrongFile = path.join(dir, "wrong");
    writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
    writeFileSync(wrongFile, "not-the-token", { mode: 0o600 });
    const config = writeConfig({
      mcpServers: { alpha: fixtureServer("modern.mjs") },
      auth: { tokens: { [TOKEN]: "prometheus" } },
    });
    const mcpx = await startHttp(config, [], { Authorization: `Bearer ${TOKEN}` });
    cleanup.push(() => mcpx.close());
    const target = new URL(mcpx.url).host;
    const prom = await startPrometheus([
      { job: "mcpx", target, tokenFile },
      { job: "wrong_token", target, tokenFile: wrongFile },
    ]);
    cleanup.push(() => stop(prom.child));

    const up = async (job: string) => (await prom.query(`up{job="${job}"}`))[0]?.value[1];
    await eventually(async () => (await up("mcpx")) === "1", 60_000, "up == 1", 250);
    // mcpx answered the wrong token 401: Prometheus marks that target down.
    await eventually(async () => (await up("wrong_token")) === "0", 60_000, "up == 0", 250);

    for (const message of ["m", "n"]) {
      await mcpx.client.callTool({
        name: "call",
        arguments: { method: "alpha.echo", arguments: { message } },
      });
    }
    const calls = 'mcpx_calls_total{job="mcpx",server="alpha",tool="echo",outcome="ok"}';
    await eventually(
      async () => (await prom.query(calls))[0]?.value[1] === "2",
      60_000,
      "the two calls in Prometheus",
      250,
    );
    const ready = await prom.query(
      'mcpx_upstream_status{job="mcpx",server="alpha",status="ready"}',
    );
    expect(ready[0]?.value[1]).toBe("1");
    // Nothing reached Prometheus from the wrong-token target.
    expect(await prom.query('mcpx_calls_total{job="wrong_token"}')).toEqual([]);
    expect(mcpx.stderr()).not.toContain(TOKEN);
  }, 150_000);
});
