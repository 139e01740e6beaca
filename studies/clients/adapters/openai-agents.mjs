// OpenAI Agents SDK (@openai/agents): the FunctionTools getAllMcpTools makes;
// the value is the string FunctionTool.invoke returns, which the runner
// hands the model. The requested timeout is the server's `timeout` option.
import { MCPServerStdio, MCPServerStreamableHttp, getAllMcpTools, RunContext } from "@openai/agents";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const opts = { name: "drill", timeout: ctx.timeoutMs, cacheToolsList: false };
  const server = isHTTP(ctx) ? new MCPServerStreamableHttp({ ...opts, url: ctx.server.url })
    : new MCPServerStdio({ ...opts, command: ctx.server.command, args: ctx.server.args });
  await server.connect();
  const rc = new RunContext();
  let tools = [];
  return {
    list: async () => { tools = await getAllMcpTools({ mcpServers: [server], runContext: rc }); },
    call: async (name, args) => tools.find((t) => t.name === name).invoke(rc, JSON.stringify(args)),
    close: () => server.close(),
  };
});
