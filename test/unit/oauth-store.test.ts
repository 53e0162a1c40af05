/**
 * The OAuth token store (src/upstream/oauth/store.ts): files only the user can read, one winner
 * of the lock at a time, a lock left by a dead process broken, a torn file read as signed out.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultStateDir, TokenStore, type SignInRecord } from "../../src/upstream/oauth/store.js";
import { tempDir } from "../helpers/temp.js";

const RESOURCE = "https://mcp.example.com/mcp";
const record = (access: string): SignInRecord => ({
  resource: RESOURCE,
  issuer: "https://auth.example.com",
  metadata: {},
  client: { client_id: "c1" },
  tokens: { access_token: access, token_type: "Bearer" },
  savedAt: 0,
});

describe("TokenStore", () => {
  it("lives in $XDG_STATE_HOME/mcpx, else ~/.local/state/mcpx", () => {
    expect(defaultStateDir({ XDG_STATE_HOME: "/x/state", HOME: "/h" })).toBe("/x/state/mcpx");
    expect(defaultStateDir({ HOME: "/h" })).toBe("/h/.local/state/mcpx");
  });

  it("writes 0600 files in a 0700 folder and reads them back by resource", async () => {
    const store = new TokenStore(tempDir());
    await store.write(record("a1"));
    const file = store.fileOf(RESOURCE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect((await store.read(RESOURCE))?.tokens?.access_token).toBe("a1");
    expect(await store.read("https://other.example.com/mcp")).toBeUndefined();
    expect(await store.remove(RESOURCE)).toBe(true);
    expect(await store.remove(RESOURCE)).toBe(false);
  });

  it("reads a torn file as signed out", async () => {
    const store = new TokenStore(tempDir());
    await store.write(record("a1"));
    writeFileSync(store.fileOf(RESOURCE), "{ not json");
    expect(await store.read(RESOURCE)).toBeUndefined();
  });

  it("lets one holder of the lock at a time", async () => {
    const store = new TokenStore(tempDir());
    const order: string[] = [];
    let inside = 0;
    let most = 0;
    const hold = (name: string) =>
      store.withLock(RESOURCE, async () => {
        inside += 1;
        most = Math.max(most, inside);
        order.push(`${name}+`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`${name}-`);
        inside -= 1;
      });
    await Promise.all([hold("a"), hold("b"), hold("c")]);
    expect(most).toBe(1);
    expect(order).toHaveLength(6);
    expect(existsSync(`${store.fileOf(RESOURCE)}.lock`)).toBe(false);
  });

  it("breaks a lock whose process is gone", async () => {
    const store = new TokenStore(tempDir());
    await store.write(record("a1"));
    const lock = `${store.fileOf(RESOURCE)}.lock`;
    // No process has this pid (above Linux's pid_max).
    writeFileSync(lock, "4194999");
    const got = await store.withLock(RESOURCE, () => store.read(RESOURCE), { timeoutMs: 2_000 });
    expect(got?.tokens?.access_token).toBe("a1");
    expect(existsSync(lock)).toBe(false);
  });

  it("waits for a live holder, then gives up naming the lock", async () => {
    const store = new TokenStore(tempDir());
    await store.write(record("a1"));
    const lock = `${store.fileOf(RESOURCE)}.lock`;
    writeFileSync(lock, String(process.pid));
    await expect(
      store.withLock(RESOURCE, () => Promise.resolve(1), { timeoutMs: 100 }),
    ).rejects.toThrow(/held by another process/);
    expect(readFileSync(lock, "utf8")).toBe(String(process.pid));
  });
});
