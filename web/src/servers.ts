/** The servers table and one server's detail: tools, prompts, resources and templates. */
import { enc, get, post, type ServerDetail, type ServerSummary } from "./api.js";
import { body, byId, duration, fill, h, int, ms, pill } from "./dom.js";
import { openDescribe } from "./tools.js";

export function renderServers(servers: ServerSummary[], onOpen: (name: string) => void): void {
  const rows = servers.map((s) =>
    h(
      "tr",
      { "data-server": s.name, "data-status": s.status },
      h(
        "th",
        { scope: "row" },
        h("button", { type: "button", class: "link", onclick: () => onOpen(s.name) }, s.name),
        s.description ? h("div", { class: "muted small" }, s.description) : null,
      ),
      h("td", { "data-label": "Status" }, pill(s.status)),
      h("td", { "data-label": "Protocol" }, s.era ? `${s.protocolVersion ?? "?"} (${s.era})` : "–"),
      h("td", { class: "num", "data-label": "Ping" }, ms(s.latencyMs)),
      h("td", { "data-label": "Sessions" }, sessions(s)),
      h(
        "td",
        { "data-label": "Uptime", "data-ready-since": s.readySince ?? "" },
        uptime(s.readySince),
      ),
      h(
        "td",
        { class: "num", "data-label": "Stderr dropped" },
        s.stderrLines ? int(s.stderrLines.dropped) : "0",
      ),
      h(
        "td",
        { class: "error", "data-label": "Last error" },
        [s.error ?? notesText(s.notes), trustText(s.trust)].filter(Boolean).join("; "),
      ),
    ),
  );
  if (rows.length === 0)
    rows.push(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No servers.")));
  fill(body("server-table"), ...rows);
}

/** A server's notes (optional requests it failed) in one cell: `prompts/list: why; …`. */
function notesText(notes: Record<string, string> | undefined): string {
  if (!notes) return "";
  return Object.entries(notes)
    .map(([method, why]) => `${method} failed (${treatedAs(method)}): ${why}`)
    .join("; ");
}

/** Changed, new or suspicious definitions (trust pins), and whether they are held. */
function trustText(trust: ServerSummary["trust"]): string {
  if (!trust) return "";
  const how = trust.held ? "held until mcpx trust approve" : "served (trust: warn)";
  return `trust: ${trust.findings.join("; ")} (${how})`;
}

/** What a failed optional request is taken as (as src/registry/notes.ts says it). */
function treatedAs(method: string): string {
  return method.endsWith("subscribe") ? "treated as unsupported" : "treated as empty";
}

/** Ticks the uptime cells without a round trip. */
export function tickUptimes(): void {
  for (const cell of document.querySelectorAll<HTMLElement>("td[data-ready-since]")) {
    const since = Number(cell.dataset.readySince);
    cell.textContent = uptime(since > 0 ? since : undefined);
  }
}

function uptime(since: number | undefined): string {
  return since === undefined ? "–" : duration(Date.now() - since);
}

function sessions(s: ServerSummary): string {
  const live = s.sessions ? `${s.sessions.open} live` : "";
  return [s.policy, live].filter(Boolean).join(", ");
}

/** Show one server's catalog below the table. */
export async function openServer(name: string): Promise<void> {
  const section = byId("server-detail");
  const heading = byId("detail-h");
  const detail = await get<ServerDetail>(`/api/servers/${enc(name)}`);
  fill(heading, `Server ${detail.name} `, pill(detail.status));
  fill(
    byId("detail-body"),
    h("p", { class: "muted" }, detail.description),
    ...(detail.signIn
      ? [
          h(
            "p",
            { class: "sign-in" },
            "Needs sign-in: ",
            signInButton(detail.name),
            " (your browser, on this machine), or run ",
            h("code", {}, detail.signIn),
            " in a terminal.",
          ),
        ]
      : []),
    target(detail.target),
    h("h3", {}, `Tools (${detail.tools.length})`),
    toolTable(detail),
    h("h3", {}, `Prompts (${detail.prompts.length})`),
    list(
      detail.prompts.map((p) =>
        h(
          "li",
          {},
          h("code", {}, p.name),
          p.arguments.length > 0
            ? ` (${p.arguments.map((a) => `${a.name}${a.required ? "" : "?"}`).join(", ")})`
            : "",
          p.description ? ` — ${p.description}` : "",
        ),
      ),
    ),
    h("h3", {}, `Resources (${detail.resources.length})`),
    list(
      detail.resources.map((r) =>
        h("li", {}, h("code", {}, r.uri), ` ${r.name}`, r.mimeType ? ` (${r.mimeType})` : ""),
      ),
    ),
    h("h3", {}, `Resource templates (${detail.templates.length})`),
    list(detail.templates.map((t) => h("li", {}, h("code", {}, t.uriTemplate), ` ${t.name}`))),
  );
  section.hidden = false;
  heading.focus();
}

function target(t: Record<string, unknown>): HTMLElement {
  const text = Object.entries(t)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("\n");
  return h("pre", { class: "target", "aria-label": "How mcpx reaches this server" }, text);
}

function toolTable(detail: ServerDetail): HTMLElement {
  const rows = detail.tools.map((t) =>
    h(
      "tr",
      {},
      h(
        "th",
        { scope: "row" },
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => void openDescribe(`${detail.name}.${t.name}`),
          },
          t.name,
        ),
      ),
      h("td", {}, t.description),
      h("td", { class: "num" }, int(t.tokens)),
      h("td", {}, hints(t.annotations)),
    ),
  );
  return h(
    "div",
    { class: "scroll", tabindex: 0, role: "region", "aria-label": "Tools of the server" },
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Tool"),
          h("th", { scope: "col" }, "Description"),
          h("th", { scope: "col", class: "num" }, "Tokens"),
          h("th", { scope: "col" }, "Annotations"),
        ),
      ),
      h("tbody", {}, ...rows),
    ),
  );
}

function hints(a: Record<string, unknown>): string {
  const names: Record<string, string> = {
    readOnlyHint: "read-only",
    destructiveHint: "destructive",
    idempotentHint: "idempotent",
    openWorldHint: "open world",
  };
  return Object.entries(names)
    .filter(([k]) => a[k] === true)
    .map(([, v]) => v)
    .join(", ");
}

function list(items: HTMLElement[]): HTMLElement {
  return items.length > 0
    ? h("ul", { class: "plain" }, ...items)
    : h("p", { class: "muted" }, "None.");
}

/** "Sign in": the running mcpx starts the sign-in and the browser goes to the authorization page. */
function signInButton(server: string): HTMLElement {
  const button = h(
    "button",
    { type: "button", class: "sign-in-button", "aria-label": `Sign in to ${server}` },
    "Sign in",
  );
  button.addEventListener("click", () => {
    button.setAttribute("disabled", "");
    void post<{ url: string }>("/api/signin", { server }).then(
      ({ url }) => location.assign(url),
      (err: unknown) => {
        button.removeAttribute("disabled");
        button.title = err instanceof Error ? err.message : String(err);
      },
    );
  });
  return button;
}
