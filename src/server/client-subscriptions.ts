/**
 * The resource subscriptions one downstream client holds (see handlers/subscriptions.ts for how
 * they are made and where updates go). Apart from the handlers so a client's memory
 * (context.ts) can name it without importing them.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
} from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Registry } from "../registry/registry.js";
import type { CatalogView } from "../registry/view.js";

interface Held {
  server: string;
  /** The upstream subscription's release, once it is taken. */
  release: Promise<(() => void) | undefined>;
}

/**
 * The resource subscriptions of one downstream client (a connection, a 2025-era session, a
 * 2026-07-28 listen stream), grouped by key: resources/subscribe, or a listen stream's id.
 */
export class ClientSubscriptions {
  private readonly held = new Map<string, Map<string, Held>>();

  constructor(private readonly ctx: { registry: Registry; logger: Logger }) {}

  /**
   * Subscribe to `uri` under `key`, upstream on its owner in `view`. Throws a ProtocolError
   * when no server of the view has it or its owner offers no subscriptions.
   */
  async add(key: string, uri: string, view: CatalogView): Promise<void> {
    const owner = view.resourceOwner(uri);
    if (!owner) {
      throw new ResourceNotFoundError(
        uri,
        `Resource ${uri} not found: no server of this mcpx lists it or has a template that matches it.`,
      );
    }
    const caps = owner.identity?.capabilities.resources as { subscribe?: boolean } | undefined;
    if (caps?.subscribe !== true) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Server "${owner.name}", which has ${uri}, does not offer resource subscriptions: re-read the resource instead.`,
      );
    }
    let group = this.held.get(key);
    if (!group) {
      group = new Map();
      this.held.set(key, group);
    }
    if (group.has(uri)) return;
    const release = this.ctx.registry.subscribeResource(owner.name, uri);
    const held: Held = { server: owner.name, release: release.catch(() => undefined) };
    group.set(uri, held);
    try {
      await release;
    } catch (err) {
      if (group.get(uri) === held) group.delete(uri);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Server "${owner.name}" refused the subscription to ${uri}: ${this.ctx.logger.redact(errorMessage(err))}`,
      );
    }
  }

  /** Drop the subscriptions of `key` (one URI, or all of them). */
  remove(key: string, uri?: string): void {
    const group = this.held.get(key);
    if (!group) return;
    for (const [u, held] of [...group]) {
      if (uri !== undefined && u !== uri) continue;
      group.delete(u);
      void held.release.then((release) => release?.());
    }
    if (group.size === 0) this.held.delete(key);
  }

  /** Drop every subscription (the client is gone). */
  clear(): void {
    for (const key of [...this.held.keys()]) this.remove(key);
  }

  /** Whether this client holds `uri` of `server`. */
  wants(server: string, uri: string): boolean {
    for (const group of this.held.values()) if (group.get(uri)?.server === server) return true;
    return false;
  }

  get size(): number {
    let n = 0;
    for (const group of this.held.values()) n += group.size;
    return n;
  }
}
