/**
 * Calls that succeed the first time: the shapes of `call` models commonly write, read as meant
 * against the caller's view (src/executor/normalize.ts, resolve.ts), and argument errors that
 * say how to fix them. In-memory SDK upstreams behind a whole proxy, an SDK client in front.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { suggestName } from "../../src/config/suggest.js";
import { normalizeCallInput } from "../../src/executor/normalize.js";
import type { Profile } from "../../src/config/load.js";
import { CatalogView } from "../../src/registry/view.js";
import { listMetaTools } from "../../src/server/mcp-server.js";
import { BEFORE_CODE_MODE, BEFORE_DEFS } from "../fixtures/meta-tools-before.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectTransport } from "../../src/upstream/factory.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { connectClient, memoryConfig, memoryProxy, quietLogger } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

/** An upstream whose tools echo their name and arguments. */
function upstream(server: string, tools: string[]): () => McpServer {
  return () => {
    const s = new McpServer({ name: server, version: "1.0.0" });
    for (const name of tools) {
      s.registerTool(
        name,
        {
          description: `${name} of ${server}`,
          inputSchema: { title: z.string(), body: z.string().optional() },
        },
        (args) => ({
          content: [{ type: "text", text: `${server}.${name} ${JSON.stringify(args)}` }],
        }),
      );
    }
    return s;
  };
}

const UPSTREAMS = {
  github: upstream("github", ["create_issue", "list_issues", "echo"]),
  notes: upstream("notes", ["echo", "b__c", "pages.get"]),
  notes__b: upstream("notes__b", ["c"]),
};
const ACCESS = {
  profiles: {
    default: { servers: ["*"] },
    limited: { servers: ["*"], tools: { deny: ["github.create_issue"] } },
  },
  callers: { bot: "limited" },
};

let proxies: Proxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
});

async function client(upstreams: Record<string, () => McpServer> = UPSTREAMS, caller?: string) {
  const proxy = memoryProxy(upstreams, {
    config: memoryConfig(Object.keys(upstreams), ACCESS),
  });
  proxies.push(proxy);
  await proxy.start();
  const session = await connectClient(proxy, caller === undefined ? {} : { caller });
  const call = async (args: Record<string, unknown>) => {
    const r = await session.client.callTool({ name: "call", arguments: args });
    // A 2026-07-28 answer also carries the SDK's own server identity: only mcpx's keys matter here.
    const { "io.modelcontextprotocol/serverInfo": _identity, ...ours } = r._meta ?? {};
    return {
      isError: r.isError === true,
      text: text(r),
      meta: Object.keys(ours).length > 0 ? ours : undefined,
    };
  };
  return { call, close: session.close };
}

describe("call: shapes models write", () => {
  const shapes: [string, Record<string, unknown>, string[]][] = [
    [
      "server__tool",
      { method: "github__create_issue", arguments: { title: "t" } },
      ['method "github__create_issue" read as "github.create_issue"'],
    ],
    [
      "server/tool",
      { method: "github/create_issue", arguments: { title: "t" } },
      ['method "github/create_issue" read as "github.create_issue"'],
    ],
    [
      "mcp__<proxy>__server__tool",
      { method: "mcp__mcpx__github__create_issue", arguments: { title: "t" } },
      ['method "mcp__mcpx__github__create_issue" read as "github.create_issue"'],
    ],
    [
      "mcp__server__tool",
      { method: "mcp__github__create_issue", arguments: { title: "t" } },
      ['method "mcp__github__create_issue" read as "github.create_issue"'],
    ],
    [
      "a bare tool name on one server",
      { method: "create_issue", arguments: { title: "t" } },
      ['method "create_issue" read as "github.create_issue"'],
    ],
    [
      "tool instead of method",
      { tool: "github.create_issue", arguments: { title: "t" } },
      ["method from tool"],
    ],
    [
      "name instead of method",
      { name: "github.create_issue", arguments: { title: "t" } },
      ["method from name"],
    ],
    [
      "arguments at the top level",
      { method: "github.create_issue", title: "t" },
      ["arguments from top level"],
    ],
    [
      "arguments as a JSON string",
      { method: "github.create_issue", arguments: '{"title":"t"}' },
      ["arguments from a JSON string"],
    ],
    [
      "all at once",
      { name: "github__create_issue", title: "t" },
      [
        "method from name",
        "arguments from top level",
        'method "github__create_issue" read as "github.create_issue"',
      ],
    ],
  ];

  it.each(shapes)("runs %s, saying in _meta what was read differently", async (_, args, notes) => {
    const { call, close } = await client();
    try {
      const r = await call(args);
      expect(r).toEqual({
        isError: false,
        text: 'github.create_issue {"title":"t"}',
        meta: { "mcpx/normalized": notes },
      });
    } finally {
      await close();
    }
  });

  it("adds no _meta to a call written as documented", async () => {
    const { call, close } = await client();
    try {
      const r = await call({ method: "github.create_issue", arguments: { title: "t" } });
      expect(r.meta).toBeUndefined();
    } finally {
      await close();
    }
  });

  it("matches names that contain __ and / against the view's real pairs", async () => {
    const { call, close } = await client();
    try {
      expect((await call({ method: "notes/pages.get", title: "t" })).text).toBe(
        'notes.pages.get {"title":"t"}',
      );
      expect((await call({ method: "notes__pages.get", title: "t" })).text).toBe(
        'notes.pages.get {"title":"t"}',
      );
      // notes + b__c, or notes__b + c: both exist, so neither is guessed.
      const ambiguous = await call({ method: "notes__b__c", title: "t" });
      expect(ambiguous).toMatchObject({ isError: true });
      expect(ambiguous.text).toBe(
        '"notes__b__c" could name 2 tools: "notes.b__c", "notes__b.c". Call again with one of them as method.',
      );
      expect((await call({ method: "notes.b__c", title: "t" })).text).toBe(
        'notes.b__c {"title":"t"}',
      );
    } finally {
      await close();
    }
  });

  it("lists the candidates for a bare name on several servers", async () => {
    const { call, close } = await client();
    try {
      const r = await call({ method: "echo", arguments: { title: "t" } });
      expect(r.isError).toBe(true);
      expect(r.text).toBe(
        '"echo" could name 2 tools: "github.echo", "notes.echo". Call again with one of them as method.',
      );
    } finally {
      await close();
    }
  });

  it("answers a hidden tool in any form exactly as a tool that does not exist", async () => {
    const hidden = await client(UPSTREAMS, "bot");
    const without = await client(
      { ...UPSTREAMS, github: upstream("github", ["list_issues", "echo"]) },
      "bot",
    );
    try {
      for (const method of [
        "github__create_issue",
        "create_issue",
        "mcp__mcpx__github__create_issue",
      ]) {
        const a = await hidden.call({ method, arguments: { title: "t" } });
        const b = await without.call({ method, arguments: { title: "t" } });
        expect(a.isError, method).toBe(true);
        expect(a, method).toEqual(b);
        expect(a.text).not.toContain("github.create_issue");
      }
    } finally {
      await hidden.close();
      await without.close();
    }
  });

  it("waits for a server still starting before reading another form of a name", async () => {
    // github's first session opens only once the call is under way.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const proxy = createProxy(memoryConfig(["github"]), {
      logger: quietLogger(),
      factoryFor: () => async () => {
        await gate;
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await UPSTREAMS.github().connect(serverSide);
        return connectTransport(clientSide, { timeoutMs: 5_000 });
      },
    });
    proxies.push(proxy);
    const started = proxy.start();
    const { client, close } = await connectClient(proxy);
    try {
      expect(proxy.context.registry.server("github")?.status).toBe("starting");
      const answer = client.callTool({
        name: "call",
        arguments: { method: "github__create_issue", title: "t" },
      });
      open();
      expect(text(await answer)).toBe('github.create_issue {"title":"t"}');
      await started;
    } finally {
      await close();
    }
  });

  it("refuses a key given both at the top level and in arguments", async () => {
    const { call, close } = await client();
    try {
      const r = await call({
        method: "github.create_issue",
        title: "a",
        arguments: { title: "b" },
      });
      expect(r).toMatchObject({ isError: true });
      expect(r.text).toBe(
        '"title" given both at the top level and in "arguments". Put the tool\'s arguments in "arguments" only.',
      );
      const merged = await call({
        method: "github.create_issue",
        body: "b",
        arguments: { title: "t" },
      });
      expect(merged.text).toBe('github.create_issue {"title":"t","body":"b"}');
      expect(merged.meta).toEqual({ "mcpx/normalized": ["arguments merged with top-level keys"] });
    } finally {
      await close();
    }
  });
});

describe("call: argument errors the next call can fix", () => {
  it("names each unknown property with the closest valid one, the signature and required keys", async () => {
    const { call, close } = await client();
    try {
      const r = await call({ method: "github.create_issue", arguments: { titel: "t", bdy: "b" } });
      expect(r.isError).toBe(true);
      expect(r.text).toBe(
        [
          "Invalid arguments for github.create_issue:",
          '- "titel" is not a parameter; did you mean "title"?',
          '- "bdy" is not a parameter; did you mean "body"?',
          '- missing required property "title"',
          "Signature: github.create_issue(title: string, body?: string)",
          "Required: title",
          'Fix the arguments and call again; describe("github.create_issue") shows the full schema.',
        ].join("\n"),
      );
    } finally {
      await close();
    }
  });
});

describe("normalizeCallInput", () => {
  it("prefers method over tool and name, which then stay arguments", () => {
    expect(normalizeCallInput({ method: "a.b", name: "n" })).toEqual({
      method: "a.b",
      arguments: { name: "n" },
      notes: ["arguments from top level"],
    });
    expect(normalizeCallInput({ tool: "a.b", name: "n" })).toEqual({
      method: "a.b",
      arguments: { name: "n" },
      notes: ["method from tool", "arguments from top level"],
    });
  });

  it("says how to write a call with no method, and a select that is not a string", () => {
    const error = (args: Record<string, unknown>) => {
      const r = normalizeCallInput(args);
      return "error" in r ? r.error : "";
    };
    expect(error({ arguments: {} })).toContain('"method" is required');
    expect(error({ method: "a.b", select: 3 })).toContain('"select" must be a JMESPath expression');
  });
});

describe("suggestName", () => {
  it("finds abbreviations, typos and other spellings of the same words", () => {
    const params = ["message", "description", "repo_name", "title", "limit"];
    expect(suggestName("msg", params)).toBe("message");
    expect(suggestName("desc", params)).toBe("description");
    expect(suggestName("repoName", params)).toBe("repo_name");
    expect(suggestName("titel", params)).toBe("title");
    expect(suggestName("repository", ["owner", "repo"])).toBe("repo");
    expect(suggestName("zzz", params)).toBeUndefined();
    expect(suggestName("x", params)).toBeUndefined();
  });
});

/** A tool's API form as a client lists it, for a view with code mode on. */
function listed(name: string, view: CatalogView) {
  const [tool] = listMetaTools(view).filter((t) => t.name === name);
  if (!tool) throw new Error(`no meta-tool ${name}`);
  return tool;
}

const apiForm = (name: string, d: { description?: string; inputSchema: unknown }) =>
  countTokens(JSON.stringify({ name, description: d.description, inputSchema: d.inputSchema }));

describe("what select and paging cost in tools/list", () => {
  it("the call and resources definitions grow by at most 40 tokens together", () => {
    // call as it was right after select and paging, before code mode grew it.
    const now =
      apiForm("call", BEFORE_CODE_MODE.call!) +
      apiForm("resources", listed("resources", viewWith({})));
    const before = Object.entries(BEFORE_DEFS).reduce((n, [name, d]) => n + apiForm(name, d), 0);
    expect(now - before).toBeGreaterThan(0);
    expect(now - before).toBeLessThanOrEqual(40);
  });
});

describe("what code mode costs in tools/list", () => {
  it("call and describe grow by at most 60 tokens together; not at all without code mode", () => {
    const grown = (view: CatalogView) =>
      ["call", "describe"].reduce((n, name) => {
        const now = listed(name, view);
        const before = BEFORE_CODE_MODE[name]!;
        return (
          n +
          apiForm(name, now) -
          apiForm(name, { description: before.description ?? now.description, ...before })
        );
      }, 0);
    expect(grown(viewWith({}))).toBeGreaterThan(0);
    expect(grown(viewWith({}))).toBeLessThanOrEqual(60);
    // Without code mode, call no longer requires method (a refusal names it): a few tokens less.
    expect(grown(viewWith({ codeMode: false }))).toBeLessThanOrEqual(0);
  });
});

/** A view over an empty catalog whose profile has `extra` settings. */
function viewWith(extra: Partial<Profile>): CatalogView {
  const profile: Profile = { name: "p", servers: ["*"], tools: { deny: [] }, readOnly: false };
  return new CatalogView({ ...profile, ...extra }, { servers: () => [], server: () => undefined });
}
