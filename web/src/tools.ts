/** The search box (describe({query}) ranking) and the describe dialog. */
import { enc, get, type SearchHit } from "./api.js";
import { byId, fill, h } from "./dom.js";

export function setupSearch(): void {
  const input = byId<HTMLInputElement>("search");
  const form = byId<HTMLFormElement>("search-form");
  let timer: number | undefined;
  const run = () => void search(input.value.trim());
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = window.setTimeout(run, 200);
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    run();
  });
  byId("describe-close").addEventListener("click", () =>
    byId<HTMLDialogElement>("describe").close(),
  );
}

async function search(query: string): Promise<void> {
  const results = byId("search-results");
  if (query === "") return fill(results);
  const { hits } = await get<{ hits: SearchHit[] }>(`/api/search?q=${enc(query)}`);
  if (hits.length === 0)
    return fill(results, h("li", { class: "muted" }, `No tool matches "${query}".`));
  fill(
    results,
    ...hits.map((hit) =>
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => void openDescribe(`${hit.server}.${hit.tool}`),
          },
          `${hit.server}.${hit.tool}`,
        ),
        h("span", { class: "muted" }, ` — ${hit.description}`),
      ),
    ),
  );
}

/** Show exactly what describe("server.tool") answers, in a modal dialog. */
export async function openDescribe(name: string): Promise<void> {
  const { text } = await get<{ text: string }>(`/api/describe?name=${enc(name)}`);
  fill(byId("describe-h"), `describe("${name}")`);
  byId("describe-text").textContent = text;
  const dialog = byId<HTMLDialogElement>("describe");
  if (!dialog.open) dialog.showModal();
}
