// mcp-remote, the stdio-to-HTTP proxy that desktop clients put in front of
// remote servers: the official TypeScript SDK client (current release) over
// stdio to mcp-remote, which reaches the drill's URL (HTTP only). The value
// is the CallToolResult that comes out of the proxy. Its OAuth state goes to
// a private directory (MCP_REMOTE_CONFIG_DIR) that is removed afterwards.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { drill } from "./harness.mjs";

const proxy = fileURLToPath(new URL("../node_modules/mcp-remote/dist/proxy.js", import.meta.url));
await drill(async (ctx) => {
  if (!ctx.server.url) throw new Error("mcp-remote proxies HTTP servers only");
  const dir = mkdtempSync(join(tmpdir(), "mcp-remote-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const client = new Client({ name: "mcpdrill-adapter", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [proxy, ctx.server.url, "--transport", "http-only"],
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: dir } }));
  return {
    list: () => client.listTools(),
    call: (name, args, timeout) => client.callTool({ name, arguments: args }, undefined, { timeout }),
    close: () => client.close(),
  };
});
