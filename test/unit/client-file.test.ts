/** Editing a client's file in place: only the servers change, every other byte stays. */
import { describe, expect, it } from "vitest";
import { editServers, parseDocument } from "../../src/commands/client-file.js";

const MCPX = { command: "/usr/bin/node", args: ["/opt/mcpx/dist/index.js", "/home/u/mcpx.json"] };

function edited(
  text: string,
  kind: "json" | "toml",
  at: string[],
  remove: string[],
  add: Record<string, unknown> = { mcpx: MCPX },
): string {
  const out = editServers(text, kind, { at, remove, add });
  if (out instanceof Error) throw out;
  return out;
}

describe("JSON and JSONC", () => {
  const vscode = `{
    // my servers
    "inputs": [ { "type": "promptString", "id": "k" } ],
    "servers": {
        "a": { "command": "a" }, // the first
        /* b is important */
        "b": {
            "command": "b"
        },
        "c": { "command": "c" },
    },
    "extra": true // unrelated
}
`;

  it("removes entries with their lines and comments, appends mcpx indented like its siblings", () => {
    expect(edited(vscode, "json", ["servers"], ["a", "c"])).toBe(`{
    // my servers
    "inputs": [ { "type": "promptString", "id": "k" } ],
    "servers": {
        /* b is important */
        "b": {
            "command": "b"
        },
        "mcpx": {
            "command": "/usr/bin/node",
            "args": [
                "/opt/mcpx/dist/index.js",
                "/home/u/mcpx.json"
            ]
        },
    },
    "extra": true // unrelated
}
`);
  });

  it("removes the last entry with the comma before it", () => {
    const text = '{\n  "mcpServers": {\n    "a": {},\n    "b": {}\n  },\n  "preferences": {}\n}\n';
    expect(edited(text, "json", ["mcpServers"], ["b"], {})).toBe(
      '{\n  "mcpServers": {\n    "a": {}\n  },\n  "preferences": {}\n}\n',
    );
  });

  it("empties a map and fills it again, keeping tabs and CRLF", () => {
    const text = '{\r\n\t"mcpServers": {\r\n\t\t"a": { "command": "a" }\r\n\t}\r\n}\r\n';
    expect(edited(text, "json", ["mcpServers"], ["a"], { mcpx: { command: "n" } })).toBe(
      '{\r\n\t"mcpServers": {\r\n\t\t"mcpx": {\r\n\t\t\t"command": "n"\r\n\t\t}\r\n\t}\r\n}\r\n',
    );
  });

  it("edits a map deep inside the file (~/.claude.json local scope)", () => {
    const text = JSON.stringify(
      { numStartups: 3, projects: { "/p": { mcpServers: { a: { command: "a" } }, x: 1 } } },
      null,
      2,
    );
    const doc = parseDocument(
      edited(text, "json", ["projects", "/p", "mcpServers"], ["a"]),
      "json",
    );
    expect(doc).toEqual({
      numStartups: 3,
      projects: { "/p": { mcpServers: { mcpx: MCPX }, x: 1 } },
    });
  });

  it("refuses a file that does not parse", () => {
    expect(
      editServers('{ "mcpServers": { ', "json", { at: ["mcpServers"], remove: [], add: {} }),
    ).toBeInstanceOf(Error);
  });
});

describe("TOML (Codex)", () => {
  const codex = `# top comment
model = "o4-mini"

# about echo
[mcp_servers.echo]
command = "node"
args = ["e.js"]

[mcp_servers.echo.env]
A = "1"

# kept: about the profile
[profiles.fast]
model = "x"

[mcp_servers."my server"]
command = "m"
`;

  it("removes whole tables (sub-tables and the comments above them), appends [mcp_servers.mcpx]", () => {
    expect(edited(codex, "toml", ["mcp_servers"], ["echo", "my server"])).toBe(`# top comment
model = "o4-mini"

# kept: about the profile
[profiles.fast]
model = "x"

[mcp_servers.mcpx]
command = "/usr/bin/node"
args = [ "/opt/mcpx/dist/index.js", "/home/u/mcpx.json" ]
`);
  });

  it("refuses servers written as inline tables or dotted keys, which it cannot cut out", () => {
    const inline = 'mcp_servers = { echo = { command = "node" } }\n';
    const dotted = '[mcp_servers]\necho.command = "node"\n';
    for (const text of [inline, dotted]) {
      const out = editServers(text, "toml", {
        at: ["mcp_servers"],
        remove: ["echo"],
        add: { mcpx: MCPX },
      });
      expect(out).toBeInstanceOf(Error);
      expect((out as Error).message).toContain("edit it by hand");
    }
  });
});
