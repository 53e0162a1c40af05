/**
 * Code mode's benchmark tasks: what a model does step by step with `call` (plainly, and at its
 * best with `select`) and what it writes as one `call({ script })`. Each arm drives the real
 * proxy; what the model writes (each request's arguments) and reads (each answer's text) is
 * counted in o200k tokens.
 */
import type { Client } from "@modelcontextprotocol/client";
import { makeIssues, TEAMS, USERS } from "../test/fixtures/upstreams/issues.mjs";
import { tokens } from "./count.js";

/** One request the model makes: which meta-tool, with what, and in which turn. */
interface Step {
  tool: "call" | "resources";
  args: Record<string, unknown>;
}

/** What one arm cost the model. */
export interface ArmResult {
  arm: string;
  /** Requests made (tool calls). */
  calls: number;
  /** Model turns: requests that need an earlier answer are a turn apart; independent ones share one. */
  turns: number;
  /** Tokens the model wrote (requests) and read (answers). */
  written: number;
  read: number;
  /** The last answer's text (a script's value, for the correctness check). */
  last: string;
}

export interface Task {
  id: string;
  title: string;
  arms: { name: string; run: (client: Client) => Promise<ArmResult> }[];
  /** The answer the script must produce (checked, so the benchmark measures a correct script). */
  expected: unknown;
}

/** The issues the replay fixture serves (REPLAY_ISSUES). */
export const ISSUE_COUNT = 60;
const OWNER = { owner: "acme", repo: "mcpx" };
const issues = makeIssues(ISSUE_COUNT);

/** Counts what crosses for a sequence of turns, each a list of requests sent together. */
class Tally {
  calls = 0;
  turns = 0;
  written = 0;
  read = 0;
  last = "";
  constructor(private readonly client: Client) {}

  /** One turn: its requests go out together; returns their answers' texts. */
  async turn(steps: Step[]): Promise<string[]> {
    this.turns += 1;
    const answers = await Promise.all(steps.map((s) => this.request(s)));
    return answers;
  }

  private async request(step: Step): Promise<string> {
    this.calls += 1;
    this.written += tokens(JSON.stringify(step.args));
    const r = await this.client.callTool({ name: step.tool, arguments: step.args });
    const text = (r.content as { type: string; text?: string }[])
      .flatMap((b) => (b.type === "text" && b.text !== undefined ? [b.text] : []))
      .join("\n");
    if (r.isError === true) throw new Error(`bench: ${step.tool} failed: ${text.slice(0, 300)}`);
    this.read += tokens(text);
    this.last = text;
    return text;
  }

  result(arm: string): ArmResult {
    const { calls, turns, written, read, last } = this;
    return { arm, calls, turns, written, read, last };
  }
}

const NEXT_PAGE = /resources\(\{ uri: "([^"]+)", offset: (\d+) \}\)/;

/** A cut answer is read to its end, page by page, as the notice tells the model to. */
async function readAll(tally: Tally, first: string): Promise<void> {
  let next = NEXT_PAGE.exec(first);
  while (next) {
    const [page] = await tally.turn([
      { tool: "resources", args: { uri: next[1]!, offset: Number(next[2]) } },
    ]);
    next = NEXT_PAGE.exec(page!);
  }
}

const isOpenBug = (i: (typeof issues)[number]) => i.state === "OPEN" && i.labels.includes("bug");

// ---------------------------------------------------------------------------------------------
// Task 1: list 60 issues, keep the open ones labelled bug, read 5, return titles and authors.

const TRIAGE_SCRIPT = `const { issues } = await servers.github.list_issues({ owner: "acme", repo: "mcpx", perPage: 60 });
const bugs = issues.filter((i) => i.state === "OPEN" && i.labels.includes("bug")).slice(0, 5);
const read = await Promise.all(bugs.map((i) =>
  servers.github.issue_read({ method: "get", owner: "acme", repo: "mcpx", issue_number: i.number })));
return read.map((i) => ({ number: i.number, title: i.title, author: i.user.login }));`;

const triageBugs = issues.filter(isOpenBug).slice(0, 5);

const read = (n: number, select?: string): Step => ({
  tool: "call",
  args: {
    method: "github.issue_read",
    arguments: { method: "get", ...OWNER, issue_number: n },
    ...(select !== undefined && { select }),
  },
});

const triage: Task = {
  id: "triage",
  title: `List ${ISSUE_COUNT} issues, keep the open ones labelled bug, read 5, return titles and authors`,
  expected: triageBugs.map((i) => ({ number: i.number, title: i.title, author: i.user.login })),
  arms: [
    {
      name: "step by step",
      run: async (client) => {
        const t = new Tally(client);
        const [list] = await t.turn([
          {
            tool: "call",
            args: { method: "github.list_issues", arguments: { ...OWNER, perPage: ISSUE_COUNT } },
          },
        ]);
        await readAll(t, list!);
        await t.turn(triageBugs.map((i) => read(i.number)));
        return t.result("step by step");
      },
    },
    {
      name: "step by step with select",
      run: async (client) => {
        const t = new Tally(client);
        await t.turn([
          {
            tool: "call",
            args: {
              method: "github.list_issues",
              arguments: { ...OWNER, perPage: ISSUE_COUNT },
              select: "issues[?state=='OPEN' && contains(labels, 'bug')].number",
            },
          },
        ]);
        await t.turn(
          triageBugs.map((i) =>
            read(i.number, "{number: number, title: title, author: user.login}"),
          ),
        );
        return t.result("step by step with select");
      },
    },
    {
      name: "one script",
      run: async (client) => {
        const t = new Tally(client);
        await t.turn([{ tool: "call", args: { script: TRIAGE_SCRIPT } }]);
        return t.result("one script");
      },
    },
  ],
};

// ---------------------------------------------------------------------------------------------
// Task 2: join two servers: which team owns the open bug issues (memory knows the teams)?

/** Each author's team, as the memory server is seeded with it. */
export function teamOf(login: string): string {
  return TEAMS[USERS.indexOf(login) % TEAMS.length]!;
}

/** The people and teams the memory server holds for the join. */
export function memorySeed() {
  const people = USERS.map((login, i) => ({
    name: login,
    entityType: "person",
    observations: [
      `team: ${teamOf(login)}`,
      `timezone: UTC${i % 2 ? "+" : "-"}${(i % 9) + 1}`,
      `role: ${["maintainer", "contributor", "reviewer"][i % 3]}`,
      `joined: 202${i % 6}`,
    ],
  }));
  const teams = TEAMS.map((name) => ({
    name,
    entityType: "team",
    observations: [`${name} team`],
  }));
  const relations = USERS.map((login) => ({
    from: login,
    to: teamOf(login),
    relationType: "member_of",
  }));
  return { entities: [...people, ...teams], relations };
}

const JOIN_SCRIPT = `const [{ issues }, graph] = await Promise.all([
  servers.github.list_issues({ owner: "acme", repo: "mcpx", state: "OPEN", labels: ["bug"], perPage: 100 }),
  servers.memory.read_graph({}),
]);
const team = {};
for (const r of graph.relations) if (r.relationType === "member_of") team[r.from] = r.to;
const counts = {};
for (const i of issues) counts[team[i.user.login] ?? "unknown"] = (counts[team[i.user.login] ?? "unknown"] ?? 0) + 1;
return counts;`;

const LIST_BUGS = {
  method: "github.list_issues",
  arguments: { ...OWNER, state: "OPEN", labels: ["bug"], perPage: 100 },
};

const join: Task = {
  id: "join",
  title: "Join two servers: count the open bug issues per team of their authors (github × memory)",
  expected: issues.filter(isOpenBug).reduce<Record<string, number>>((counts, i) => {
    const team = teamOf(i.user.login);
    counts[team] = (counts[team] ?? 0) + 1;
    return counts;
  }, {}),
  arms: [
    {
      name: "step by step",
      run: async (client) => {
        const t = new Tally(client);
        const answers = await t.turn([
          { tool: "call", args: LIST_BUGS },
          { tool: "call", args: { method: "memory.read_graph", arguments: {} } },
        ]);
        for (const a of answers) await readAll(t, a);
        return t.result("step by step");
      },
    },
    {
      name: "step by step with select",
      run: async (client) => {
        const t = new Tally(client);
        await t.turn([
          { tool: "call", args: { ...LIST_BUGS, select: "issues[].user.login" } },
          {
            tool: "call",
            args: {
              method: "memory.read_graph",
              arguments: {},
              select: "relations[?relationType=='member_of'].[from, to]",
            },
          },
        ]);
        return t.result("step by step with select");
      },
    },
    {
      name: "one script",
      run: async (client) => {
        const t = new Tally(client);
        await t.turn([{ tool: "call", args: { script: JOIN_SCRIPT } }]);
        return t.result("one script");
      },
    },
  ],
};

export const TASKS: readonly Task[] = [triage, join];
