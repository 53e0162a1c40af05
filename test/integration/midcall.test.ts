/**
 * Requests upstreams send their client mid-call (elicitation, sampling, roots), relayed by the
 * built `mcpx` to the client whose call it is: 2025-era and 2026-07-28 clients, over stdio and
 * HTTP, from a legacy upstream (server-everything, real server→client requests) and a modern one
 * (the v2 fixture, input_required). A client that did not declare a capability: the upstream is
 * refused at once, and the call says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  askingClient,
  callTool,
  connectHttp,
  type Ability,
  type Asked,
} from "../helpers/asking.js";
import {
  ERAS,
  fixtureServer,
  npmServer,
  startHttp,
  startStdio,
  text,
  untilStarted,
  writeConfig,
  type Era,
  type Running,
  type RunningHttp,
} from "../helpers/proxy.js";

const file = writeConfig({
  mcpServers: {
    // Over HTTP a caller's roots are held within these (the clients' are under /tmp).
    everything: { ...npmServer("@modelcontextprotocol/server-everything"), roots: ["file:///tmp"] },
    modern: { ...fixtureServer("modern.mjs"), roots: ["file:///tmp"] },
  },
  // The upstreams' JSON answers as they wrote them.
  compression: { results: "off" },
});

/** What server-everything's elicitation form asks for, filled in by `name`. */
function everythingForm(name: string) {
  return {
    action: "accept",
    content: { name, check: true, email: "a@example.com", integer: 7 },
  };
}

interface Caller {
  name: string;
  client: Running["client"];
  asked: Asked[];
  close: () => Promise<void>;
}

const TRANSPORTS = ["stdio", "http"] as const;
let http: RunningHttp;

beforeAll(async () => {
  http = await startHttp(file);
});
afterAll(async () => {
  await http?.close();
});

/** A client of `era` declaring `abilities`, connected over `transport` (stdio: its own mcpx). */
async function caller(
  transport: (typeof TRANSPORTS)[number],
  era: Era,
  name: string,
  abilities?: readonly Ability[],
): Promise<Caller> {
  const { client, asked } = askingClient(era, name, {
    ...(abilities && { abilities }),
    roots: () => [{ uri: `file:///tmp/roots-of-${name}`, name }],
    elicit: (params) =>
      String(params.message).startsWith("Please provide inputs")
        ? everythingForm(name)
        : params.mode === "url"
          ? { action: "accept" }
          : { action: "accept", content: { answer: name } },
  });
  if (transport === "stdio") {
    const running = await startStdio(file, [], { era, client });
    return { name, client, asked, close: () => running.close() };
  }
  await connectHttp(client, http.url);
  await untilStarted(client);
  return { name, client, asked, close: () => client.close() };
}

describe.each(TRANSPORTS)("over %s", (transport) => {
  describe.each(ERAS)("a %s client", (era) => {
    let asking: Caller;
    let bare: Caller;

    beforeAll(async () => {
      [asking, bare] = await Promise.all([
        caller(transport, era, `asking-${transport}-${era}`),
        caller(transport, era, `bare-${transport}-${era}`, []),
      ]);
    });
    afterAll(async () => {
      await Promise.all([asking?.close(), bare?.close()]);
    });

    it("answers server-everything's elicitation, and the answer reaches the tool", async () => {
      const result = await callTool(asking.client, "everything.trigger-elicitation-request");
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toContain(`Name: ${asking.name}`);
      const forms = asking.asked.filter((a) => a.method === "elicitation/create");
      expect(forms.at(-1)?.params.message).toBe("Please provide inputs for the following fields:");
    });

    it("answers server-everything's sampling request", async () => {
      const result = await callTool(asking.client, "everything.trigger-sampling-request", {
        prompt: "a haiku about proxies",
      });
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toContain(`sampled by ${asking.name}`);
      const sampled = asking.asked.filter((a) => a.method === "sampling/createMessage");
      expect(JSON.stringify(sampled.at(-1)?.params.messages)).toContain("a haiku about proxies");
    });

    it("gives server-everything the calling client's roots", async () => {
      const result = await callTool(asking.client, "everything.get-roots-list");
      expect(text(result)).toContain(`file:///tmp/roots-of-${asking.name}`);
    });

    it.each([
      ["elicit", (name: string) => `"content":{"answer":"${name}"}`],
      ["url", () => `"action":"accept"`],
      ["sample", (name: string) => `sampled by ${name}`],
      ["roots", (name: string) => `file:///tmp/roots-of-${name}`],
    ] as const)("answers a modern upstream's %s input request", async (kind, expected) => {
      const result = await callTool(asking.client, "modern.ask", { kind });
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toContain(expected(asking.name));
    });

    it.each(["elicitation", "sampling"] as const)(
      "refuses server-everything's %s at once for a client that did not declare it",
      async (kind) => {
        const tool =
          kind === "elicitation" ? "trigger-elicitation-request" : "trigger-sampling-request";
        const result = await callTool(bare.client, `everything.${tool}`, { prompt: "x" });
        expect(result.isError).toBe(true);
        // The relay's own refusal (-32601), not a timeout: the upstream was answered at once.
        expect(text(result)).toContain(
          `The client of this call did not declare the ${kind} capability`,
        );
        expect(bare.asked).toEqual([]);
      },
    );

    it("tells a modern upstream what the client declared, so it does not ask", async () => {
      const result = await callTool(bare.client, "modern.ask", { kind: "elicit" });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/Server "modern" failed to run ask: .*capabilit/);
      expect(bare.asked).toEqual([]);
    });

    it("gives server-everything no roots of a client that has none", async () => {
      const result = await callTool(bare.client, "everything.get-roots-list");
      expect(text(result)).not.toContain("file:///tmp/roots-of-");
    });
  });
});
