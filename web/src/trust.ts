/**
 * Trust review (docs/trust.md): each server's changed, new or suspicious definitions waiting for
 * approval, as a word diff (removed text in <del>, added in <ins>), with an Approve button per
 * definition and per server; the same as `mcpx trust diff` and `mcpx trust approve`.
 */
import { get, post, type TrustReview } from "./api.js";
import { byId, fill, h } from "./dom.js";

/** Load what waits for approval and show it below the servers table (hidden when nothing does). */
export async function renderReview(): Promise<void> {
  const review = await get<TrustReview>("/api/trust");
  const section = byId("trust-review");
  section.hidden = review.servers.length === 0;
  fill(
    byId("trust-body"),
    ...review.servers.map((s) =>
      h(
        "div",
        { class: "review", "data-server": s.server },
        h(
          "h4",
          {},
          `${s.server} `,
          approveButton(s.server, `Approve all of ${s.server}`, "Approve all"),
        ),
        ...s.changes.map((c) =>
          h(
            "div",
            { class: "change", "data-ref": `${s.server}.${c.name}` },
            h(
              "p",
              {},
              `${c.kind} `,
              h("code", {}, `${s.server}.${c.name}`),
              `: ${STATUS[c.status]} `,
              approveButton(`${s.server}.${c.name}`, `Approve ${c.kind} ${s.server}.${c.name}`),
            ),
            h(
              "pre",
              { class: "diff" },
              ...c.diff.map((p) =>
                p.removed ? h("del", {}, p.value) : p.added ? h("ins", {}, p.value) : p.value,
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

const STATUS = {
  removed: "removed by the server",
  changed: "changed since it was approved",
  unapproved: "not approved yet",
} as const;

function approveButton(ref: string, label: string, text = "Approve"): HTMLElement {
  const button = h("button", { type: "button", class: "approve", "aria-label": label }, text);
  button.addEventListener("click", () => {
    button.setAttribute("disabled", "");
    void post("/api/trust/approve", { ref })
      .catch((err: unknown) => {
        byId("trust-error").textContent = err instanceof Error ? err.message : String(err);
      })
      .then(renderReview);
  });
  return button;
}
