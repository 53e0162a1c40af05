/** A tiny DOM helper: elements are built with text nodes only, so no server text is ever parsed as HTML. */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

/** `h("td", { class: "num" }, "42")`; `on*` attributes become listeners, `false` drops one. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function")
      el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
}

/** Replace an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el as T;
}

/** The tbody of a table by id. */
export function body(tableId: string): HTMLTableSectionElement {
  return byId<HTMLTableElement>(tableId).tBodies[0]!;
}

/** 3,616: as `mcpx stats` prints numbers. */
export function int(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  return n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`;
}

/** 3h 12m, 4m 5s, 12s. */
export function duration(msTotal: number): string {
  const s = Math.max(0, Math.floor(msTotal / 1000));
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${hh}h`;
  if (hh > 0) return `${hh}h ${mm}m`;
  if (mm > 0) return `${mm}m ${s % 60}s`;
  return `${s}s`;
}

export function clock(t: number): string {
  return new Date(t).toLocaleTimeString("en-GB", { hour12: false });
}

/** A status pill: colour and the word, never colour alone. */
export function pill(status: string): HTMLElement {
  return h("span", { class: `pill status-${status.replaceAll(" ", "-")}` }, status);
}
