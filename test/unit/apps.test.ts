/** MCP Apps URIs (src/registry/apps.ts): `ui://<server>/<rest>` out, `ui://<rest>` back. */
import { describe, expect, it } from "vitest";
import {
  appContents,
  appResource,
  appUri,
  splitAppUri,
  toolUi,
  withAppUris,
} from "../../src/registry/apps.js";

describe("MCP Apps URIs", () => {
  it("puts the server into ui:// URIs and takes it out again; other URIs unchanged", () => {
    expect(appUri("forecast", "ui://weather/view.html")).toBe("ui://forecast/weather/view.html");
    expect(appUri("forecast", "file:///tmp/x")).toBe("file:///tmp/x");
    expect(splitAppUri("ui://forecast/weather/view.html")).toEqual({
      server: "forecast",
      uri: "ui://weather/view.html",
    });
    expect(splitAppUri(appUri("s", "ui://a"))).toEqual({ server: "s", uri: "ui://a" });
    expect(splitAppUri("ui://forecast")).toBeUndefined();
    expect(splitAppUri("ui:///x")).toBeUndefined();
    expect(splitAppUri("https://x/y")).toBeUndefined();
  });

  it("reads a tool's UI in both spellings and rewrites only the URI, keeping the rest of _meta", () => {
    const tool = {
      name: "t",
      inputSchema: { type: "object" },
      _meta: { ui: { resourceUri: "ui://w/v.html", visibility: ["app"] }, other: 1 },
    };
    expect(toolUi(tool)).toBe("ui://w/v.html");
    expect(withAppUris("s", tool)._meta).toEqual({
      ui: { resourceUri: "ui://s/w/v.html", visibility: ["app"] },
      other: 1,
    });
    expect(tool._meta.ui.resourceUri).toBe("ui://w/v.html");
    const legacy = { name: "l", inputSchema: {}, _meta: { "ui/resourceUri": "ui://w/l.html" } };
    expect(toolUi(legacy)).toBe("ui://w/l.html");
    expect(withAppUris("s", legacy)._meta).toEqual({ "ui/resourceUri": "ui://s/w/l.html" });
    const none = { name: "n", inputSchema: {}, _meta: { ui: { resourceUri: "https://x" } } };
    expect(toolUi(none)).toBeUndefined();
    expect(withAppUris("s", none)).toBe(none);
  });

  it("rewrites resources and read contents, _meta kept", () => {
    const meta = { ui: { csp: { connectDomains: ["https://a"] } } };
    expect(appResource("s", { uri: "ui://w/v", name: "v", _meta: meta })).toEqual({
      uri: "ui://s/w/v",
      name: "v",
      _meta: meta,
    });
    expect(
      appContents("s", {
        contents: [
          { uri: "ui://w/v", text: "<html>", _meta: meta },
          { uri: "x://y", text: "y" },
        ],
      }),
    ).toEqual({
      contents: [
        { uri: "ui://s/w/v", text: "<html>", _meta: meta },
        { uri: "x://y", text: "y" },
      ],
    });
  });
});
