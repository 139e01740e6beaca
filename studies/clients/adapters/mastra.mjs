// Mastra (@mastra/mcp): the tools MCPClient.listTools makes for an agent;
// the value is what tool.execute returns to the agent. The requested
// timeout is the server's `timeout` option.
import { MCPClient } from "@mastra/mcp";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const server = isHTTP(ctx) ? { url: new URL(ctx.server.url), timeout: ctx.timeoutMs }
    : { command: ctx.server.command, args: ctx.server.args, timeout: ctx.timeoutMs };
  const mcp = new MCPClient({ id: "drill-" + process.pid, servers: { drill: server }, timeout: ctx.timeoutMs });
  let tools = {};
  return {
    list: async () => { tools = await mcp.listTools(); },
    call: async (name, args) => {
      const t = tools["drill_" + name] ?? Object.values(tools).find((x) => x.id?.endsWith(name));
      return t.execute(args, {});
    },
    close: () => mcp.disconnect(),
  };
});
