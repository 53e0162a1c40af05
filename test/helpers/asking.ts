/**
 * Downstream clients that can be asked things mid-call (roots, elicitation, sampling): the real
 * SDK v2 client of either era, declaring the capabilities a test chooses, answering with the
 * test's handlers and recording every request it was sent.
 */
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { newClient, type Era } from "./clients.js";

export type Ability = "roots" | "elicitation" | "url" | "sampling";

/** One request the client was sent (or, for a 2026-07-28 client, asked within input_required). */
export interface Asked {
  method: string;
  params: Record<string, unknown>;
}

export interface AskingOptions {
  /** What the client declares (default: everything). */
  abilities?: readonly Ability[];
  /** The roots it lists (file:// URIs). */
  roots?: () => { uri: string; name?: string }[];
  /** Its answer to an elicitation (default: accept with `{ answer: "<name>" }`). */
  elicit?: (
    params: Record<string, unknown>,
  ) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Its answer to a sampling request (default: a text "sampled by <name>"). */
  sample?: (
    params: Record<string, unknown>,
  ) => Promise<Record<string, unknown>> | Record<string, unknown>;
}

export const ALL_ABILITIES: readonly Ability[] = ["roots", "elicitation", "url", "sampling"];

/** An unconnected SDK client of `era` named `name` that answers what it declares. */
export function askingClient(
  era: Era,
  name: string,
  options: AskingOptions = {},
): { client: Client; asked: Asked[] } {
  const abilities = new Set(options.abilities ?? ALL_ABILITIES);
  const client = newClient(era, name);
  const elicitation = {
    ...(abilities.has("elicitation") && { form: {} }),
    ...(abilities.has("url") && { url: {} }),
  };
  client.registerCapabilities({
    ...(abilities.has("roots") && { roots: { listChanged: true } }),
    ...(Object.keys(elicitation).length > 0 && { elicitation }),
    ...(abilities.has("sampling") && { sampling: {} }),
  });
  const asked: Asked[] = [];
  const record = (method: string, params: unknown) =>
    asked.push({ method, params: (params ?? {}) as Record<string, unknown> });
  if (abilities.has("roots")) {
    client.setRequestHandler("roots/list", (request) => {
      record("roots/list", request.params);
      return { roots: options.roots?.() ?? [] };
    });
  }
  if (Object.keys(elicitation).length > 0) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as Record<string, unknown>;
      record("elicitation/create", params);
      if (options.elicit) return (await options.elicit(params)) as never;
      return params.mode === "url"
        ? { action: "accept" }
        : { action: "accept", content: { answer: name } };
    });
  }
  if (abilities.has("sampling")) {
    client.setRequestHandler("sampling/createMessage", async (request) => {
      const params = request.params as Record<string, unknown>;
      record("sampling/createMessage", params);
      if (options.sample) return (await options.sample(params)) as never;
      return {
        role: "assistant",
        model: "test-model",
        content: { type: "text", text: `sampled by ${name}` },
      };
    });
  }
  return { client, asked };
}

/** Connect `client` to mcpx's HTTP endpoint at `url`. */
export async function connectHttp(
  client: Client,
  url: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

/** Run `server.tool` through the `call` meta-tool. */
export function callTool(
  client: Client,
  method: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return client.callTool(
    { name: "call", arguments: { method, arguments: args } },
    { timeout: 60_000 },
  );
}
