/**
 * Request bodies and response types over HTTP, on the built mcpx: the bundle decodes bodies with
 * the platform's TextDecoder and knows the media types it serves (scripts/build-bin.mjs), so what
 * a client sends in any charset a browser knows is read as it was, and answers keep their types.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureServer,
  INITIALIZE,
  startHttp,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

let mcpx: RunningHttp;
beforeAll(async () => {
  mcpx = await startHttp(writeConfig({ mcpServers: { alpha: fixtureServer("counter.mjs") } }));
});
afterAll(async () => {
  await mcpx?.close();
});

const post = (body: Uint8Array | string, contentType: string) =>
  fetch(mcpx.url, {
    method: "POST",
    headers: { "Content-Type": contentType, Accept: "application/json, text/event-stream" },
    body,
  });

describe("HTTP request bodies and answer types", () => {
  it("reads a JSON body sent in UTF-16 as one sent in UTF-8", async () => {
    const message = {
      ...INITIALIZE,
      params: { ...INITIALIZE.params, clientInfo: { name: "é €", version: "1" } },
    };
    const utf16 = Buffer.from(`\ufeff${JSON.stringify(message)}`, "utf16le");
    for (const [body, type] of [
      [utf16, "application/json; charset=utf-16le"],
      [utf16, "application/json; charset=UTF-16"],
      [JSON.stringify(message), "application/json; charset=utf-8"],
      [JSON.stringify(message), "application/json"],
    ] as const) {
      const res = await post(body, type);
      expect(res.status, type).toBe(200);
      expect(await res.text(), type).toContain('"protocolVersion"');
    }
  });

  it("refuses a charset no decoder knows with 415, and serves the next request", async () => {
    const res = await post(JSON.stringify(INITIALIZE), "application/json; charset=klingon");
    expect(res.status).toBe(415);
    const next = await post(JSON.stringify(INITIALIZE), "application/json");
    expect(next.status).toBe(200);
  });

  it("answers JSON as application/json in UTF-8", async () => {
    const res = await fetch(new URL("/healthz", mcpx.url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });
});
