/**
 * Pages of the aggregated lists (prompts, resources, templates). mcpx mints its own cursors: a
 * signed note of the list, the caller's profile, the catalog version the walk started on and the
 * next offset. Nothing is kept between requests, so any replica with the same key serves any
 * page; a page is only ever cut from the version the walk started on.
 */
import { createHmac } from "node:crypto";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { CatalogList } from "../../registry/lists.js";
import { SignedJson } from "../signed.js";

/** Which list a cursor walks, with the method that lists it. */
export const LIST_METHODS = {
  prompts: "prompts/list",
  resources: "resources/list",
  templates: "resources/templates/list",
} as const;
export type ListKind = keyof typeof LIST_METHODS;

/** What a cursor says. Short keys: it travels in every request of the walk. */
interface CursorClaims {
  /** The list. */
  k: ListKind;
  /** The profile whose view it walks. */
  p: string;
  /** The catalog version of the first page. */
  v: string;
  /** Where the next page starts. */
  o: number;
}

export interface Page {
  items: Record<string, unknown>[];
  nextCursor?: string;
}

/** Mints and checks cursors with one key (derived from the session key: see session-token.ts). */
export class PageCursors {
  private readonly signed: SignedJson;

  constructor(sessionKey: Buffer) {
    // A key of its own: a cursor is never a valid session id, nor the reverse.
    this.signed = new SignedJson(
      createHmac("sha256", sessionKey).update("mcpx page cursor").digest(),
    );
  }

  /**
   * The page of `list` that `cursor` points at (the first without one), for a caller of
   * `profile`. A cursor that was not minted here, or for another list or profile, and one whose
   * walk began on another version of the list, are -32602 errors saying to start over.
   */
  page<E>(
    kind: ListKind,
    list: CatalogList<E>,
    profile: string,
    cursor: string | undefined,
    size: number,
  ): Page {
    let offset = 0;
    if (cursor !== undefined) {
      const claims = this.read(cursor);
      if (!claims || claims.k !== kind || claims.p !== profile) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid cursor for ${LIST_METHODS[kind]}: it was not issued by mcpx for this list. Call ${LIST_METHODS[kind]} without a cursor to start over.`,
        );
      }
      if (claims.v !== list.version) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `The ${kind} list changed since this walk began; its pages would mix two versions. Call ${LIST_METHODS[kind]} again without a cursor to start over.`,
          { reason: "list_changed" },
        );
      }
      offset = claims.o;
    }
    const items = list.items.slice(offset, offset + size);
    const next = offset + size;
    if (next >= list.items.length) return { items };
    return { items, nextCursor: this.mint({ k: kind, p: profile, v: list.version, o: next }) };
  }

  private mint(claims: CursorClaims): string {
    return this.signed.seal(claims);
  }

  private read(cursor: string): CursorClaims | undefined {
    const claims = this.signed.open(cursor);
    return isClaims(claims) ? claims : undefined;
  }
}

function isClaims(value: unknown): value is CursorClaims {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.k === "string" &&
    c.k in LIST_METHODS &&
    typeof c.p === "string" &&
    typeof c.v === "string" &&
    typeof c.o === "number" &&
    Number.isInteger(c.o) &&
    c.o >= 0
  );
}
