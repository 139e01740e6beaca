package testbed

// behaviour is the data that makes a profile what it is. Every field is a
// small, independent switch consulted at one point of the server; a profile
// is a table row, not a code path.
type behaviour struct {
	version  string // default serverInfo.version
	pageSize int    // tools/list page size
	sse      bool   // Streamable HTTP replies as text/event-stream
	tools    func(o Options, drifted bool) []tool
	errs     errorStyle
	content  *contentSet // resources, prompts, logging, completions; nil: none

	hang       bool   // read requests, never answer
	flood      bool   // endless noise on stdout, slow answers
	noisy      bool   // log lines on stdout between frames
	crashOn    string // method whose reply is cut in half, then the server dies
	hugeList   bool   // tools/list is one HugeBytes line
	cursorLoop bool   // nextCursor cycles forever
	drift      bool   // the description changes after DriftAfter lists

	linger    bool   // stdio: keeps running after stdin closes, until its context ends
	preamble  string // stdio: a line written to stdout before the first frame
	slowStart bool   // stdio: reads nothing until Options.StartDelay has passed
	// mcpErrors words error messages as the TypeScript SDK's McpError
	// does ("MCP error -32602: …"), and answers an unknown tool as its
	// McpServer does: an isError result carrying that message.
	mcpErrors bool
	// ignoreCursor serves tools/list's first page whatever cursor the
	// request names, as the TypeScript SDK's McpServer does.
	ignoreCursor bool
}

var (
	allRevs    = AllRevisions
	modernOnly = []string{Rev20260728}
	legacyOnly = []string{Rev20241105}
	// allLegacy are the revisions of the TypeScript SDK's 1.x line.
	allLegacy = []string{Rev20251125, Rev20250618, Rev20250326, Rev20241105}
)

// profiles is the catalogue. Summaries say what a scan should find.
var profiles = []Profile{
	{Name: "good", Revisions: allRevs,
		Summary: "conformant dual-era server: tight output schemas, correct error codes; a scan finds no error or warning (its info notes name free-text fields no schema can pin down)",
		b:       behaviour{version: "1.0.0", pageSize: 3, tools: goodTools}},
	{Name: "vacuous", Revisions: allRevs,
		Summary: "output schemas that accept anything well-typed ({type:object}, free strings, a wrapper); one $ref schema is enforceable",
		b:       behaviour{version: "1.0.0", pageSize: 10, sse: true, tools: vacuousTools}},
	{Name: "partial", Revisions: allRevs,
		Summary: "output schemas that reject the corruption of some shapes a server sends but not all (format uri on two nullable fields, URIs checked only as array items); one schema is enforceable",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: partialTools}},
	{Name: "sloppy-errors", Revisions: allRevs,
		Summary: "wrong error handling: unknown tool and method succeed, invalid args as -32603, malformed JSON ignored, wrong codes",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, errs: sloppyErrors}},
	{Name: "drifting", Revisions: allRevs,
		Summary: "tool set differs between --version 1 and 2 (rename, enum, required, description, removal, addition); rug-pulls a description after N lists",
		b:       behaviour{version: "1", pageSize: 10, sse: true, tools: driftingTools, drift: true}},
	{Name: "content", Revisions: allRevs,
		Summary: "declares and serves resources (paged one per page, a text and a blob, a template), prompts (one with a required, completable argument), logging and completions, conformantly",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, content: conformantContent}},
	{Name: "sloppy-content", Revisions: allRevs,
		Summary: "resources and prompts served wrongly: a missing URI reads as empty contents, a text resource carries a blob too, prompt messages have role system, logging declared but answering -32601, completions served but not declared, any log level accepted",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, content: sloppyContent}},
	{Name: "typical", Revisions: allLegacy,
		Summary: "answers as a server built on the TypeScript SDK's McpServer: McpError messages, an unknown tool as an isError result, tools/list blind to its cursor; resources without templates (-32601), one listed resource needing a backend the scan lacks, an empty prompts/list without prompts declared; a scan finds no error or warning and names the SDK",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, content: typicalContent, mcpErrors: true, ignoreCursor: true}},
	{Name: "linger", Revisions: allRevs, Hostile: true,
		Summary: "conformant like good, but over stdio keeps running after its stdin closes until SIGTERM: a client waits out its close grace",
		b:       behaviour{version: "1.0.0", pageSize: 3, tools: goodTools, linger: true}},
	{Name: "json-preamble", Revisions: allRevs, Hostile: true,
		Summary: `conformant like good, but over stdio writes a JSON line that is no JSON-RPC message ({"preamble":true}) before its first frame, as some logging libraries do: stdout purity fails`,
		b:       behaviour{version: "1.0.0", pageSize: 3, tools: goodTools, preamble: `{"preamble":true}`}},
	{Name: "slow-start", Revisions: allRevs,
		Summary: "conformant dual-era like good, but over stdio reads nothing for its first 3 s (start-up delay): its server/discover answer comes after a client's 2 s probe timeout and before its initialize reply",
		b:       behaviour{version: "1.0.0", pageSize: 3, tools: goodTools, slowStart: true}},
	{Name: "modern", Revisions: modernOnly,
		Summary: "2026-07-28 only: server/discover and per-request _meta; initialize is refused naming the supported versions",
		b:       behaviour{version: "1.0.0", pageSize: 3, tools: goodTools}},
	{Name: "legacy", Revisions: legacyOnly,
		Summary: "2024-11-05 only: initialize handshake, no server/discover, no output schemas; on HTTP only the old HTTP+SSE transport",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools}},
	{Name: "hang", Revisions: allRevs, Hostile: true,
		Summary: "reads every request and never answers: the client must time out",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, hang: true}},
	{Name: "flood", Revisions: allRevs, Hostile: true,
		Summary: "writes endless noise and huge notifications to stdout while answering slowly: the client must bound what it reads",
		b:       behaviour{version: "1.0.0", pageSize: 10, sse: true, tools: goodTools, flood: true}},
	{Name: "hugeline", Revisions: allRevs, Hostile: true,
		Summary: "answers tools/list with a single ~100 MiB line: the client must cap frame size",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, hugeList: true}},
	{Name: "crash", Revisions: allRevs, Hostile: true,
		Summary: "writes half of its tools/list reply and exits 1: the client must report a broken frame and a dead server",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: goodTools, crashOn: "tools/list"}},
	{Name: "cursor-loop", Revisions: allRevs, Hostile: true,
		Summary: "tools/list nextCursor cycles forever: the client must cap pagination",
		b:       behaviour{version: "1.0.0", pageSize: 2, tools: goodTools, cursorLoop: true}},
	{Name: "ref-cycle", Revisions: allRevs, Hostile: true,
		Summary: "an outputSchema whose $ref chain is a cycle (beside a legitimately recursive one): the validator must not loop",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: refCycleTools}},
	{Name: "deep-schema", Revisions: allRevs, Hostile: true,
		Summary: "an outputSchema nested 10,000 levels deep: the client must bound schema depth",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: deepSchemaTools}},
	{Name: "noisy-stdout", Revisions: allRevs, Hostile: true,
		Summary: "prints log lines on stdout between frames: the client must skip non-JSON lines and flag the violation",
		b:       behaviour{version: "1.0.0", pageSize: 10, sse: true, tools: goodTools, noisy: true}},
	{Name: "synth-bomb", Revisions: allRevs, Hostile: true,
		Summary: "a tool whose input and output schemas require 300 strings of minLength 3000 under a pattern that is slow to match: synthesis must stay within its budget and the deadline",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: synthBombTools}},
	{Name: "bad-schema", Revisions: allRevs, Hostile: true,
		Summary: "an outputSchema that does not compile, a non-object inputSchema, duplicate and invalid tool names",
		b:       behaviour{version: "1.0.0", pageSize: 10, tools: badSchemaTools}},
}
