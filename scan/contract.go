package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// contracts assesses every listed tool's outputSchema and records the
// schema-level conformance checks. Each schema is assessed under the scan's
// context and its own synthesis budget (jsonschema.Budget defaults): one that
// needs more is unassessed (MCP-OUT-UNASSESSED, stopped_by "budget"); once
// the context has ended, the remaining ones are not established.
func (s *scanner) contracts(ctx context.Context) {
	if !s.listed && len(s.list.Tools) == 0 {
		return
	}
	legacy := !mcp.IsModern(s.sess.Revision)
	bad := map[string]bool{}
	for _, t := range s.list.Tools {
		tr := ToolReport{Name: t.Name}
		switch {
		case isAbsent(t.OutputSchema):
			tr.OutputContract = ContractNone
			s.find(RuleNoOutputSchema, t.Name, "/outputSchema", "declares no outputSchema")
		default:
			// Not started, or stopped part-way by the scan's context: either
			// way not established.
			if reason, cut := cutShort(ctx); cut {
				tr.cutContract(reason)
				break
			}
			a := AssessContext(ctx, t.OutputSchema, s.opts.Budget)
			if a.StoppedBy == jsonschema.StoppedDeadline || a.StoppedBy == jsonschema.StoppedCanceled {
				tr.cutContract(a.StoppedBy)
				break
			}
			tr.OutputContract = a.Contract
			tr.Instances, tr.Leaves, tr.LeavesRejected, tr.Wrapped, tr.Reason = a.Instances, a.Leaves, a.LeavesRejected, a.Wrapped, a.Reason
			tr.Shapes, tr.ShapesRejected = a.Shapes, a.ShapesRejected
			tr.LeavesSampled, tr.StoppedBy = a.LeavesCapped, a.StoppedBy
			switch a.Contract {
			case ContractInvalid:
				bad[RuleSchemaInvalid] = true
				s.find(RuleSchemaInvalid, t.Name, "/outputSchema", "outputSchema does not compile: "+a.CompileError)
			case ContractVacuous, ContractPartial, ContractEnforceable:
				if a.Leaves > 0 {
					rate := a.LeafRate
					tr.LeafRate = &rate
				}
				if a.Undetermined {
					tr.Undetermined = true
					s.find(RuleUnassessed, t.Name, "/outputSchema", a.Reason)
				} else if a.Contract == ContractVacuous {
					msg := "a corrupted but well-typed payload validates"
					if a.Leaves > 0 {
						msg += fmt.Sprintf("; %d of %d single-leaf corruptions rejected", a.LeavesRejected, a.Leaves)
					} else {
						msg += "; the schema constrains no field"
					}
					s.find(RuleVacuous, t.Name, "/outputSchema", msg)
				} else if a.Contract == ContractPartial {
					s.find(RulePartialContract, t.Name, "/outputSchema", fmt.Sprintf("a corrupted payload validates for %d of %d sampled shapes (first: %s); %d of %d single-leaf corruptions rejected",
						a.Shapes-a.ShapesRejected, a.Shapes, a.Unrejected, a.LeavesRejected, a.Leaves))
				} else if a.LeavesRejected < a.Leaves {
					s.find(RuleUnconstrained, t.Name, "/outputSchema", fmt.Sprintf("%d of %d single-leaf corruptions rejected", a.LeavesRejected, a.Leaves))
				}
			}
			if a.Wrapped {
				s.find(RuleWrapped, t.Name, "/outputSchema", "the SDK wrapped an unstructured return value")
			}
			if legacy && a.Contract != ContractInvalid && !a.RootObject {
				bad[RuleOutputRootObject] = true
				s.find(RuleOutputRootObject, t.Name, "/outputSchema", "root type is not \"object\" (required before 2026-07-28)")
			}
		}
		s.rep.Tools = append(s.rep.Tools, tr)
		s.inputSchema(ctx, t, bad)
	}
	s.names(bad)
	for _, id := range []string{RuleSchemaInvalid, RuleInputSchemaType} {
		s.check(id, passFail(bad[id]), "")
	}
	if legacy {
		s.check(RuleOutputRootObject, passFail(bad[RuleOutputRootObject]), "")
	} else {
		s.check(RuleOutputRootObject, CheckNotApplicable, "any JSON value is allowed from 2026-07-28")
	}
}

// cutContract records an output contract the scan's context (reason) kept
// from being assessed: undetermined, not graded.
func (tr *ToolReport) cutContract(reason string) {
	tr.OutputContract, tr.Undetermined, tr.StoppedBy = ContractVacuous, true, reason
	tr.Reason = notEstablished(reason, "the output contract was not assessed before the scan ended")
}

func (s *scanner) inputSchema(ctx context.Context, t mcp.Tool, bad map[string]bool) {
	if isAbsent(t.InputSchema) {
		bad[RuleInputSchemaType] = true
		s.find(RuleInputSchemaType, t.Name, "/inputSchema", "inputSchema is missing")
		return
	}
	v, err := jsonvalue.DecodeJSON(t.InputSchema)
	obj, isObj := v.(map[string]any)
	if err != nil || !isObj || obj["type"] != "object" {
		bad[RuleInputSchemaType] = true
		s.find(RuleInputSchemaType, t.Name, "/inputSchema/type", "inputSchema is not a schema of type \"object\"")
	}
	switch _, err := jsonschema.CompileContext(ctx, t.InputSchema, s.opts.Budget); {
	case err == nil:
	case errors.Is(err, jsonschema.ErrBudget):
		s.find(RuleIncomplete, t.Name, "/inputSchema", "compiling the inputSchema exceeded the synthesis budget: whether it compiles was not established")
	case ctx.Err() != nil:
		// Cut short by the scan's context: nothing established, nothing graded.
	default:
		bad[RuleSchemaInvalid] = true
		s.find(RuleSchemaInvalid, t.Name, "/inputSchema", "inputSchema does not compile: "+err.Error())
	}
}

// toolNameRE is the 2025-11-25 tool-name rule.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func (s *scanner) names(bad map[string]bool) {
	seen := map[string]int{}
	for _, t := range s.list.Tools {
		seen[t.Name]++
		if !toolNameRE.MatchString(t.Name) {
			bad[RuleToolName] = true
			s.find(RuleToolName, t.Name, "/name", fmt.Sprintf("name of %d characters uses characters outside A-Z a-z 0-9 _ - .", len([]rune(t.Name))))
		}
	}
	for name, n := range seen {
		if n > 1 {
			bad[RuleDuplicateTool] = true
			s.find(RuleDuplicateTool, name, "/name", fmt.Sprintf("listed %d times", n))
		}
	}
	s.check(RuleToolName, passFail(bad[RuleToolName]), "")
	s.check(RuleDuplicateTool, passFail(bad[RuleDuplicateTool]), "")
}

func passFail(failed bool) CheckStatus {
	if failed {
		return CheckFail
	}
	return CheckPass
}

func isAbsent(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t == "" || t == "null"
}
