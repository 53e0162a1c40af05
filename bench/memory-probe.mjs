/**
 * Preloaded into the mcpx process by the memory benchmark (`node --expose-gc --import <this>`):
 * answers over the IPC channel with process.memoryUsage() and the sizes of V8's new and old
 * spaces, then the same after two forced full GCs (what is really retained); writes a heap
 * snapshot on request. Nothing of it is part of mcpx.
 */
import process from "node:process";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";

function reading() {
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]),
  );
  return { ...process.memoryUsage(), newSpace: spaces.new_space, oldSpace: spaces.old_space };
}

if (process.send) {
  process.on("message", (msg) => {
    if (msg?.type === "memory") {
      const now = reading();
      globalThis.gc?.();
      globalThis.gc?.();
      process.send?.({ type: "memory", now, live: reading() });
    } else if (msg?.type === "snapshot") {
      process.send?.({ type: "snapshot", file: writeHeapSnapshot(msg.file) });
    }
  });
  // The IPC channel must not keep mcpx alive at shutdown.
  process.channel?.unref();
}
