// A minimal MCP client on the official TypeScript SDK, written to be drilled:
//   mcpdrill client -- node examples/client/sdk-client.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT); // steps, timeoutMs, server
const transport = ctx.server.url
  ? new StreamableHTTPClientTransport(new URL(ctx.server.url))
  : new StdioClientTransport({ command: ctx.server.command, args: ctx.server.args });
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(transport);
for (const step of ctx.steps) {
  if (step.op === "tools/list") { await client.listTools(); continue; }
  try {
    const value = await client.callTool({ name: step.name, arguments: step.arguments }, undefined, { timeout: ctx.timeoutMs });
    console.log(JSON.stringify({ call: step.name, outcome: "ok", value }));
  } catch (e) {
    const outcome = /timed out/i.test(e.message) ? "timeout" : "error";
    console.log(JSON.stringify({ call: step.name, outcome, error: e.message }));
  }
}
await client.close();
