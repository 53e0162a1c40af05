#!/usr/bin/env node
/**
 * The floor for the speed bench: a minimal MCP server holding one `echo` tool, written as the
 * SDK's README writes one (McpServer, one tool, no other feature). Over stdio by default; with
 * PORT set, over streamable HTTP on node:http at /mcp (stateful: one server and transport per
 * session, as the SDK's example), printing `listening <port>` on stdout.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

function echoServer() {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes the message.", inputSchema: { message: z.string() } },
    ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  return server;
}

if (process.env.PORT === undefined) {
  await echoServer().connect(new StdioServerTransport());
} else {
  /** Live transports by session id. */
  const sessions = new Map();
  const readJson = async (req) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  };
  const http = createServer(async (req, res) => {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? sessions.get(sid) : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await echoServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(404).end();
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(Number(process.env.PORT), "127.0.0.1", () => {
    process.stdout.write(`listening ${http.address().port}\n`);
  });
}
