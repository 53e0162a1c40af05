/**
 * A list request walked through every page of an upstream's answer (tools, resources,
 * templates, prompts), for session.ts.
 */
import type { Client } from "@modelcontextprotocol/client";
import { ResultSchema } from "@modelcontextprotocol/core";
import { isRecord } from "../json.js";
import type { RequestOptions } from "./types.js";
import { sdkOptions } from "./wire.js";

/**
 * Walk every cursor with raw requests (the SDK's list verbs strip keys they do not know). A
 * server that repeats a cursor would loop forever: stop and say so.
 */
export async function paginate<T>(
  client: Client,
  method: "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list",
  key: string,
  o: RequestOptions,
  valid: (item: Record<string, unknown>) => boolean,
): Promise<T[]> {
  const all: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = (await client.request(
      { method, params: cursor === undefined ? {} : { cursor } },
      ResultSchema,
      sdkOptions(o),
    )) as Record<string, unknown>;
    const items = page[key];
    if (!Array.isArray(items)) throw new Error(`upstream sent a ${method} result without ${key}`);
    items.forEach((item: unknown, i) => {
      if (!isRecord(item) || typeof item.name !== "string" || !valid(item))
        throw new Error(`upstream sent an invalid ${method} result: ${key}[${i}] is malformed`);
    });
    all.push(...(items as T[]));
    const next = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    if (next !== undefined && seen.has(next))
      throw new Error(`upstream repeated pagination cursor ${JSON.stringify(next)}`);
    if (next !== undefined) seen.add(next);
    cursor = next;
  } while (cursor !== undefined);
  return all;
}
