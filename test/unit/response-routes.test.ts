/**
 * ResponseRoutes (seeded-transport.ts): the wire ids of a replica's requests to 2025-era clients
 * name the replica that asked (so another replica forwards the answer there) and carry 72 random
 * bits; an answer counts only for the session it was sent to; and with Redis a request goes out
 * only once the replica listens for answers forwarded to it.
 */
import { describe, expect, it } from "vitest";
import { ResponseRoutes } from "../../src/server/seeded-transport.js";

describe("ResponseRoutes", () => {
  it("mints wire ids naming this replica, unguessable, and reads the replica back", () => {
    const routes = new ResponseRoutes();
    expect(routes.replica).toMatch(/^[0-9a-f]{12}$/);
    const nonces = new Set(Array.from({ length: 100 }, () => routes.nonce()));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) {
      expect(nonce).toMatch(new RegExp(`^${routes.replica}\\.[A-Za-z0-9_-]{12}$`));
      expect(ResponseRoutes.replicaOf(`${nonce}-0`)).toBe(routes.replica);
    }
    expect(new ResponseRoutes().replica).not.toBe(routes.replica);
    // A client's own ids, or anything else, name no replica.
    for (const id of [7, "7", "abc.def", `${routes.replica}-x`, null]) {
      expect(ResponseRoutes.replicaOf(id)).toBeUndefined();
    }
  });

  it("hands an answer only to the session the request was sent to", () => {
    const routes = new ResponseRoutes();
    const wireId = `${routes.nonce()}-0`;
    const got: unknown[] = [];
    routes.expect("session-a", wireId, (m) => got.push(m));
    const answer = { jsonrpc: "2.0" as const, id: wireId, result: {} };
    expect(routes.deliver("session-b", answer)).toBe(false);
    expect(got).toEqual([]);
    expect(routes.deliver("session-a", answer)).toBe(true);
    expect(got).toEqual([answer]);
  });

  it("sends a request only once answers forwarded here can arrive", async () => {
    let listening!: () => void;
    const subscribed = new Promise<void>((resolve) => (listening = resolve));
    const routes = new ResponseRoutes({ listening: () => subscribed });
    const sent: string[] = [];
    const sending = routes.whenListening(() => {
      sent.push("ask");
      return Promise.resolve();
    });
    await Promise.resolve();
    expect(sent).toEqual([]);
    listening();
    await sending;
    expect(sent).toEqual(["ask"]);
  });
});
