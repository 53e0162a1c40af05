/** Help text of every command: examples and exit codes (src/cli.ts declares the options). */

/** How each command exits; printed by every --help. */
export const EXIT_CODES = `Exit codes:
  0  success
  1  the command failed (validate found problems, a server did not start, install refused)
  2  bad command line, or a config that cannot be read (serving and import)`;

export const SERVE_EXAMPLES = `
Examples:
  mcpx mcpx.json                      serve over stdio (what a client starts)
  mcpx mcpx.json --port 3000          serve streamable HTTP at http://127.0.0.1:3000/mcp
  mcpx ~/.cursor/mcp.json             serve a client's own config as it is
  mcpx --untrusted .mcp.json          a cloned project's file: no local commands, public https only
  mcpx mcpx.json --daemon             stdio, attached to the one shared mcpx of this config
  mcpx install claude-desktop         move Claude Desktop's servers to mcpx (undo: mcpx uninstall)
  mcpx <command> --help               each command's options and examples

Config formats (detected from the file's name and shape, or --format):
  mcpx, claude-code (.mcp.json, ~/.claude.json), claude-desktop (claude_desktop_config.json),
  cursor (mcp.json), vscode (mcp.json with "servers"), gemini (settings.json), codex (config.toml)

${EXIT_CODES}`;

export const IMPORT_HELP = `
Every server is kept; invalid names are renamed; servers mcpx cannot run as the client does
(OAuth sign-in, a VS Code sandbox, WebSocket) are listed and left out. Secrets stay \${VAR}
references where the source had them. The summary goes to stderr.

Examples:
  mcpx import ~/.cursor/mcp.json -o ~/mcpx.json
  mcpx import .vscode/mcp.json -o - > mcpx.json
  mcpx import ~/.claude.json --project ~/code/app   (user + that project's local servers)

${EXIT_CODES}`;

export const INSTALL_HELP = `
Imports the client's servers into an mcpx config, writes a timestamped backup of the client's
file beside it, then rewrites the client's file so one "mcpx" entry (stdio, absolute paths)
replaces the servers it moved. Servers mcpx cannot run stay where they are. Unrelated keys,
comments and formatting are kept. A file mcpx cannot parse is never touched.

Examples:
  mcpx install claude-desktop
  mcpx install claude-code --scope project --dry-run
  mcpx install cursor --config ~/mcpx.json
  mcpx uninstall cursor                 (restores the backup)

${EXIT_CODES}`;

export const UNINSTALL_HELP = `
Restores the newest backup install wrote, byte for byte, when the client's file is as install
left it; otherwise removes the "mcpx" entry and puts back the servers install moved, keeping
what was added since. The mcpx config is left in place.

Examples:
  mcpx uninstall claude-desktop
  mcpx uninstall vscode --scope project --dry-run

${EXIT_CODES}`;

export const VALIDATE_HELP = `
Prints each problem with its key path and exits 1, or a summary of the servers and exits 0.
Values of env, headers and tokens are never printed (shown as ***).

Examples:
  mcpx validate mcpx.json
  mcpx validate ~/.codex/config.toml --connect
  mcpx validate --untrusted .mcp.json

${EXIT_CODES}`;

export const STATS_HELP = `
Starts every server, then counts the tokens (o200k_base) of its tool definitions as a client
loads them directly (name, description, input schema: the API form), against the three
meta-tools mcpx shows instead. The same count as \`npm run bench\`.

Examples:
  mcpx stats ~/.cursor/mcp.json
  mcpx stats mcpx.json --json

${EXIT_CODES}`;

export const TRUST_HELP = `
mcpx pins each server's tool and prompt definitions the first time it sees them
($XDG_STATE_HOME/mcpx/pins/). A definition that changes, a new one, or one with hidden characters
or text addressed to the model waits here: "diff" shows it as a word diff against its pin
([-removed-] {+added+}), "approve" pins it, and a running mcpx serves it at once.

Examples:
  mcpx trust diff mcpx.json
  mcpx trust diff mcpx.json github.create_issue
  mcpx trust approve mcpx.json github.create_issue
  mcpx trust approve mcpx.json github          (everything pending of the server)
`;

export const LOGIN_HELP = `
For remote servers protected by OAuth (the server answers 401 with a Bearer challenge): mcpx
finds the authorization server, registers itself, opens the browser (or, with --no-browser or no
display, prints the URL and reads the address you were sent back to from stdin) and keeps the
tokens in $XDG_STATE_HOME/mcpx/oauth/ (default ~/.local/state/mcpx/oauth/, readable only by you).
A running mcpx picks the sign-in up without a restart. logout forgets the tokens and asks the
authorization server to revoke them.

Examples:
  mcpx login ~/.config/mcpx/claude-code.json linear
  mcpx login mcpx.json notion --no-browser
  mcpx login mcpx.json sentry --scope "org:read project:write"   (step-up: a wider scope)
  mcpx logout mcpx.json linear

${EXIT_CODES}`;

export const DAEMON_HELP = `
A client that launches \`mcpx <config> --daemon\` gets a thin shim: it attaches to the one mcpx
daemon of that config file (starting it in the background when none runs) and relays the
client's MCP to it. Every client of the config shares the daemon's upstream servers, catalog and
cache; each stays its own client (caller, sessions, logging level, roots, answers). The daemon
listens on a Unix socket under $XDG_RUNTIME_DIR/mcpx/ (else a 0700 folder in the temp dir), reloads
the config when it changes, and exits after --daemon-idle ms with no client.

Actions:
  run     be the daemon (in the foreground; the shim starts it detached)
  status  its pid, version, uptime, clients and upstream servers
  stop    shut it down (its upstream servers stop; attached clients reconnect to a new one)
  logs    print its log file

Examples:
  mcpx daemon status ~/.config/mcpx/claude-code.json
  mcpx daemon stop ~/.config/mcpx/claude-code.json

${EXIT_CODES}`;
