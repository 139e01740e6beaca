// mcp-use: MCPClient from a mcpServers dictionary and its session's
// callTool; the value is the CallToolResult. The requested timeout is the
// call's `timeout` option.
import { MCPClient } from "mcp-use";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const server = isHTTP(ctx) ? { url: ctx.server.url } : { command: ctx.server.command, args: ctx.server.args };
  const client = MCPClient.fromDict({ mcpServers: { drill: server } });
  const session = await client.createSession("drill");
  return {
    list: () => session.connector.listTools(),
    call: (name, args, timeout) => session.connector.callTool(name, args, { timeout }),
    close: () => client.closeAllSessions(),
  };
});
