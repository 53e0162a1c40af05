/**
 * "Calls that succeed the first time": realistic slips in `call` (the shapes models write), run
 * through the proxy. Each either gets its answer now, or an error that names the fix, so the
 * next call succeeds without a describe. Part of `npm run bench -- tokens`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { resultText } from "./upstreams.js";

export interface Slip {
  shape: string;
  args: Record<string, unknown>;
  /** A piece of the right answer. */
  answer: string;
}

const PR = { owner: "o", repo: "r", title: "t", head: "feature", base: "main" };

/** Against server-everything and the replayed github corpus (which echoes tool and arguments). */
export const SLIPS: readonly Slip[] = [
  {
    shape: "server__tool",
    args: { method: "everything__echo", arguments: { message: "hi" } },
    answer: "Echo: hi",
  },
  {
    shape: "mcp__<proxy>__server__tool",
    args: { method: "mcp__mcpx__everything__echo", arguments: { message: "hi" } },
    answer: "Echo: hi",
  },
  {
    shape: "mcp__server__tool",
    args: { method: "mcp__github__create_issue", arguments: { owner: "o", repo: "r", title: "t" } },
    answer: "create_issue",
  },
  {
    shape: "server/tool",
    args: { method: "github/list_issues", arguments: { owner: "o", repo: "r" } },
    answer: "list_issues",
  },
  {
    shape: "bare tool name",
    args: { method: "get-sum", arguments: { a: 2, b: 40 } },
    answer: "42",
  },
  {
    shape: "bare tool name (github)",
    args: { method: "create_pull_request", arguments: PR },
    answer: "create_pull_request",
  },
  {
    shape: "arguments at the top level",
    args: { method: "everything.get-sum", a: 2, b: 40 },
    answer: "42",
  },
  {
    shape: "arguments at the top level (github)",
    args: { method: "github.create_pull_request", ...PR },
    answer: "create_pull_request",
  },
  {
    shape: "tool instead of method",
    args: { tool: "everything.echo", arguments: { message: "hi" } },
    answer: "Echo: hi",
  },
  {
    shape: "name instead of method",
    args: { name: "github.get_me", arguments: {} },
    answer: "get_me",
  },
  {
    shape: "arguments as a JSON string",
    args: { method: "everything.get-sum", arguments: '{"a":2,"b":40}' },
    answer: "42",
  },
  {
    shape: "name + server__tool + top-level arguments",
    args: { name: "everything__get-sum", a: 2, b: 40 },
    answer: "42",
  },
];

export interface Fixable {
  shape: string;
  args: Record<string, unknown>;
  /** What the error must say for the next call to succeed. */
  fix: string[];
  /** That next call, written from the error alone. */
  retry: Record<string, unknown>;
  answer: string;
}

export const FIXABLE: readonly Fixable[] = [
  {
    shape: "abbreviated parameter (msg)",
    args: { method: "everything.echo", arguments: { msg: "hi" } },
    fix: ['did you mean "message"', "Required: message"],
    retry: { method: "everything.echo", arguments: { message: "hi" } },
    answer: "Echo: hi",
  },
  {
    shape: "misspelled parameter (titel)",
    args: { method: "github.create_issue", arguments: { owner: "o", repo: "r", titel: "t" } },
    fix: ['did you mean "title"', "Required: owner, repo, title"],
    retry: { method: "github.create_issue", arguments: { owner: "o", repo: "r", title: "t" } },
    answer: "create_issue",
  },
  {
    shape: "longer name (repository)",
    args: { method: "github.list_issues", arguments: { owner: "o", repository: "r" } },
    fix: ['did you mean "repo"', "Required: owner, repo"],
    retry: { method: "github.list_issues", arguments: { owner: "o", repo: "r" } },
    answer: "list_issues",
  },
];

/**
 * The slips that got their answer on mcpx 723fdf9 (the commit before this work), with the same
 * upstreams: only a JSON-string `arguments`. None of the FIXABLE errors named the fix there (they
 * said `missing required property "message"`, with no "did you mean" and no required keys).
 * Measured by running these lists against that commit's build; kept here so the bench needs no
 * second build.
 */
export const BEFORE_OK: ReadonlySet<string> = new Set(["arguments as a JSON string"]);

export interface SlipOutcome {
  shape: string;
  ok: boolean;
  text: string;
}

export async function runSlips(client: Client): Promise<SlipOutcome[]> {
  const out: SlipOutcome[] = [];
  for (const s of SLIPS) {
    const r = await client.callTool({ name: "call", arguments: s.args });
    const text = resultText(r);
    out.push({ shape: s.shape, ok: r.isError !== true && text.includes(s.answer), text });
  }
  return out;
}

export interface FixOutcome {
  shape: string;
  named: boolean;
  retried: boolean;
  text: string;
}

export async function runFixable(client: Client): Promise<FixOutcome[]> {
  const out: FixOutcome[] = [];
  for (const f of FIXABLE) {
    const r = await client.callTool({ name: "call", arguments: f.args });
    const text = resultText(r);
    const again = await client.callTool({ name: "call", arguments: f.retry });
    out.push({
      shape: f.shape,
      named: r.isError === true && f.fix.every((x) => text.includes(x)),
      retried: again.isError !== true && resultText(again).includes(f.answer),
      text,
    });
  }
  return out;
}
