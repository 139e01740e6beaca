// Package clientdrill tests an MCP client: it plays the server, one scenario
// at a time, over stdio and Streamable HTTP, runs the user's client command
// against it, and grades what the client did by what it observed on two
// sides: the wire (what the client sent after the fault) and the
// application (the command's exit status and the JSON lines it writes on its
// standard output).
//
// A scenario is data (Catalogue): a server behaviour, the call it targets,
// and the outcomes a careful client reaches. Grading is a pure function of
// the scenario and the observation (Grade), so the same client and seed give
// the same verdicts.
//
// # How the client command is run
//
// The command is started directly (no shell) with its arguments, in a
// process group of its own, and with the conventions of the official
// conformance suite's client mode: for Streamable HTTP the server URL is
// appended as the last argument; MCP_CONFORMANCE_SCENARIO names the
// scenario, MCP_CONFORMANCE_PROTOCOL_VERSION the revision the server
// prefers, and MCP_CONFORMANCE_CONTEXT is a JSON object: the scenario's name,
// the transport, the request timeout the client is asked to use, the steps
// to perform, and the server to reach (for stdio, {"command","args"} in the
// mcpServers form, which runs `mcpdrill client-server`; for HTTP, {"url"}).
//
// # Abuse list
//
// The new surfaces are a loopback HTTP listener, a Unix socket, the client
// command line, and the lines the client writes. Each has a test.
//   - A remote host reaches the HTTP listener: it binds 127.0.0.1 only, on a
//     port the system picks, for one scenario at a time; nothing configures
//     another address.
//   - A web page in a browser reaches it (DNS rebinding, cross-origin
//     POST): a request with an Origin that is not loopback, or with a Host
//     that is not the listener's loopback address, gets 403.
//   - Another user of the machine reaches the stdio socket: it lives in a
//     directory only this user can enter (0700), created per run and
//     removed after it.
//   - A peer floods either listener: a body or line over 16 MiB is refused,
//     at most 16 connections or sessions are served per scenario, and every
//     scenario has a deadline after which everything is closed.
//   - The client command is a shell string: it is not; argv is executed as
//     given, so no word of a scenario, URL or path is ever parsed by a shell.
//   - The client leaves processes behind or never exits: it runs in its own
//     process group, which is killed at the scenario's deadline, and marked
//     descendants are reaped.
//   - The client writes huge, endless or hostile output: a stdout line is
//     read up to 32 MiB (a longer one is skipped), at most 1,000 lines are
//     kept, stderr is discarded, and no value the client writes is quoted in
//     a report: values are matched against markers the scenario planted.
package clientdrill
