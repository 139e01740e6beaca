package drift

import "github.com/mcpdrill/mcpdrill/report"

// Finding rule ids reported by drift comparisons.
const (
	ruleToolMissing         = "MCP-DRIFT-TOOL-MISSING"
	ruleToolUndeclared      = "MCP-DRIFT-TOOL-UNDECLARED"
	ruleToolUnreadable      = "MCP-DRIFT-TOOL-UNREADABLE"
	ruleSchema              = "MCP-DRIFT-SCHEMA"
	ruleSchemaCompatible    = "MCP-DRIFT-SCHEMA-COMPATIBLE"
	ruleSchemaUndetermined  = "MCP-DRIFT-SCHEMA-UNDETERMINED"
	ruleAnnotation          = "MCP-DRIFT-ANNOTATION"
	ruleProtocolUnsupported = "MCP-DRIFT-PROTOCOL-UNSUPPORTED"
	ruleLegacyServer        = "MCP-DRIFT-LEGACY-SERVER"
	rulePaginationCapped    = "MCP-DRIFT-PAGINATION-CAPPED"
	ruleManifestTruncated   = "MCP-DRIFT-MANIFEST-TRUNCATED"
	ruleCanaryShape         = "MCP-DRIFT-CANARY-SHAPE"
	ruleCanaryEmpty         = "MCP-DRIFT-CANARY-EMPTY"
	ruleCanaryError         = "MCP-DRIFT-CANARY-ERROR"
	ruleCanarySize          = "MCP-DRIFT-CANARY-SIZE"
	ruleCanaryRecovered     = "MCP-DRIFT-CANARY-RECOVERED"
	ruleCanaryMissing       = "MCP-DRIFT-CANARY-MISSING"
)

var driftRules = report.Catalogue{
	{ID: ruleToolMissing, Severity: sevE, Title: "Declared tool not served",
		Detail: "The manifest or baseline declares the tool and the server does not list it. An agent generated from the manifest calls it and fails. Suppressed when the live listing hit the --max-list-pages cap (MCP-DRIFT-PAGINATION-CAPPED): a tool past the cap is not a removed tool."},
	{ID: ruleToolUndeclared, Severity: sevW, Title: "Served tool not declared",
		Detail: "The server lists a tool the manifest does not declare (a shadow tool): agents discover it and may call a capability nobody agreed to. Suppressed when the manifest itself is one page of a longer list (MCP-DRIFT-MANIFEST-TRUNCATED)."},
	{ID: ruleToolUnreadable, Severity: sevE, Title: "Served tool entry unreadable",
		Detail: "The server lists an entry that could not be read as a tool: not an object, no usable name, or beyond the decoder's limits (a schema nested deeper than 1,000 levels, a number too large to hold exactly). The entry is not compared, and a declared tool of the same name is reported here rather than as missing: the server does serve it, and what it serves could not be established. The evidence says what failed."},
	{ID: ruleSchema, Severity: sevE, Title: "Breaking schema change",
		Detail: "The served tool differs from the declared one in a way the change catalogue grades breaking (error). For a change inside a schema, breaking means a witness was found: a value a client sends by the declared input schema that the served one rejects, or a value the served output schema admits that the declared one rejects; the evidence shows it. The finding carries the change id (CHG-*) and names the BRK-* rule that graded it; `mcpdrill rules ID` explains both."},
	{ID: ruleSchemaCompatible, Severity: sevW, Title: "Compatible schema change",
		Detail: "The same comparison, for a change graded warn or info. The severity is copied from the grading rule, not re-graded."},
	{ID: ruleSchemaUndetermined, Severity: sevW, Title: "Schema change not decided",
		Detail: "A change inside a schema for which the comparison could neither prove that nothing a client relies on breaks nor find a value that shows it does (BRK-IN-UNDETERMINED, BRK-OUT-UNDETERMINED): a regular expression changed, a format added (an annotation unless the validator asserts it), a reference that recurses. Not breaking, not cleared: review it."},
	{ID: ruleAnnotation, Severity: sevW, Title: "Annotation hint differs",
		Detail: "A tool annotation differs between declared and served (tri-state: true, false, undeclared). Severity comes from the grading rule: warn for readOnlyHint, destructiveHint and idempotentHint, info for openWorldHint and for declaring a hint at its default. Annotations are untrusted, so never breaking."},
	{ID: ruleProtocolUnsupported, Severity: sevE, Title: "Protocol revision refused",
		Detail: "The server refused the protocol revision mcpdrill asked for. No tool list was obtained, so no tool comparison is made: every declared tool would otherwise read as missing."},
	{ID: ruleLegacyServer, Severity: sevI, Title: "Legacy server (no server/discover)",
		Detail: "The server speaks the initialize-era protocol and does not answer server/discover. Tools were compared normally (tools/list has the same shape in both eras); no protocol revision beyond the negotiated one is claimed."},
	{ID: rulePaginationCapped, Severity: sevW, Title: "tools/list pagination capped",
		Detail: "The server still returned a nextCursor after --max-list-pages pages (default 50), or its cursors looped. The live list is incomplete, so MCP-DRIFT-TOOL-MISSING findings are suppressed."},
	{ID: ruleManifestTruncated, Severity: sevW, Title: "Manifest is one page",
		Detail: "The saved manifest still carries a nextCursor: it is one page of a longer list. MCP-DRIFT-TOOL-UNDECLARED findings are suppressed."},
	{ID: ruleCanaryShape, Severity: sevE, Title: "Canary response shape changed",
		Detail: "The structure hash of a canary's result (keys, JSON types and nesting, with values ignored) differs from the baseline, or the result kind (structured, text JSON, text, binary) changed. Clients parsing the old shape break."},
	{ID: ruleCanaryEmpty, Severity: sevE, Title: "Canary result became empty",
		Detail: "A canary that returned data in the baseline now returns an empty result (no content, empty text, empty array or object): the silent \"returns nothing\" regression."},
	{ID: ruleCanaryError, Severity: sevE, Title: "Canary error appeared or changed",
		Detail: "A canary that succeeded now fails (JSON-RPC error or isError result), or the normalised error signature (category and pattern hash of the error text with numbers, ids, paths and quoted strings masked) differs from the baseline's."},
	{ID: ruleCanarySize, Severity: sevW, Title: "Canary size bucket changed",
		Detail: "The response moved between size buckets (small < 1 KiB, medium < 64 KiB, large) with its shape unchanged. Usually data growth; reported, not failing by default."},
	{ID: ruleCanaryRecovered, Severity: sevI, Title: "Canary error cleared",
		Detail: "A canary that failed in the baseline now succeeds."},
	{ID: ruleCanaryMissing, Severity: sevW, Title: "Canary not compared",
		Detail: "A canary present in one capture is absent from the other, so its behaviour was not compared."},
}
