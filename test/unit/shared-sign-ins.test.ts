/**
 * Sign-ins kept in shared values (src/upstream/oauth/shared-store.ts), on the in-process store:
 * records sealed under the resource's hash, readable only with the key that wrote them; the
 * refresh lock lets one holder in at a time and is released by its holder. The same code on
 * Redis: test/integration/oauth-redis.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MemoryShared } from "../../src/shared/memory.js";
import { SharedSignIns } from "../../src/upstream/oauth/shared-store.js";
import { resourceKey, type SignInRecord } from "../../src/upstream/oauth/store.js";

const KEY = "shared-sign-ins-test-key-0123456789";
const record = (resource: string): SignInRecord => ({
  resource,
  issuer: "https://as.example",
  metadata: {},
  client: { client_id: "c1", client_secret: "client-secret-value" },
  tokens: { access_token: "access-token-value", token_type: "Bearer" },
  savedAt: 0,
});

describe("SharedSignIns", () => {
  it("keeps a record sealed under the resource's hash; another resource or key reads nothing of it", async () => {
    const shared = new MemoryShared();
    const store = new SharedSignIns(shared, KEY);
    await store.write(record("https://a.example/mcp"));
    const raw = await shared.values("oauth").get(resourceKey("https://a.example/mcp"));
    expect(raw).toMatch(/^m1\./);
    expect(raw).not.toContain("access-token-value");
    expect(raw).not.toContain("client-secret-value");
    expect((await store.read("https://a.example/mcp"))?.tokens?.access_token).toBe(
      "access-token-value",
    );
    expect(await store.read("https://b.example/mcp")).toBeUndefined();
    await expect(
      new SharedSignIns(shared, "other-key-0123456789abcdef").read("https://a.example/mcp"),
    ).rejects.toThrow(/redis\.encryptionKey/);
    expect(await store.remove("https://a.example/mcp")).toBe(true);
    expect(await store.remove("https://a.example/mcp")).toBe(false);
    expect(await store.read("https://a.example/mcp")).toBeUndefined();
    await shared.close();
  });

  it("the lock admits one holder at a time and is free again after", async () => {
    const shared = new MemoryShared();
    const a = new SharedSignIns(shared, KEY);
    const b = new SharedSignIns(shared, KEY);
    const order: string[] = [];
    let inside = 0;
    const hold = (who: string, store: SharedSignIns) =>
      store.withLock("https://a.example/mcp", async () => {
        inside += 1;
        expect(inside).toBe(1);
        order.push(`${who} in`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`${who} out`);
        inside -= 1;
      });
    await Promise.all([hold("a", a), hold("b", b)]);
    expect(order).toHaveLength(4);
    expect(order[1]).toBe(`${order[0]!.split(" ")[0]} out`);
    // Released: taken again at once, and a short timeout fails while another holds it.
    await a.withLock("https://a.example/mcp", async () => {
      await expect(
        b.withLock("https://a.example/mcp", async () => {}, { timeoutMs: 50 }),
      ).rejects.toThrow(/refresh lock .* is held by another replica/);
    });
    await shared.close();
  });
});
