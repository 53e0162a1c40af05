/**
 * The mcpx dashboard page: loads the API's documents once, then follows /api/events
 * (server-sent events) so it never needs a reload.
 */
import {
  get,
  type CallRecord,
  type Calls,
  type Economy,
  type LogRecord,
  type Status,
} from "./api.js";
import { renderCallers } from "./callers.js";
import { CallTable } from "./calls.js";
import { byId } from "./dom.js";
import { renderCompression, renderEconomy } from "./economy.js";
import { LogView } from "./logs.js";
import { openServer, renderServers, tickUptimes } from "./servers.js";
import { setupSearch } from "./tools.js";
import { renderReview } from "./trust.js";

const calls = new CallTable();
const logs = new LogView();
let catalogKey = "";
let trustKey = "";
let callsTimer: number | undefined;

function showStatus(s: Status): void {
  const overall = byId("overall");
  overall.className = `pill status-${s.status === "ok" ? "ready" : "degraded"}`;
  overall.textContent = s.status === "ok" ? "all servers ready" : "some servers not ready";
  byId("viewer").textContent =
    s.viewer.caller === null
      ? `mcpx ${s.mcpx.version} · this machine, every server`
      : `mcpx ${s.mcpx.version} · caller ${s.viewer.caller} (profile ${s.viewer.profile})`;
  const shared = s.mcpx.shared;
  if (shared) {
    byId("viewer").textContent += shared.reachable
      ? ` · shared state in Redis ${shared.address ?? ""}`
      : ` · Redis ${shared.address ?? ""} unreachable since ${shared.downSince ?? "start"}: result handles cannot be read`;
  }
  byId("logout").hidden = !s.viewer.auth;
  renderServers(s.servers, (name) => void openServer(name));
  renderCallers(s);
  logs.sources(s.servers.map((x) => x.name));
  // The token economy changes only with the catalog: refetch when a server's tools or status do.
  const key = s.servers.map((x) => `${x.name}:${x.status}:${x.counts.tools}`).join(",");
  // Trust findings changed (a server's definitions, or an approval): load the review again.
  const trust = JSON.stringify(s.servers.map((x) => x.trust ?? null));
  if (trust !== trustKey) {
    trustKey = trust;
    void renderReview();
  }
  if (key !== catalogKey) {
    catalogKey = key;
    void get<Economy>("/api/economy").then(renderEconomy);
  }
}

async function loadCalls(): Promise<void> {
  const c = await get<Calls>("/api/calls");
  calls.reset(c);
  renderCompression(c);
}

/** Percentiles and compression come from the server, at most once a second while calls flow. */
function callsChanged(): void {
  if (callsTimer !== undefined) return;
  callsTimer = window.setTimeout(() => {
    callsTimer = undefined;
    void get<Calls>("/api/calls").then((c) => {
      calls.reset(c);
      renderCompression(c);
    });
  }, 1000);
}

function follow(): void {
  const live = byId("live");
  const events = new EventSource("/api/events");
  events.addEventListener("open", () => (live.textContent = "● live"));
  events.addEventListener("error", () => (live.textContent = "reconnecting…"));
  events.addEventListener("status", (e) =>
    showStatus(JSON.parse((e as MessageEvent<string>).data) as Status),
  );
  events.addEventListener("call", (e) => {
    const record = JSON.parse((e as MessageEvent<string>).data) as CallRecord;
    calls.upsert(record);
    if (record.outcome !== "running") callsChanged();
  });
  events.addEventListener("log", (e) =>
    logs.push(JSON.parse((e as MessageEvent<string>).data) as LogRecord),
  );
  // This page read too slowly and missed events: load what it shows again.
  events.addEventListener("dropped", () => void Promise.all([loadCalls(), logs.reload()]));
}

async function main(): Promise<void> {
  setupSearch();
  showStatus(await get<Status>("/api/status"));
  await Promise.all([loadCalls(), logs.reload()]);
  follow();
  window.setInterval(tickUptimes, 1000);
}

void main();
