/** Calls: p50/p95 per server and a live table of recent calls (never their arguments). */
import type { CallRecord, Calls } from "./api.js";
import { body, clock, fill, h, ms } from "./dom.js";

/** Rows the page keeps, however long it stays open. */
const MAX_ROWS = 200;

export class CallTable {
  private readonly rows = new Map<number, HTMLTableRowElement>();

  /** Replace everything with the server's list (first load, after dropped events). */
  reset(calls: Calls): void {
    this.rows.clear();
    const tbody = body("call-table");
    fill(tbody);
    // Oldest first, so each upsert puts the newest on top.
    for (const c of [...calls.recent].reverse()) this.upsert(c);
    fill(
      body("latency-table"),
      ...calls.perServer.map((p) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, p.server),
          h("td", { class: "num" }, p.calls),
          h("td", { class: "num" }, ms(p.p50)),
          h("td", { class: "num" }, ms(p.p95)),
        ),
      ),
    );
  }

  /** A call started or ended: its row is added on top, or updated in place. */
  upsert(c: CallRecord): void {
    const row = h(
      "tr",
      { "data-call": c.id, "data-outcome": c.outcome },
      h("td", {}, clock(c.startedAt)),
      h("td", {}, c.caller),
      h("td", {}, c.parentId !== undefined ? `↳ ${ref(c)}` : ref(c)),
      h("td", { class: "num" }, c.durationMs === undefined ? "…" : ms(c.durationMs)),
      h("td", {}, h("span", { class: `outcome outcome-${c.outcome}` }, c.outcome)),
    );
    const old = this.rows.get(c.id);
    const tbody = body("call-table");
    if (old) old.replaceWith(row);
    else tbody.prepend(row);
    this.rows.set(c.id, row);
    while (this.rows.size > MAX_ROWS) {
      const oldest = this.rows.keys().next().value!;
      this.rows.get(oldest)?.remove();
      this.rows.delete(oldest);
    }
  }
}

function ref(c: CallRecord): string {
  return c.server ? `${c.server}.${c.tool}` : c.tool;
}
