// Official TypeScript SDK, the release of a year before (1.20.2, 2025-10-24): Client.callTool with the
// requested timeout; the value is the CallToolResult the application gets.
import { Client } from "sdk-2025/client/index.js";
import { StdioClientTransport } from "sdk-2025/client/stdio.js";
import { StreamableHTTPClientTransport } from "sdk-2025/client/streamableHttp.js";
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
