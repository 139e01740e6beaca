// The part every JavaScript adapter shares: it reads the drill's context
// (MCP_CONFORMANCE_CONTEXT), performs its steps through the adapter's
// session, and writes one report line per tools/call step (METHODOLOGY, "The
// client drill"). An adapter supplies connect(ctx) → {list(), call(name,
// args, timeoutMs) → value, close()}, where value is what the application
// (for an agent framework: the model) would be handed.
export async function drill(connect) {
  const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT);
  const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
  let session;
  try {
    session = await connect(ctx);
  } catch (e) {
    process.stderr.write(`connect: ${e?.stack ?? e}\n`);
    process.exit(2);
  }
  for (const step of ctx.steps) {
    if (step.op === "tools/list") {
      await session.list();
      continue;
    }
    try {
      const value = await session.call(step.name, step.arguments, ctx.timeoutMs);
      say({ call: step.name, outcome: "ok", value: value ?? null });
    } catch (e) {
      const msg = String(e?.message ?? e);
      say({ call: step.name, outcome: /timed? ?out|timeout/i.test(msg) ? "timeout" : "error", error: msg });
    }
  }
  await Promise.race([session.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
  // Exit once stdout has drained: a large report line to a pipe is written
  // asynchronously, and process.exit would cut it.
  process.stdout.write("", () => process.exit(0));
}

// server returns the drill's server as stdio {command, args} or {url}.
export const isHTTP = (ctx) => typeof ctx.server.url === "string";
