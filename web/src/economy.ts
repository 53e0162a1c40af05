/** Token economy: definition tokens without vs with mcpx (as `mcpx stats`), and result compression. */
import type { Calls, Economy } from "./api.js";
import { body, byId, fill, h, int } from "./dom.js";

export function renderEconomy(e: Economy): void {
  const up = e.rows.filter((r) => r.status === "ready" || r.status === "degraded");
  const max = Math.max(1, ...up.map((r) => r.direct), e.total.direct);
  const pct = e.total.direct === 0 ? 0 : Math.round((1 - e.total.mcpx / e.total.direct) * 100);
  fill(
    byId("economy-note"),
    `Tokens a client loads before its first message (o200k_base, profile "${e.profile}"): ` +
      `${int(e.total.direct)} without mcpx, ${int(e.total.mcpx)} with mcpx (${pct}% fewer). ` +
      `mcpx's three meta-tools cost ${int(e.shared)} on their own; the rows add up to the totals.`,
  );
  const row = (label: string, direct: number, mcpx: number, id?: string) =>
    h(
      "tr",
      id ? { id } : {},
      h("th", { scope: "row" }, label),
      h("td", { class: "bars" }, bar("direct", direct, max), bar("mcpx", mcpx, max)),
      h("td", { class: "num", "data-field": "direct" }, int(direct)),
      h("td", { class: "num", "data-field": "mcpx" }, int(mcpx)),
      h("td", { class: "num", "data-field": "saved" }, int(direct - mcpx)),
    );
  fill(
    byId("economy-chart"),
    h(
      "div",
      { class: "legend", "aria-hidden": "true" },
      h("span", { class: "key direct" }),
      " without mcpx ",
      h("span", { class: "key mcpx" }),
      " with mcpx",
    ),
    h(
      "div",
      { class: "scroll", tabindex: 0, role: "region", "aria-label": "Token economy per server" },
      h(
        "table",
        { id: "economy-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Server"),
            h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Chart")),
            h("th", { scope: "col", class: "num" }, "Without"),
            h("th", { scope: "col", class: "num" }, "With"),
            h("th", { scope: "col", class: "num" }, "Saved"),
          ),
        ),
        h(
          "tbody",
          {},
          ...up.map((r) => row(r.server, r.direct, r.mcpx)),
          h(
            "tr",
            { class: "muted" },
            h("th", { scope: "row" }, "meta-tools (shared)"),
            h("td", { class: "bars" }, bar("mcpx", e.shared, max)),
            h("td", { class: "num" }, ""),
            h("td", { class: "num" }, int(e.shared)),
            h("td", { class: "num" }, int(-e.shared)),
          ),
        ),
        h("tfoot", {}, row("total", e.total.direct, e.total.mcpx, "economy-total")),
      ),
    ),
  );
}

function bar(kind: "direct" | "mcpx", value: number, max: number): HTMLElement {
  const el = h("div", { class: `bar ${kind}`, "aria-hidden": "true" });
  // CSSOM, not a style attribute: the page's CSP allows no inline styles.
  el.style.width = `${Math.max(0.5, (100 * value) / max)}%`;
  return el;
}

export function renderCompression(calls: Calls): void {
  const rows = calls.perServer.map((p) =>
    h(
      "tr",
      { "data-server": p.server },
      h("th", { scope: "row" }, p.server),
      h("td", { class: "num" }, int(p.compression.results)),
      h("td", { class: "num" }, int(p.compression.jsonTokens)),
      h("td", { class: "num" }, int(p.compression.sentTokens)),
      h("td", { class: "num" }, int(p.compression.saved)),
    ),
  );
  fill(body("compression-table"), ...rows);
}
