/**
 * Traces' inputs: the W3C traceparent a client sends (HTTP header or `_meta.traceparent`) and the
 * `tracing` config key.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/load.js";
import { clientTraceparent, formatTraceparent, parseTraceparent } from "../../src/traceparent.js";

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OTHER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

describe("traceparent", () => {
  it("parses version 00 and formats it back", () => {
    const tp = parseTraceparent(TP);
    expect(tp).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      flags: 1,
    });
    expect(formatTraceparent(tp!)).toBe(TP);
  });

  it.each([
    ["all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
    ["another version", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["uppercase hex in _meta", TP.toUpperCase()],
    ["too short", TP.slice(0, -1)],
    ["not a string", 42],
  ])("ignores %s", (_why, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("takes _meta.traceparent before the header, and a header's case and spaces do not matter", () => {
    expect(clientTraceparent({ traceparent: TP }, OTHER)).toBe(TP);
    expect(clientTraceparent({ traceparent: "garbage" }, OTHER)).toBe(OTHER);
    expect(clientTraceparent(undefined, ` ${TP.toUpperCase()} `)).toBe(TP);
    expect(clientTraceparent(undefined, null)).toBeUndefined();
  });
});

describe("tracing config", () => {
  const load = (tracing: unknown, untrusted = false) =>
    parseConfig(
      { mcpServers: { a: { type: "http", url: "https://example.com/mcp" } }, tracing },
      "/tmp/mcpx.json",
      {},
      { untrusted },
    );

  it("takes an http(s) OTLP traces URL", () => {
    expect(load({ otlp: "http://localhost:4318/v1/traces" }).tracing).toEqual({
      otlp: "http://localhost:4318/v1/traces",
    });
    expect(load({}).tracing).toBeUndefined();
  });

  it.each([
    ["not a URL", { otlp: "localhost:4318" }, /tracing\.otlp: must be the http\(s\) URL/],
    [
      "credentials",
      { otlp: "http://user:pw@collector:4318/v1/traces" },
      /OTEL_EXPORTER_OTLP_HEADERS/,
    ],
    ["a misspelled key", { otpl: "http://localhost:4318" }, /tracing.*otpl/],
  ])("refuses %s, naming the key", (_why, tracing, message) => {
    expect(() => load(tracing)).toThrow(ConfigError);
    expect(() => load(tracing)).toThrow(message);
  });

  it("refuses it in an untrusted config", () => {
    expect(() => load({ otlp: "https://collector.example.com/v1/traces" }, true)).toThrow(
      /tracing: refused: an untrusted config may not choose where mcpx sends traces/,
    );
  });
});
