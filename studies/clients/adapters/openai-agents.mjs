// OpenAI Agents SDK (@openai/agents): the FunctionTools getAllMcpTools makes;
// the value is the string FunctionTool.invoke returns, which the runner
// hands the model. The requested timeout is the server's `timeout` option.
// By default the SDK turns a failed call into a fixed text for the model
// (defaultToolErrorFunction in @openai/agents-core's tool.js); that text is
// reported as an error outcome, since it is how the model learns of one.
import { MCPServerStdio, MCPServerStreamableHttp, getAllMcpTools, RunContext } from "@openai/agents";
import { drill, isHTTP } from "./harness.mjs";

const DEFAULT_ERROR_TEXT = "An error occurred while running the tool. Please try again.";

await drill(async (ctx) => {
  const opts = { name: "drill", timeout: ctx.timeoutMs, cacheToolsList: false };
  const server = isHTTP(ctx) ? new MCPServerStreamableHttp({ ...opts, url: ctx.server.url })
    : new MCPServerStdio({ ...opts, command: ctx.server.command, args: ctx.server.args });
  await server.connect();
  const rc = new RunContext();
  let tools = [];
  return {
    list: async () => { tools = await getAllMcpTools({ mcpServers: [server], runContext: rc }); },
    call: async (name, args) => {
      const out = await tools.find((t) => t.name === name).invoke(rc, JSON.stringify(args));
      if (out === DEFAULT_ERROR_TEXT) throw new Error(out);
      return out;
    },
    close: () => server.close(),
  };
});
