/**
 * The dashboard's review of trust pins (docs/trust.md): `GET /api/trust` lists what waits for
 * approval on the viewer's servers, with the word diff `mcpx trust diff` prints, and
 * `POST /api/trust/approve` (`{ "ref": "server" | "server.name" }`) does what
 * `mcpx trust approve` does: it pins what was shown, writes the pin file, and the registry checks
 * the server again at once. A viewer sees and approves only the servers its profile sees; text
 * passes the logger's redaction (definitions quoting a secret were never kept).
 */
import { SchemaCompiler } from "../compression/schema.js";
import { launchKey } from "../registry/catalog-cache.js";
import type { Registry } from "../registry/registry.js";
import { parseToolRef } from "../registry/toolref.js";
import { approve } from "../registry/trust.js";
import { pendingChanges, type PendingChange } from "../registry/trust-diff.js";
import type { CatalogView } from "../registry/view.js";

/** One server's pending changes, as `/api/trust` lists them. */
export interface ServerReview {
  server: string;
  changes: PendingChange[];
}

/** What an approval answers: done, or why not (HTTP status and message). */
export type ApprovalResult =
  { approved: string[] } | { status: 400 | 404 | 409 | 503; error: string };

export class TrustReview {
  private compiler: SchemaCompiler | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly redact: (text: string) => string,
  ) {}

  /** Whether mcpx keeps pins (it does not without a state folder). */
  get enabled(): boolean {
    return this.registry.trustPins !== undefined;
  }

  /** What waits for approval on each server of `view` that has something waiting. */
  async pending(view: CatalogView): Promise<{ enabled: boolean; servers: ServerReview[] }> {
    const pins = this.registry.trustPins;
    if (!pins) return { enabled: false, servers: [] };
    const servers: ServerReview[] = [];
    for (const s of view.servers()) {
      const key = launchKey(s.config);
      const read = pins.store.load(key);
      if (!("entry" in read)) continue;
      const { entry } = read;
      const waiting =
        Object.keys(entry.pending.tools).length + Object.keys(entry.pending.prompts).length;
      if (waiting === 0) continue;
      const changes = await pendingChanges(
        entry,
        pins.store.loadDefs(key),
        undefined,
        (schema, n) => this.compile(schema, n),
      );
      servers.push({
        server: s.name,
        changes: changes.map((c) => ({
          ...c,
          diff: c.diff.map((p) => ({ ...p, value: this.redact(p.value) })),
        })),
      });
    }
    return { enabled: true, servers };
  }

  /** Approve `ref` (a server, or `server.name`: a tool and/or prompt) if `view` shows the server. */
  approve(view: CatalogView, ref: unknown): ApprovalResult {
    const pins = this.registry.trustPins;
    if (!pins) return { status: 503, error: "mcpx keeps no trust pins here (no state folder)." };
    if (typeof ref !== "string" || ref === "" || ref.length > 500)
      return { status: 400, error: 'Send {"ref": "server"} or {"ref": "server.tool"}.' };
    const parsed = parseToolRef(ref);
    const serverName = parsed?.server ?? ref;
    // A hidden server is answered exactly like a missing one.
    const server = view.server(serverName);
    if (!server) return { status: 404, error: "No such server." };
    const key = launchKey(server.config);
    const read = pins.store.load(key);
    const done = "entry" in read ? approve(read.entry, parsed?.tool) : { approved: [] };
    if (!("entry" in read) || done.approved.length === 0)
      return { status: 409, error: `Nothing pending for ${ref}.` };
    pins.store.save(read.entry);
    // The watcher would notice too; checking now serves the approved definitions at once.
    this.registry.repin(key);
    return { approved: done.approved.map((a) => `${serverName}: approved ${a}`) };
  }

  private async compile(schema: Parameters<SchemaCompiler["compile"]>[0], name: string) {
    this.compiler ??= new SchemaCompiler({ mode: "typescript" });
    return (await this.compiler.compile(schema, name)).text;
  }
}
