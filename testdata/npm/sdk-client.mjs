// A client on the official TypeScript SDK (pinned in package.json), for
// tests that need to know what that SDK accepts. It starts the stdio
// server given as its arguments, lists the tools, calls one twice and
// prints one JSON object on stdout:
//
//   list      the tools/list result as the SDK parsed it (listError: why not)
//   call      a tools/call result parsed by the protocol schema alone
//             (CallToolResultSchema; callError: why not)
//   checked   true when Client.callTool, which also validates
//             structuredContent against the tool's outputSchema, accepted
//             the result (checkedError: why not)
//
// The tool and its arguments come from MCPDRILL_TOOL and MCPDRILL_ARGS (JSON).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const name = process.env.MCPDRILL_TOOL;
const toolArgs = JSON.parse(process.env.MCPDRILL_ARGS || "{}");

const client = new Client({ name: "mcpdrill-sdk-client", version: "1" });
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const out = {};
const note = (key, e) => { out[key] = String(e && e.message ? e.message : e); };
try { out.list = await client.listTools(); } catch (e) { note("listError", e); }
try {
  out.call = await client.request({ method: "tools/call", params: { name, arguments: toolArgs } }, CallToolResultSchema);
} catch (e) { note("callError", e); }
try { await client.callTool({ name, arguments: toolArgs }); out.checked = true; } catch (e) { note("checkedError", e); }
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
