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
	// directionTool is a change to the tool itself (presence, description,
	// title, annotations, whether it has an output schema).
	directionTool Direction = "tool"
	// directionInput is a change inside inputSchema (what a client sends).
	directionInput Direction = "input"
	// directionOutput is a change inside outputSchema (what a client receives).
	directionOutput Direction = "output"
)

// Kind is a stable change kind id, "CHG-…".
type Kind string

// Change kinds. Each is graded by one BRK-* rule per direction (and, for a
// few, per whether the property concerned is required).
const (
	KindToolRemoved          Kind = "CHG-TOOL-REMOVED"
	KindToolAdded            Kind = "CHG-TOOL-ADDED"
	KindDescriptionChanged   Kind = "CHG-DESCRIPTION-CHANGED"
	kindTitleChanged         Kind = "CHG-TITLE-CHANGED"
	kindAnnotationChanged    Kind = "CHG-ANNOTATION-CHANGED"
	kindOutputSchemaAdded    Kind = "CHG-OUTPUT-SCHEMA-ADDED"
	kindOutputSchemaRemoved  Kind = "CHG-OUTPUT-SCHEMA-REMOVED"
	kindPropertyRemoved      Kind = "CHG-PROPERTY-REMOVED"
	kindPropertyAdded        Kind = "CHG-PROPERTY-ADDED"
	kindPropertyRenamed      Kind = "CHG-PROPERTY-RENAMED"
	kindRequiredAdded        Kind = "CHG-REQUIRED-ADDED"
	kindRequiredRemoved      Kind = "CHG-REQUIRED-REMOVED"
	kindTypeWidened          Kind = "CHG-TYPE-WIDENED"
	kindTypeNarrowed         Kind = "CHG-TYPE-NARROWED"
	kindTypeChanged          Kind = "CHG-TYPE-CHANGED"
	kindEnumValueRemoved     Kind = "CHG-ENUM-VALUE-REMOVED"
	kindEnumValueAdded       Kind = "CHG-ENUM-VALUE-ADDED"
	kindConstChanged         Kind = "CHG-CONST-CHANGED"
	kindConstraintTightened  Kind = "CHG-CONSTRAINT-TIGHTENED"
	kindConstraintLoosened   Kind = "CHG-CONSTRAINT-LOOSENED"
	kindConstraintChanged    Kind = "CHG-CONSTRAINT-CHANGED"
	kindPatternChanged       Kind = "CHG-PATTERN-CHANGED"
	kindFormatChanged        Kind = "CHG-FORMAT-CHANGED"
	kindAdditionalTightened  Kind = "CHG-ADDITIONAL-PROPERTIES-TIGHTENED"
	kindAdditionalLoosened   Kind = "CHG-ADDITIONAL-PROPERTIES-LOOSENED"
	kindDefaultChanged       Kind = "CHG-DEFAULT-CHANGED"
	kindVariantRemoved       Kind = "CHG-VARIANT-REMOVED"
	kindVariantAdded         Kind = "CHG-VARIANT-ADDED"
	kindKeywordChanged       Kind = "CHG-KEYWORD-CHANGED"
	kindSchemaTooDeep        Kind = "CHG-SCHEMA-TOO-DEEP"
	kindSchemaDescriptionChg Kind = "CHG-SCHEMA-DESCRIPTION-CHANGED"

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
	{KindToolRemoved, directionTool, condNone, "BRK-TOOL-REMOVED", sevE, "Tool removed",
		"A client built against the old list calls the tool and fails."},
	{KindToolRemoved, directionTool, condUnlisted, "BRK-TOOL-UNLISTED", sevE, "Tool no longer listed by default",
		"The tool is absent from the new release's default listing, but the new release lists it under a configuration known for the package (a toolset switch), or its listing under one was not established: clients on the default configuration lose it, those that set the switch may keep it. Not called removed."},
	{KindToolAdded, directionTool, condNone, "BRK-TOOL-ADDED", sevI, "Tool added",
		"Nothing a client did before stops working; agents may now discover and call it."},
	{KindDescriptionChanged, directionTool, condNone, "BRK-TOOL-DESCRIPTION-CHANGED", sevW, "Tool description changed",
		"The model reads the description to decide when and how to call the tool: a changed description is the carrier of tool poisoning (a \"rug pull\"), so it is flagged even though no schema changed. Review the new text."},
	{kindTitleChanged, directionTool, condNone, "BRK-TOOL-TITLE-CHANGED", sevI, "Tool title changed",
		"Display text for people; recorded, never breaking."},
	{kindAnnotationChanged, directionTool, condHint, "BRK-ANNOTATION-HINT-CHANGED", sevW, "Behaviour hint changed",
		"readOnlyHint, destructiveHint or idempotentHint now has a different effective value (the specification default applies when a hint is undeclared). A client that planned around the old hint, for example auto-approving read-only tools, plans wrong. Annotations are untrusted, so this is never graded breaking."},
	{kindAnnotationChanged, directionTool, condOpenWorld, "BRK-ANNOTATION-OPENWORLD-CHANGED", sevI, "openWorldHint changed",
		"Whether the tool reaches outside systems changed its effective value; informative."},
	{kindAnnotationChanged, directionTool, condDeclaration, "BRK-ANNOTATION-DECLARATION-CHANGED", sevI, "Hint declared or undeclared at its default",
		"A hint appeared or disappeared but its effective value (with the specification default) is unchanged."},
	{kindAnnotationChanged, directionTool, condOther, "BRK-ANNOTATION-OTHER-CHANGED", sevI, "Other annotation changed",
		"An annotation member other than the four hints (for example annotations.title) changed."},
	{kindOutputSchemaRemoved, directionTool, condNone, "BRK-OUTPUT-SCHEMA-REMOVED", sevE, "Output schema removed",
		"Clients lose the promise of structured, validated results they may be parsing."},
	{kindOutputSchemaAdded, directionTool, condNone, "BRK-OUTPUT-SCHEMA-ADDED", sevI, "Output schema added",
		"The server now promises structured results; nothing a client relied on is withdrawn."},

	{kindPropertyRemoved, directionInput, condNone, "BRK-IN-PROPERTY-REMOVED", sevE, "Input property removed",
		"Clients still send the argument: it is rejected (closed schemas) or silently ignored, so the call does something other than asked."},
	{kindPropertyRemoved, directionOutput, condRequired, "BRK-OUT-REQUIRED-PROPERTY-REMOVED", sevE, "Guaranteed output property removed",
		"Clients read a member that was guaranteed and is now gone."},
	{kindPropertyRemoved, directionOutput, condOptional, "BRK-OUT-OPTIONAL-PROPERTY-REMOVED", sevW, "Optional output property removed",
		"Clients had to cope with its absence already, but the data they used is gone."},
	{kindPropertyAdded, directionInput, condRequired, "BRK-IN-REQUIRED-PROPERTY-ADDED", sevE, "Required input property added",
		"Every existing call lacks the new argument and is rejected."},
	{kindPropertyAdded, directionInput, condOptional, "BRK-IN-OPTIONAL-PROPERTY-ADDED", sevI, "Optional input property added",
		"Existing calls stay valid."},
	{kindPropertyAdded, directionOutput, condNone, "BRK-OUT-PROPERTY-ADDED", sevI, "Output property added",
		"Clients receive a member they do not know and can ignore."},
	{kindPropertyRenamed, directionInput, condNone, "BRK-IN-PROPERTY-RENAMED", sevE, "Input property renamed",
		"One property disappeared and one with an identical schema appeared in the same object: clients send the old name."},
	{kindPropertyRenamed, directionOutput, condNone, "BRK-OUT-PROPERTY-RENAMED", sevE, "Output property renamed",
		"Clients read the old name and find nothing."},
	{kindRequiredAdded, directionInput, condNone, "BRK-IN-BECAME-REQUIRED", sevE, "Input property became required",
		"Calls that omitted it are rejected."},
	{kindRequiredAdded, directionOutput, condNone, "BRK-OUT-BECAME-REQUIRED", sevI, "Output property now guaranteed",
		"A stronger promise to the client."},
	{kindRequiredRemoved, directionInput, condNone, "BRK-IN-BECAME-OPTIONAL", sevI, "Input property became optional",
		"Existing calls stay valid."},
	{kindRequiredRemoved, directionOutput, condNone, "BRK-OUT-BECAME-OPTIONAL", sevE, "Output property no longer guaranteed",
		"Clients that read it unconditionally break when it is absent."},
	{kindTypeWidened, directionInput, condNone, "BRK-IN-TYPE-WIDENED", sevI, "Input type widened",
		"Every old value is still accepted (for example integer to number, or null added)."},
	{kindTypeWidened, directionOutput, condNone, "BRK-OUT-TYPE-WIDENED", sevE, "Output type widened",
		"Clients now receive values of a type the old schema ruled out (a fraction where an integer was promised, or null): typed clients fail to decode them."},
	{kindTypeNarrowed, directionInput, condNone, "BRK-IN-TYPE-NARROWED", sevE, "Input type narrowed",
		"Values clients send today (for example fractions, or null) are rejected; a type appearing where none was declared narrows too."},
	{kindTypeNarrowed, directionOutput, condNone, "BRK-OUT-TYPE-NARROWED", sevI, "Output type narrowed",
		"Clients receive a subset of what they handled."},
	{kindTypeChanged, directionInput, condNone, "BRK-IN-TYPE-CHANGED", sevE, "Input type changed",
		"Old values are not accepted by the new type."},
	{kindTypeChanged, directionOutput, condNone, "BRK-OUT-TYPE-CHANGED", sevE, "Output type changed",
		"Clients receive values of a type they do not parse."},
	{kindEnumValueRemoved, directionInput, condNone, "BRK-IN-ENUM-VALUE-REMOVED", sevE, "Input enum value removed",
		"Calls using the removed value are rejected."},
	{kindEnumValueRemoved, directionOutput, condNone, "BRK-OUT-ENUM-VALUE-REMOVED", sevI, "Output enum value removed",
		"Clients receive a subset of the values they handled."},
	{kindEnumValueAdded, directionInput, condNone, "BRK-IN-ENUM-VALUE-ADDED", sevI, "Input enum value added",
		"Existing calls stay valid."},
	{kindEnumValueAdded, directionOutput, condNone, "BRK-OUT-ENUM-VALUE-ADDED", sevE, "Output enum value added",
		"The new schema admits a value the old one ruled out: clients with an exhaustive switch meet a value they do not know."},
	{kindConstChanged, directionInput, condNone, "BRK-IN-CONST-CHANGED", sevE, "Input const changed",
		"The only accepted value changed: every existing call is rejected."},
	{kindConstChanged, directionOutput, condNone, "BRK-OUT-CONST-CHANGED", sevE, "Output const changed",
		"Clients that matched the fixed value see another one."},
	{kindConstraintTightened, directionInput, condNone, "BRK-IN-CONSTRAINT-TIGHTENED", sevE, "Input constraint tightened",
		"A bound moved inwards or appeared (minimum, maximum, lengths, item and property counts, multipleOf, uniqueItems, enum, const, pattern, format, items, an allOf branch): values accepted before are rejected."},
	{kindConstraintTightened, directionOutput, condNone, "BRK-OUT-CONSTRAINT-TIGHTENED", sevI, "Output constraint tightened",
		"Clients receive a subset of the values they handled."},
	{kindConstraintLoosened, directionInput, condNone, "BRK-IN-CONSTRAINT-LOOSENED", sevI, "Input constraint loosened",
		"Every value accepted before is still accepted."},
	{kindConstraintLoosened, directionOutput, condNone, "BRK-OUT-CONSTRAINT-LOOSENED", sevE, "Output constraint loosened",
		"Clients receive values outside the range they relied on."},
	{kindConstraintChanged, directionInput, condNone, "BRK-IN-CONSTRAINT-CHANGED", sevE, "Input constraint changed",
		"A constraint changed in a way that is neither tighter nor looser (for example multipleOf 3 to 5): some old values are rejected."},
	{kindConstraintChanged, directionOutput, condNone, "BRK-OUT-CONSTRAINT-CHANGED", sevE, "Output constraint changed",
		"Clients receive values outside the set they relied on."},
	{kindPatternChanged, directionInput, condNone, "BRK-IN-PATTERN-CHANGED", sevE, "Input pattern changed",
		"A string the old pattern accepted is rejected by the new one (regular-expression containment is not decided: breaking only with a witness, otherwise BRK-IN-UNDETERMINED)."},
	{kindPatternChanged, directionOutput, condNone, "BRK-OUT-PATTERN-CHANGED", sevE, "Output pattern changed",
		"Clients that parse the string by its old shape fail on strings the new pattern admits."},
	{kindFormatChanged, directionInput, condNone, "BRK-IN-FORMAT-CHANGED", sevE, "Input format changed",
		"A value of the old format is rejected by the new one even where format is an annotation (otherwise the change is BRK-IN-UNDETERMINED: validators that assert formats reject old values, others do not)."},
	{kindFormatChanged, directionOutput, condNone, "BRK-OUT-FORMAT-CHANGED", sevE, "Output format changed",
		"Clients that parse the string by its old format fail."},
	{kindAdditionalTightened, directionInput, condNone, "BRK-IN-ADDITIONAL-PROPERTIES-TIGHTENED", sevE, "Input object closed",
		"additionalProperties became false or a schema: clients that send extra members are rejected."},
	{kindAdditionalTightened, directionOutput, condNone, "BRK-OUT-ADDITIONAL-PROPERTIES-TIGHTENED", sevI, "Output object closed",
		"Clients receive fewer unknown members."},
	{kindAdditionalLoosened, directionInput, condNone, "BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED", sevI, "Input object opened",
		"Every old call is still accepted."},
	{kindAdditionalLoosened, directionOutput, condNone, "BRK-OUT-ADDITIONAL-PROPERTIES-LOOSENED", sevE, "Output object opened",
		"Clients that decode strictly meet members they do not know."},
	{kindDefaultChanged, directionInput, condNone, "BRK-IN-DEFAULT-CHANGED", sevW, "Input default changed",
		"Calls that omit the argument silently get different behaviour; nothing is rejected, so not breaking."},
	{kindDefaultChanged, directionOutput, condNone, "BRK-OUT-DEFAULT-CHANGED", sevI, "Output default changed",
		"An annotation on a result member; informative."},
	{kindVariantRemoved, directionInput, condNone, "BRK-IN-VARIANT-REMOVED", sevE, "Input anyOf/oneOf branch removed",
		"Values that matched only the removed branch are rejected. Branches are compared as sets."},
	{kindVariantRemoved, directionOutput, condNone, "BRK-OUT-VARIANT-REMOVED", sevI, "Output anyOf/oneOf branch removed",
		"Clients receive a subset of the shapes they handled."},
	{kindVariantAdded, directionInput, condNone, "BRK-IN-VARIANT-ADDED", sevI, "Input anyOf/oneOf branch added",
		"Every old value still matches a branch. A oneOf branch may make an old value match two; that is decided by the witness search (BRK-IN-NARROWED)."},
	{kindVariantAdded, directionOutput, condNone, "BRK-OUT-VARIANT-ADDED", sevE, "Output anyOf/oneOf branch added",
		"Clients receive a shape they do not handle."},
	{kindKeywordChanged, directionInput, condNone, "BRK-IN-KEYWORD-CHANGED", sevW, "Other input keyword changed",
		"A validation keyword the classifier does not grade structurally (not, if/then/else, dependentRequired, dependentSchemas, patternProperties, propertyNames, contains, unevaluated*, a non-local $ref…) changed. Review it."},
	{kindKeywordChanged, directionOutput, condNone, "BRK-OUT-KEYWORD-CHANGED", sevW, "Other output keyword changed",
		"As for input: an ungraded validation keyword changed."},
	{kindSchemaTooDeep, directionInput, condNone, "BRK-IN-SCHEMA-TOO-DEEP", sevW, "Input schema too deep to compare",
		"The schemas differ below the depth limit (64 levels); the change is not graded."},
	{kindSchemaTooDeep, directionOutput, condNone, "BRK-OUT-SCHEMA-TOO-DEEP", sevW, "Output schema too deep to compare",
		"The schemas differ below the depth limit (64 levels); the change is not graded."},
	{kindSchemaDescriptionChg, directionInput, condNone, "BRK-IN-DESCRIPTION-CHANGED", sevW, "Input property description changed",
		"The model reads argument descriptions when it fills arguments; like the tool description, this text can carry injected instructions."},
	{kindSchemaDescriptionChg, directionOutput, condNone, "BRK-OUT-DESCRIPTION-CHANGED", sevI, "Output property description changed",
		"Documentation of a result member; informative."},

	// Rows by verdict (grade.go): they grade a change of any kind inside a
	// schema whose verdict disagrees with its kind's row.
	{kindAny, directionInput, condCovered, "BRK-IN-COVERED", sevI, "Input change proved compatible",
		"A change of a kind that can reject old values (a removed property, an added anyOf, a tightened bound) inside a schema proved to accept every value the old one did: for example the old schema kept, byte for byte, as a branch of a new anyOf."},
	{kindAny, directionInput, condUndeclared, "BRK-IN-PROPERTY-UNDECLARED", sevW, "Input property no longer declared, still accepted",
		"The property left the schema, but the new schema still accepts it as an undeclared member: calls that send it are accepted, and the server may now ignore it. Review it."},
	{kindAny, directionInput, condWitnessed, "BRK-IN-NARROWED", sevE, "Input change rejects old values",
		"A change whose kind alone does not reject old values (an ungraded keyword, a oneOf branch whose values now match two branches, an object that stopped being free-form) for which the search found a value the old schema accepted and the new one rejects; the witness is in the evidence."},
	{kindAny, directionInput, condUndetermined, "BRK-IN-UNDETERMINED", sevW, "Input change undetermined",
		"The procedure could neither prove that the new schema accepts every value the old one did nor find a value it rejects (or found one rejected only where format is asserted). Review it."},
	{kindAny, directionOutput, condCovered, "BRK-OUT-COVERED", sevI, "Output change proved compatible",
		"A change of a kind that can admit new values inside a schema proved to admit only what the old one did."},
	{kindAny, directionOutput, condWitnessed, "BRK-OUT-WIDENED", sevE, "Output change admits new values",
		"A change whose kind alone does not widen the output (an ungraded keyword, a new member where the old object was closed) for which the search found a value the new schema admits and the old one rejects; the witness is in the evidence."},
	{kindAny, directionOutput, condUndetermined, "BRK-OUT-UNDETERMINED", sevW, "Output change undetermined",
		"The procedure could neither prove that the new schema admits only what the old one did nor find a value it admits that the old one rejects. Review it."},
}

// kindDocs explains each change kind.
var kindDocs = map[Kind]string{
	KindToolRemoved:          "A tool in the old set is not in the new set (compared by name).",
	KindToolAdded:            "A tool in the new set is not in the old set.",
	KindDescriptionChanged:   "The tool's description text changed.",
	kindTitleChanged:         "The tool's title changed.",
	kindAnnotationChanged:    "A member of the tool's annotations changed. Hints are compared tri-state (true, false, undeclared) against the specification defaults (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true).",
	kindOutputSchemaAdded:    "The tool now declares an outputSchema.",
	kindOutputSchemaRemoved:  "The tool no longer declares an outputSchema.",
	kindPropertyRemoved:      "A member of properties is gone.",
	kindPropertyAdded:        "A member of properties appeared.",
	kindPropertyRenamed:      "Exactly one property disappeared and exactly one appeared in the same object, with the same schema (descriptions and titles aside).",
	kindRequiredAdded:        "An existing property joined required.",
	kindRequiredRemoved:      "An existing property left required.",
	kindTypeWidened:          "The new type set accepts every old type and more (integer is inside number; an absent type accepts everything).",
	kindTypeNarrowed:         "The new type set accepts only some of the old types.",
	kindTypeChanged:          "Old and new type sets overlap in neither direction.",
	kindEnumValueRemoved:     "Values left an enum present on both sides.",
	kindEnumValueAdded:       "Values joined an enum present on both sides.",
	kindConstChanged:         "const holds a different value on both sides.",
	kindConstraintTightened:  "A bound moved inwards, or a constraint appeared where there was none.",
	kindConstraintLoosened:   "A bound moved outwards, or a constraint disappeared.",
	kindConstraintChanged:    "A constraint changed in a way neither tighter nor looser.",
	kindPatternChanged:       "pattern holds a different expression on both sides (an added pattern tightens, a removed one loosens).",
	kindFormatChanged:        "format names a different format on both sides (an added format tightens, a removed one loosens).",
	kindAdditionalTightened:  "additionalProperties went from open (absent or true) to a schema or false, or from a schema to false.",
	kindAdditionalLoosened:   "additionalProperties went from false to a schema or open, or from a schema to open.",
	kindDefaultChanged:       "default appeared, disappeared or changed.",
	kindVariantRemoved:       "An anyOf/oneOf branch with no equal branch on the new side (when exactly one branch changed, the two are compared member by member instead).",
	kindVariantAdded:         "An anyOf/oneOf branch with no equal branch on the old side.",
	kindKeywordChanged:       "A validation keyword the classifier does not model changed.",
	kindSchemaTooDeep:        "The schemas differ below the comparison depth limit.",
	kindSchemaDescriptionChg: "A description inside the schema changed.",
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
