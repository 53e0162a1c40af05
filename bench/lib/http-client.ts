/** A plain SDK 1.x client (a 2025-era host) of mcpx or an upstream over streamable HTTP. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface HttpClient {
  client: Client;
  /** DELETE the session so the server frees it, as a well-behaved client does, then close. */
  close(): Promise<void>;
}

export async function connectHttp(url: string, name: string): Promise<HttpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await transport.terminateSession().catch(() => {
        /* the server may already be gone; close() below is what matters */
      });
      await client.close();
    },
  };
}
