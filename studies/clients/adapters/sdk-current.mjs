// Official TypeScript SDK, current release: Client.callTool with the
// requested timeout; the value is the CallToolResult the application gets.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const client = new Client({ name: "mcpdrill-adapter", version: "1.0.0" });
  await client.connect(isHTTP(ctx) ? new StreamableHTTPClientTransport(new URL(ctx.server.url))
    : new StdioClientTransport({ command: ctx.server.command, args: ctx.server.args }));
  return {
    list: () => client.listTools(),
    call: (name, args, timeout) => client.callTool({ name, arguments: args }, undefined, { timeout }),
    close: () => client.close(),
  };
});
