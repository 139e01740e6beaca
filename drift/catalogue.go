package drift

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/report"
)

// Direction says which side of a tool a change is on. The same schema change
// grades oppositely on the two sides: a client sends what an input schema
// describes and receives what an output schema describes.
type Direction string

// Directions.
const (
	// DirectionTool is a change to the tool itself (presence, description,
	// title, annotations, whether it has an output schema).
	DirectionTool Direction = "tool"
	// DirectionInput is a change inside inputSchema (what a client sends).
	DirectionInput Direction = "input"
	// DirectionOutput is a change inside outputSchema (what a client receives).
	DirectionOutput Direction = "output"
)

// Kind is a stable change kind id, "CHG-…".
type Kind string

// Change kinds. Each is graded by one BRK-* rule per direction (and, for a
// few, per whether the property concerned is required).
const (
	KindToolRemoved          Kind = "CHG-TOOL-REMOVED"
	KindToolAdded            Kind = "CHG-TOOL-ADDED"
	KindDescriptionChanged   Kind = "CHG-DESCRIPTION-CHANGED"
	KindTitleChanged         Kind = "CHG-TITLE-CHANGED"
	KindAnnotationChanged    Kind = "CHG-ANNOTATION-CHANGED"
	KindOutputSchemaAdded    Kind = "CHG-OUTPUT-SCHEMA-ADDED"
	KindOutputSchemaRemoved  Kind = "CHG-OUTPUT-SCHEMA-REMOVED"
	KindPropertyRemoved      Kind = "CHG-PROPERTY-REMOVED"
	KindPropertyAdded        Kind = "CHG-PROPERTY-ADDED"
	KindPropertyRenamed      Kind = "CHG-PROPERTY-RENAMED"
	KindRequiredAdded        Kind = "CHG-REQUIRED-ADDED"
	KindRequiredRemoved      Kind = "CHG-REQUIRED-REMOVED"
	KindTypeWidened          Kind = "CHG-TYPE-WIDENED"
	KindTypeNarrowed         Kind = "CHG-TYPE-NARROWED"
	KindTypeChanged          Kind = "CHG-TYPE-CHANGED"
	KindEnumValueRemoved     Kind = "CHG-ENUM-VALUE-REMOVED"
	KindEnumValueAdded       Kind = "CHG-ENUM-VALUE-ADDED"
	KindConstChanged         Kind = "CHG-CONST-CHANGED"
	KindConstraintTightened  Kind = "CHG-CONSTRAINT-TIGHTENED"
	KindConstraintLoosened   Kind = "CHG-CONSTRAINT-LOOSENED"
	KindConstraintChanged    Kind = "CHG-CONSTRAINT-CHANGED"
	KindPatternChanged       Kind = "CHG-PATTERN-CHANGED"
	KindFormatChanged        Kind = "CHG-FORMAT-CHANGED"
	KindAdditionalTightened  Kind = "CHG-ADDITIONAL-PROPERTIES-TIGHTENED"
	KindAdditionalLoosened   Kind = "CHG-ADDITIONAL-PROPERTIES-LOOSENED"
	KindDefaultChanged       Kind = "CHG-DEFAULT-CHANGED"
	KindVariantRemoved       Kind = "CHG-VARIANT-REMOVED"
	KindVariantAdded         Kind = "CHG-VARIANT-ADDED"
	KindKeywordChanged       Kind = "CHG-KEYWORD-CHANGED"
	KindSchemaTooDeep        Kind = "CHG-SCHEMA-TOO-DEEP"
	KindSchemaDescriptionChg Kind = "CHG-SCHEMA-DESCRIPTION-CHANGED"

	// kindAny stands for any change kind inside a schema in the rows that
	// grade by verdict rather than by kind (see grade.go).
	kindAny Kind = "CHG-*"
)

// Conditions refine a grade for kinds that depend on required-ness or on
// which annotation hint changed.
const (
	condNone        = ""
	condRequired    = "required"
	condOptional    = "optional"
	condHint        = "hint"
	condOpenWorld   = "openWorld"
	condDeclaration = "declaration"
	condOther       = "other"
	// condUnlisted: a tool missing from a default listing that another
	// configuration lists (or may list).
	condUnlisted = "unlisted"
	// Verdict conditions of the kindAny rows.
	condCovered      = "covered"
	condUndeclared   = "undeclared"
	condWitnessed    = "witnessed"
	condUndetermined = "undetermined"
)

// grade is one row of the grading table: a change kind, on one side, under
// one condition, is graded by a BRK rule with a severity.
type grade struct {
	kind  Kind
	dir   Direction
	cond  string
	rule  string
	sev   report.Severity
	title string
	why   string
}

var (
	sevE = report.SeverityError
	sevW = report.SeverityWarn
	sevI = report.SeverityInfo
)

// grades is the grading table. Severity error means breaking.
var grades = []grade{
	{KindToolRemoved, DirectionTool, condNone, "BRK-TOOL-REMOVED", sevE, "Tool removed",
		"A client built against the old list calls the tool and fails."},
	{KindToolRemoved, DirectionTool, condUnlisted, "BRK-TOOL-UNLISTED", sevE, "Tool no longer listed by default",
		"The tool is absent from the new release's default listing, but the new release lists it under a configuration known for the package (a toolset switch), or its listing under one was not established: clients on the default configuration lose it, those that set the switch may keep it. Not called removed."},
	{KindToolAdded, DirectionTool, condNone, "BRK-TOOL-ADDED", sevI, "Tool added",
		"Nothing a client did before stops working; agents may now discover and call it."},
	{KindDescriptionChanged, DirectionTool, condNone, "BRK-TOOL-DESCRIPTION-CHANGED", sevW, "Tool description changed",
		"The model reads the description to decide when and how to call the tool: a changed description is the carrier of tool poisoning (a \"rug pull\"), so it is flagged even though no schema changed. Review the new text."},
	{KindTitleChanged, DirectionTool, condNone, "BRK-TOOL-TITLE-CHANGED", sevI, "Tool title changed",
		"Display text for people; recorded, never breaking."},
	{KindAnnotationChanged, DirectionTool, condHint, "BRK-ANNOTATION-HINT-CHANGED", sevW, "Behaviour hint changed",
		"readOnlyHint, destructiveHint or idempotentHint now has a different effective value (the specification default applies when a hint is undeclared). A client that planned around the old hint, for example auto-approving read-only tools, plans wrong. Annotations are untrusted, so this is never graded breaking."},
	{KindAnnotationChanged, DirectionTool, condOpenWorld, "BRK-ANNOTATION-OPENWORLD-CHANGED", sevI, "openWorldHint changed",
		"Whether the tool reaches outside systems changed its effective value; informative."},
	{KindAnnotationChanged, DirectionTool, condDeclaration, "BRK-ANNOTATION-DECLARATION-CHANGED", sevI, "Hint declared or undeclared at its default",
		"A hint appeared or disappeared but its effective value (with the specification default) is unchanged."},
	{KindAnnotationChanged, DirectionTool, condOther, "BRK-ANNOTATION-OTHER-CHANGED", sevI, "Other annotation changed",
		"An annotation member other than the four hints (for example annotations.title) changed."},
	{KindOutputSchemaRemoved, DirectionTool, condNone, "BRK-OUTPUT-SCHEMA-REMOVED", sevE, "Output schema removed",
		"Clients lose the promise of structured, validated results they may be parsing."},
	{KindOutputSchemaAdded, DirectionTool, condNone, "BRK-OUTPUT-SCHEMA-ADDED", sevI, "Output schema added",
		"The server now promises structured results; nothing a client relied on is withdrawn."},

	{KindPropertyRemoved, DirectionInput, condNone, "BRK-IN-PROPERTY-REMOVED", sevE, "Input property removed",
		"Clients still send the argument: it is rejected (closed schemas) or silently ignored, so the call does something other than asked."},
	{KindPropertyRemoved, DirectionOutput, condRequired, "BRK-OUT-REQUIRED-PROPERTY-REMOVED", sevE, "Guaranteed output property removed",
		"Clients read a member that was guaranteed and is now gone."},
	{KindPropertyRemoved, DirectionOutput, condOptional, "BRK-OUT-OPTIONAL-PROPERTY-REMOVED", sevW, "Optional output property removed",
		"Clients had to cope with its absence already, but the data they used is gone."},
	{KindPropertyAdded, DirectionInput, condRequired, "BRK-IN-REQUIRED-PROPERTY-ADDED", sevE, "Required input property added",
		"Every existing call lacks the new argument and is rejected."},
	{KindPropertyAdded, DirectionInput, condOptional, "BRK-IN-OPTIONAL-PROPERTY-ADDED", sevI, "Optional input property added",
		"Existing calls stay valid."},
	{KindPropertyAdded, DirectionOutput, condNone, "BRK-OUT-PROPERTY-ADDED", sevI, "Output property added",
		"Clients receive a member they do not know and can ignore."},
	{KindPropertyRenamed, DirectionInput, condNone, "BRK-IN-PROPERTY-RENAMED", sevE, "Input property renamed",
		"One property disappeared and one with an identical schema appeared in the same object: clients send the old name."},
	{KindPropertyRenamed, DirectionOutput, condNone, "BRK-OUT-PROPERTY-RENAMED", sevE, "Output property renamed",
		"Clients read the old name and find nothing."},
	{KindRequiredAdded, DirectionInput, condNone, "BRK-IN-BECAME-REQUIRED", sevE, "Input property became required",
		"Calls that omitted it are rejected."},
	{KindRequiredAdded, DirectionOutput, condNone, "BRK-OUT-BECAME-REQUIRED", sevI, "Output property now guaranteed",
		"A stronger promise to the client."},
	{KindRequiredRemoved, DirectionInput, condNone, "BRK-IN-BECAME-OPTIONAL", sevI, "Input property became optional",
		"Existing calls stay valid."},
	{KindRequiredRemoved, DirectionOutput, condNone, "BRK-OUT-BECAME-OPTIONAL", sevE, "Output property no longer guaranteed",
		"Clients that read it unconditionally break when it is absent."},
	{KindTypeWidened, DirectionInput, condNone, "BRK-IN-TYPE-WIDENED", sevI, "Input type widened",
		"Every old value is still accepted (for example integer to number, or null added)."},
	{KindTypeWidened, DirectionOutput, condNone, "BRK-OUT-TYPE-WIDENED", sevE, "Output type widened",
		"Clients now receive values of a type the old schema ruled out (a fraction where an integer was promised, or null): typed clients fail to decode them."},
	{KindTypeNarrowed, DirectionInput, condNone, "BRK-IN-TYPE-NARROWED", sevE, "Input type narrowed",
		"Values clients send today (for example fractions, or null) are rejected; a type appearing where none was declared narrows too."},
	{KindTypeNarrowed, DirectionOutput, condNone, "BRK-OUT-TYPE-NARROWED", sevI, "Output type narrowed",
		"Clients receive a subset of what they handled."},
	{KindTypeChanged, DirectionInput, condNone, "BRK-IN-TYPE-CHANGED", sevE, "Input type changed",
		"Old values are not accepted by the new type."},
	{KindTypeChanged, DirectionOutput, condNone, "BRK-OUT-TYPE-CHANGED", sevE, "Output type changed",
		"Clients receive values of a type they do not parse."},
	{KindEnumValueRemoved, DirectionInput, condNone, "BRK-IN-ENUM-VALUE-REMOVED", sevE, "Input enum value removed",
		"Calls using the removed value are rejected."},
	{KindEnumValueRemoved, DirectionOutput, condNone, "BRK-OUT-ENUM-VALUE-REMOVED", sevI, "Output enum value removed",
		"Clients receive a subset of the values they handled."},
	{KindEnumValueAdded, DirectionInput, condNone, "BRK-IN-ENUM-VALUE-ADDED", sevI, "Input enum value added",
		"Existing calls stay valid."},
	{KindEnumValueAdded, DirectionOutput, condNone, "BRK-OUT-ENUM-VALUE-ADDED", sevE, "Output enum value added",
		"The new schema admits a value the old one ruled out: clients with an exhaustive switch meet a value they do not know."},
	{KindConstChanged, DirectionInput, condNone, "BRK-IN-CONST-CHANGED", sevE, "Input const changed",
		"The only accepted value changed: every existing call is rejected."},
	{KindConstChanged, DirectionOutput, condNone, "BRK-OUT-CONST-CHANGED", sevE, "Output const changed",
		"Clients that matched the fixed value see another one."},
	{KindConstraintTightened, DirectionInput, condNone, "BRK-IN-CONSTRAINT-TIGHTENED", sevE, "Input constraint tightened",
		"A bound moved inwards or appeared (minimum, maximum, lengths, item and property counts, multipleOf, uniqueItems, enum, const, pattern, format, items, an allOf branch): values accepted before are rejected."},
	{KindConstraintTightened, DirectionOutput, condNone, "BRK-OUT-CONSTRAINT-TIGHTENED", sevI, "Output constraint tightened",
		"Clients receive a subset of the values they handled."},
	{KindConstraintLoosened, DirectionInput, condNone, "BRK-IN-CONSTRAINT-LOOSENED", sevI, "Input constraint loosened",
		"Every value accepted before is still accepted."},
	{KindConstraintLoosened, DirectionOutput, condNone, "BRK-OUT-CONSTRAINT-LOOSENED", sevE, "Output constraint loosened",
		"Clients receive values outside the range they relied on."},
	{KindConstraintChanged, DirectionInput, condNone, "BRK-IN-CONSTRAINT-CHANGED", sevE, "Input constraint changed",
		"A constraint changed in a way that is neither tighter nor looser (for example multipleOf 3 to 5): some old values are rejected."},
	{KindConstraintChanged, DirectionOutput, condNone, "BRK-OUT-CONSTRAINT-CHANGED", sevE, "Output constraint changed",
		"Clients receive values outside the set they relied on."},
	{KindPatternChanged, DirectionInput, condNone, "BRK-IN-PATTERN-CHANGED", sevE, "Input pattern changed",
		"A string the old pattern accepted is rejected by the new one (regular-expression containment is not decided: breaking only with a witness, otherwise BRK-IN-UNDETERMINED)."},
	{KindPatternChanged, DirectionOutput, condNone, "BRK-OUT-PATTERN-CHANGED", sevE, "Output pattern changed",
		"Clients that parse the string by its old shape fail on strings the new pattern admits."},
	{KindFormatChanged, DirectionInput, condNone, "BRK-IN-FORMAT-CHANGED", sevE, "Input format changed",
		"A value of the old format is rejected by the new one even where format is an annotation (otherwise the change is BRK-IN-UNDETERMINED: validators that assert formats reject old values, others do not)."},
	{KindFormatChanged, DirectionOutput, condNone, "BRK-OUT-FORMAT-CHANGED", sevE, "Output format changed",
		"Clients that parse the string by its old format fail."},
	{KindAdditionalTightened, DirectionInput, condNone, "BRK-IN-ADDITIONAL-PROPERTIES-TIGHTENED", sevE, "Input object closed",
		"additionalProperties became false or a schema: clients that send extra members are rejected."},
	{KindAdditionalTightened, DirectionOutput, condNone, "BRK-OUT-ADDITIONAL-PROPERTIES-TIGHTENED", sevI, "Output object closed",
		"Clients receive fewer unknown members."},
	{KindAdditionalLoosened, DirectionInput, condNone, "BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED", sevI, "Input object opened",
		"Every old call is still accepted."},
	{KindAdditionalLoosened, DirectionOutput, condNone, "BRK-OUT-ADDITIONAL-PROPERTIES-LOOSENED", sevE, "Output object opened",
		"Clients that decode strictly meet members they do not know."},
	{KindDefaultChanged, DirectionInput, condNone, "BRK-IN-DEFAULT-CHANGED", sevW, "Input default changed",
		"Calls that omit the argument silently get different behaviour; nothing is rejected, so not breaking."},
	{KindDefaultChanged, DirectionOutput, condNone, "BRK-OUT-DEFAULT-CHANGED", sevI, "Output default changed",
		"An annotation on a result member; informative."},
	{KindVariantRemoved, DirectionInput, condNone, "BRK-IN-VARIANT-REMOVED", sevE, "Input anyOf/oneOf branch removed",
		"Values that matched only the removed branch are rejected. Branches are compared as sets."},
	{KindVariantRemoved, DirectionOutput, condNone, "BRK-OUT-VARIANT-REMOVED", sevI, "Output anyOf/oneOf branch removed",
		"Clients receive a subset of the shapes they handled."},
	{KindVariantAdded, DirectionInput, condNone, "BRK-IN-VARIANT-ADDED", sevI, "Input anyOf/oneOf branch added",
		"Every old value still matches a branch. A oneOf branch may make an old value match two; that is decided by the witness search (BRK-IN-NARROWED)."},
	{KindVariantAdded, DirectionOutput, condNone, "BRK-OUT-VARIANT-ADDED", sevE, "Output anyOf/oneOf branch added",
		"Clients receive a shape they do not handle."},
	{KindKeywordChanged, DirectionInput, condNone, "BRK-IN-KEYWORD-CHANGED", sevW, "Other input keyword changed",
		"A validation keyword the classifier does not grade structurally (not, if/then/else, dependentRequired, dependentSchemas, patternProperties, propertyNames, contains, unevaluated*, a non-local $ref…) changed. Review it."},
	{KindKeywordChanged, DirectionOutput, condNone, "BRK-OUT-KEYWORD-CHANGED", sevW, "Other output keyword changed",
		"As for input: an ungraded validation keyword changed."},
	{KindSchemaTooDeep, DirectionInput, condNone, "BRK-IN-SCHEMA-TOO-DEEP", sevW, "Input schema too deep to compare",
		"The schemas differ below the depth limit (64 levels); the change is not graded."},
	{KindSchemaTooDeep, DirectionOutput, condNone, "BRK-OUT-SCHEMA-TOO-DEEP", sevW, "Output schema too deep to compare",
		"The schemas differ below the depth limit (64 levels); the change is not graded."},
	{KindSchemaDescriptionChg, DirectionInput, condNone, "BRK-IN-DESCRIPTION-CHANGED", sevW, "Input property description changed",
		"The model reads argument descriptions when it fills arguments; like the tool description, this text can carry injected instructions."},
	{KindSchemaDescriptionChg, DirectionOutput, condNone, "BRK-OUT-DESCRIPTION-CHANGED", sevI, "Output property description changed",
		"Documentation of a result member; informative."},

	// Rows by verdict (grade.go): they grade a change of any kind inside a
	// schema whose verdict disagrees with its kind's row.
	{kindAny, DirectionInput, condCovered, "BRK-IN-COVERED", sevI, "Input change proved compatible",
		"A change of a kind that can reject old values (a removed property, an added anyOf, a tightened bound) inside a schema proved to accept every value the old one did: for example the old schema kept, byte for byte, as a branch of a new anyOf."},
	{kindAny, DirectionInput, condUndeclared, "BRK-IN-PROPERTY-UNDECLARED", sevW, "Input property no longer declared, still accepted",
		"The property left the schema, but the new schema still accepts it as an undeclared member: calls that send it are accepted, and the server may now ignore it. Review it."},
	{kindAny, DirectionInput, condWitnessed, "BRK-IN-NARROWED", sevE, "Input change rejects old values",
		"A change whose kind alone does not reject old values (an ungraded keyword, a oneOf branch whose values now match two branches, an object that stopped being free-form) for which the search found a value the old schema accepted and the new one rejects; the witness is in the evidence."},
	{kindAny, DirectionInput, condUndetermined, "BRK-IN-UNDETERMINED", sevW, "Input change undetermined",
		"The procedure could neither prove that the new schema accepts every value the old one did nor find a value it rejects (or found one rejected only where format is asserted). Review it."},
	{kindAny, DirectionOutput, condCovered, "BRK-OUT-COVERED", sevI, "Output change proved compatible",
		"A change of a kind that can admit new values inside a schema proved to admit only what the old one did."},
	{kindAny, DirectionOutput, condWitnessed, "BRK-OUT-WIDENED", sevE, "Output change admits new values",
		"A change whose kind alone does not widen the output (an ungraded keyword, a new member where the old object was closed) for which the search found a value the new schema admits and the old one rejects; the witness is in the evidence."},
	{kindAny, DirectionOutput, condUndetermined, "BRK-OUT-UNDETERMINED", sevW, "Output change undetermined",
		"The procedure could neither prove that the new schema admits only what the old one did nor find a value it admits that the old one rejects. Review it."},
}

// kindDocs explains each change kind.
var kindDocs = map[Kind]string{
	KindToolRemoved:          "A tool in the old set is not in the new set (compared by name).",
	KindToolAdded:            "A tool in the new set is not in the old set.",
	KindDescriptionChanged:   "The tool's description text changed.",
	KindTitleChanged:         "The tool's title changed.",
	KindAnnotationChanged:    "A member of the tool's annotations changed. Hints are compared tri-state (true, false, undeclared) against the specification defaults (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true).",
	KindOutputSchemaAdded:    "The tool now declares an outputSchema.",
	KindOutputSchemaRemoved:  "The tool no longer declares an outputSchema.",
	KindPropertyRemoved:      "A member of properties is gone.",
	KindPropertyAdded:        "A member of properties appeared.",
	KindPropertyRenamed:      "Exactly one property disappeared and exactly one appeared in the same object, with the same schema (descriptions and titles aside).",
	KindRequiredAdded:        "An existing property joined required.",
	KindRequiredRemoved:      "An existing property left required.",
	KindTypeWidened:          "The new type set accepts every old type and more (integer is inside number; an absent type accepts everything).",
	KindTypeNarrowed:         "The new type set accepts only some of the old types.",
	KindTypeChanged:          "Old and new type sets overlap in neither direction.",
	KindEnumValueRemoved:     "Values left an enum present on both sides.",
	KindEnumValueAdded:       "Values joined an enum present on both sides.",
	KindConstChanged:         "const holds a different value on both sides.",
	KindConstraintTightened:  "A bound moved inwards, or a constraint appeared where there was none.",
	KindConstraintLoosened:   "A bound moved outwards, or a constraint disappeared.",
	KindConstraintChanged:    "A constraint changed in a way neither tighter nor looser.",
	KindPatternChanged:       "pattern holds a different expression on both sides (an added pattern tightens, a removed one loosens).",
	KindFormatChanged:        "format names a different format on both sides (an added format tightens, a removed one loosens).",
	KindAdditionalTightened:  "additionalProperties went from open (absent or true) to a schema or false, or from a schema to false.",
	KindAdditionalLoosened:   "additionalProperties went from false to a schema or open, or from a schema to open.",
	KindDefaultChanged:       "default appeared, disappeared or changed.",
	KindVariantRemoved:       "An anyOf/oneOf branch with no equal branch on the new side (when exactly one branch changed, the two are compared member by member instead).",
	KindVariantAdded:         "An anyOf/oneOf branch with no equal branch on the old side.",
	KindKeywordChanged:       "A validation keyword the classifier does not model changed.",
	KindSchemaTooDeep:        "The schemas differ below the comparison depth limit.",
	KindSchemaDescriptionChg: "A description inside the schema changed.",
}

// Catalogue returns the drift rule catalogue: the CHG-* change kinds, the
// BRK-* rules that grade them, and the MCP-DRIFT-* finding rules.
func Catalogue() report.Catalogue {
	var c report.Catalogue
	byKind := map[Kind][]grade{}
	for _, g := range grades {
		byKind[g.kind] = append(byKind[g.kind], g)
		detail := fmt.Sprintf("%s Grades %s changes (%s side", g.why, g.kind, g.dir)
		if g.cond != condNone {
			detail += ", " + g.cond
		}
		detail += "). " + breakingWord(g.sev)
		c = append(c, report.Rule{ID: g.rule, Severity: g.sev, Title: g.title, Detail: detail})
	}
	delete(byKind, kindAny) // not a kind: a row of every kind, by verdict
	for k, gs := range byKind {
		sev := sevI
		var lines []string
		for _, g := range gs {
			if g.sev.Rank() > sev.Rank() {
				sev = g.sev
			}
			side := string(g.dir)
			if g.cond != condNone {
				side += ", " + g.cond
			}
			lines = append(lines, fmt.Sprintf("%s: %s (%s)", side, g.rule, g.sev))
		}
		c = append(c, report.Rule{
			ID: string(k), Severity: sev, Title: "Change kind " + strings.TrimPrefix(string(k), "CHG-"),
			Detail: kindDocs[k] + " Graded by " + strings.Join(lines, "; ") + ". A reported change id is this kind followed by the first 8 hex digits of sha256(tool name, NUL, JSON pointer).",
		})
	}
	c = append(c, driftRules...)
	slices.SortFunc(c, func(a, b report.Rule) int { return strings.Compare(a.ID, b.ID) })
	return c
}

func breakingWord(s report.Severity) string {
	if s == report.SeverityError {
		return "Breaking."
	}
	return "Not breaking."
}

// lookupGrade finds the grading row for a kind, direction and condition.
func lookupGrade(k Kind, d Direction, cond string) (grade, bool) {
	for _, g := range grades {
		if g.kind == k && g.dir == d && g.cond == cond {
			return g, true
		}
	}
	// Fall back to the unconditioned row.
	for _, g := range grades {
		if g.kind == k && g.dir == d && g.cond == condNone {
			return g, true
		}
	}
	return grade{}, false
}

// KindOf returns the change kind of a change id ("CHG-PROPERTY-REMOVED-1a2b3c4d"
// gives "CHG-PROPERTY-REMOVED"), or the id itself when it has no hash suffix.
func KindOf(changeID string) string {
	i := strings.LastIndexByte(changeID, '-')
	if i < 0 || len(changeID)-i-1 != 8 {
		return changeID
	}
	for _, r := range changeID[i+1:] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return changeID
		}
	}
	return changeID[:i]
}
