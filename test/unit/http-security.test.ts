/** Bind rules and accepted hostnames for the HTTP server (pure functions). */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { allowedHostnames, exposure, isLoopback } from "../../src/server/http.js";

const auth = { auth: { tokens: new Map([["t0ken-for-tests", "ci"]]) } };

describe("HTTP exposure", () => {
  it("knows loopback binds", () => {
    for (const h of ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
      expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.5", "example.com"])
      expect(isLoopback(h)).toBe(false);
  });

  it("allows loopback always, elsewhere only with auth or --allow-unauthenticated", () => {
    expect(exposure("127.0.0.1", {}, false)).toBeUndefined();
    expect(exposure("0.0.0.0", auth, false)).toBeUndefined();
    const refused = exposure("0.0.0.0", {}, false);
    expect(refused && "error" in refused && refused.error).toContain('the config has no "auth"');
    const warned = exposure("0.0.0.0", {}, true);
    expect(warned && "warning" in warned && warned.warning).toMatch(/^SERVING WITHOUT AUTH/);
  });

  it("accepts loopback names, plus the bound address, the machine's name and extras elsewhere", () => {
    expect(allowedHostnames("127.0.0.1")).toEqual(["localhost", "127.0.0.1", "[::1]"]);
    expect(allowedHostnames("127.0.0.1", ["proxy.local"])).toContain("proxy.local");
    const lan = allowedHostnames("192.168.1.5");
    expect(lan).toEqual(expect.arrayContaining(["192.168.1.5", hostname(), "localhost"]));
    expect(allowedHostnames("fd00::5")).toContain("[fd00::5]");
    expect(allowedHostnames("0.0.0.0")).toContain("127.0.0.1");
  });
});
