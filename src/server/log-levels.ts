/** MCP logging levels (`logging/setLevel`, a 2026-07-28 envelope's level), least severe first. */
import type { LoggingLevel } from "@modelcontextprotocol/server";

export const LOGGING_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** `value` as a logging level, or undefined when it is none. */
export function loggingLevel(value: unknown): LoggingLevel | undefined {
  return LOGGING_LEVELS.find((l) => l === value);
}
