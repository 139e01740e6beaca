// Vercel AI SDK (@ai-sdk/mcp): the tools its MCP client makes for an agent;
// the value is what toModelOutput hands the model for the tool's output.
// The requested timeout goes in as the tool call's abortSignal.
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { drill, isHTTP } from "./harness.mjs";

await drill(async (ctx) => {
  const client = await createMCPClient({
    transport: isHTTP(ctx) ? { type: "http", url: ctx.server.url }
      : new Experimental_StdioMCPTransport({ command: ctx.server.command, args: ctx.server.args }),
  });
  let tools = {};
  return {
    list: async () => { tools = await client.tools(); },
    call: async (name, args, timeout) => {
      const t = tools[name];
      const output = await t.execute(args, { toolCallId: "call-1", messages: [], abortSignal: AbortSignal.timeout(timeout) });
      return t.toModelOutput ? await t.toModelOutput({ toolCallId: "call-1", input: args, output }) : output;
    },
    close: () => client.close(),
  };
});
