/** Logs: mcpx's own and each upstream's stderr, filtered by source and level, bounded. */
import { enc, get, type LogRecord } from "./api.js";
import { byId, clock, fill, h } from "./dom.js";

/** Lines the page keeps, however long it stays open. */
const MAX_LINES = 500;
const LEVELS = ["debug", "info", "warn", "error"];

export class LogView {
  private readonly list = byId<HTMLOListElement>("log-lines");
  private readonly source = byId<HTMLSelectElement>("log-source");
  private readonly level = byId<HTMLSelectElement>("log-level");

  constructor() {
    for (const el of [this.source, this.level])
      el.addEventListener("change", () => void this.reload());
    byId<HTMLFormElement>("log-filters").addEventListener("submit", (e) => e.preventDefault());
  }

  /** Offer every server as a source. */
  sources(names: string[]): void {
    const have = new Set([...this.source.options].map((o) => o.value));
    for (const n of names) if (!have.has(n)) this.source.append(h("option", { value: n }, n));
  }

  async reload(): Promise<void> {
    const { lines } = await get<{ lines: LogRecord[] }>(
      `/api/logs?server=${enc(this.source.value)}&level=${enc(this.level.value)}`,
    );
    fill(this.list);
    for (const l of lines.slice(-MAX_LINES)) this.add(l, false);
    this.list.scrollTop = this.list.scrollHeight;
    this.count();
  }

  /** A live line: shown when it passes the filters. */
  push(line: LogRecord): void {
    if (this.source.value !== "" && line.source !== this.source.value) return;
    if (LEVELS.indexOf(line.level) < LEVELS.indexOf(this.level.value)) return;
    const atBottom = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    this.add(line, true);
    if (atBottom) this.list.scrollTop = this.list.scrollHeight;
    this.count();
  }

  private add(l: LogRecord, trim: boolean): void {
    this.list.append(
      h(
        "li",
        { class: `level-${l.level}`, "data-source": l.source },
        h("time", {}, clock(l.time)),
        " ",
        h("span", { class: "lvl" }, l.level.toUpperCase()),
        " ",
        h("span", { class: "src" }, `[${l.source}]`),
        " ",
        l.text,
      ),
    );
    if (trim) while (this.list.childElementCount > MAX_LINES) this.list.firstElementChild?.remove();
  }

  private count(): void {
    byId("log-count").textContent = `${this.list.childElementCount} lines (at most ${MAX_LINES})`;
  }
}
