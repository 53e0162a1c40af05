/**
 * The dashboard's event stream over a real HTTP connection: a browser that stops reading gets
 * its events dropped and counted once its buffer is full (memory stays bounded), and is told
 * how many when it reads again.
 */
import { request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, expect, it } from "vitest";
import { EventHub } from "../../src/dashboard/stream.js";

const LIMITS = {
  maxStreams: 2,
  maxBufferedBytes: 64 * 1024,
  maxPending: 100,
  flushMs: 60_000,
  statusMs: 60_000,
  heartbeatMs: 60_000,
};

let hub: EventHub | undefined;
let server: Server | undefined;
let response: IncomingMessage | undefined;
afterEach(async () => {
  response?.destroy();
  hub?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections();
  hub = undefined;
  server = undefined;
});

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

it("drops and counts events for a reader that stopped, then says how many", async () => {
  const h = new EventHub({ visible: () => true, status: () => ({ ok: true }) }, LIMITS);
  hub = h;
  const app = express();
  app.get("/events", (req, res) => void h.open(req, res, {}));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request(`http://127.0.0.1:${port}/events`, resolve).on("error", reject).end();
  });
  response = res;
  expect(res.headers["content-type"]).toBe("text/event-stream");
  res.pause();

  // The reader reads nothing: kernel buffers fill, then the stream's own buffer, then drops.
  const line = "x".repeat(64 * 1024);
  for (let i = 0; i < 5000 && h.dropped === 0; i++) {
    h.publish({ type: "log", data: { text: line } });
    h.flush();
    await turn();
  }
  expect(h.dropped).toBeGreaterThan(0);

  // Reading again: the dropped count arrives before new events.
  let seen = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    // Keep only the tail: the 64 KB lines themselves are not the point.
    seen = (seen + chunk).slice(-4096);
  });
  res.resume();
  const deadline = Date.now() + 10_000;
  while (!/event: dropped\ndata: \{"count":\d+\}/.test(seen) || !seen.includes('"after"')) {
    if (Date.now() > deadline) throw new Error(`no dropped event; tail: ${seen.slice(-200)}`);
    h.publish({ type: "log", data: { text: "after" } });
    h.flush();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const count = Number(/event: dropped\ndata: \{"count":(\d+)\}/.exec(seen)![1]);
  expect(count).toBeGreaterThan(0);
});
