// LangChain (@langchain/mcp-adapters): the tools MultiServerMCPClient makes;
// the value is what tool.invoke returns, the content of the ToolMessage the
// model gets. The requested timeout is defaultToolTimeout.
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const server = isHTTP(ctx) ? { transport: "http", url: ctx.server.url }
    : { transport: "stdio", command: ctx.server.command, args: ctx.server.args };
  const client = new MultiServerMCPClient({ mcpServers: { drill: server }, defaultToolTimeout: ctx.timeoutMs, useStandardContentBlocks: true });
  let tools = [];
  return {
    list: async () => { tools = await client.getTools(); },
    call: (name, args) => tools.find((t) => t.name === name || t.name.endsWith("__" + name)).invoke(args),
    close: () => client.close(),
  };
});
