/**
 * Debian's Chromium for the browser tests (playwright-core drives it): where it is, the flags
 * every test runs it with, and one launch that keeps its temp files in a folder the test removes.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { tempDir } from "./temp.js";

export const CHROMIUM = process.env.MCPX_CHROMIUM ?? "/usr/bin/chromium";

/** Headless, no sandbox (containers), and nothing that reaches the network by itself. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Throws, saying how to get one, when there is no Chromium at CHROMIUM. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium, as .ci/run does) or set MCPX_CHROMIUM.`,
    );
  }
}

/** Launch Chromium (after requireChromium), its own temp files in a folder the test removes. */
export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    env: { ...process.env, TMPDIR: tempDir() },
  });
}
