/** Callers seen and the profile each resolved to; what each profile exposes. */
import type { Status } from "./api.js";
import { body, byId, clock, fill, h } from "./dom.js";

export function renderCallers(s: Status): void {
  const rows = s.callers.map((c) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, c.caller),
      h("td", {}, c.profile),
      h("td", { class: "num" }, c.calls),
      h("td", {}, clock(c.lastSeen)),
    ),
  );
  if (rows.length === 0)
    rows.push(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No caller has connected yet.")));
  fill(body("caller-table"), ...rows);
  fill(
    byId("profiles"),
    ...s.profiles.map((p) =>
      h(
        "li",
        {},
        h("strong", {}, `Profile ${p.name}`),
        p.readOnly ? " (read-only tools)" : "",
        ": ",
        p.servers.length === 0
          ? "no servers"
          : p.servers.map((x) => `${x.name} (${x.tools} tools)`).join(", "),
      ),
    ),
  );
}
