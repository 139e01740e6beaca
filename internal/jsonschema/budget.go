package jsonschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// Budget bounds the work of one synthesis (Synthesize) or one assessment
// (Measure) of a schema, so that a hostile schema costs a bounded amount of
// time and memory whatever it declares. The zero value means the defaults.
type Budget struct {
	// Steps bounds the work done: one step per value generated, per rune of
	// a pattern-built string and per value of an instance validated, and,
	// for every regular-expression match, the length of the string times
	// the size of the compiled pattern (an upper bound on what Go's linear
	// engine does). Default DefaultBudgetSteps.
	Steps int64
	// Bytes bounds the string data generated over every attempt.
	// Default DefaultBudgetBytes.
	Bytes int64
}

// Budget defaults. About a second of work on one core for Steps; a schema
// that needs more is reported as over budget rather than assessed.
const (
	DefaultBudgetSteps = 100_000_000
	DefaultBudgetBytes = 4 << 20
)

// ErrBudget reports that synthesis or assessment stopped because the schema
// needed more work (or generated data) than its Budget allows.
var ErrBudget = errors.New("schema: synthesis budget exceeded")

// The two ways a Budget runs out; both wrap ErrBudget.
var (
	errWorkBudget = fmt.Errorf("%w (work)", ErrBudget)
	errDataBudget = fmt.Errorf("%w (generated data)", ErrBudget)
)

// budgetPart names the part of the budget err reports exhausted.
func budgetPart(err error) string {
	if errors.Is(err, errDataBudget) {
		return "generated data"
	}
	return "work"
}

// Stop causes recorded in Measurement.StoppedBy (and scan.Assessment.StoppedBy).
const (
	StoppedBudget   = "budget"
	StoppedDeadline = "deadline"
	StoppedCanceled = "canceled"
)

func (b Budget) withDefaults() Budget {
	b.Steps, b.Bytes = orDefault(b.Steps, DefaultBudgetSteps), orDefault(b.Bytes, DefaultBudgetBytes)
	return b
}

// orDefault is v, or d where v is not positive: a bound left at its zero
// value (or set below one) takes its default.
func orDefault[T int | int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// CompileContext is Compile with the compilation, and every later
// validation with the returned schema, charged to b under ctx. A schema
// whose patterns cost more to compile than b allows, or whose compilation
// outlives ctx, is refused with an error wrapping ErrBudget or ctx's error
// (not ErrInvalidSchema: nothing is known of its validity). The returned
// schema must not be shared between goroutines; see Stopped.
func CompileContext(ctx context.Context, raw json.RawMessage, b Budget) (*Schema, error) {
	m := newMeter(ctx, b)
	s, err := CompileOpts(raw, Options{AssertFormat: true, meter: m})
	if stop := m.stopped(); stop != nil {
		return nil, stop
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Stopped returns why the budget of a schema from CompileContext stopped
// (nil while it has not, and always for other schemas). Once it has, a
// validation's answer means nothing and the caller must discard it.
func (s *Schema) Stopped() error { return s.opts.meter.stopped() }

// meter spends a Budget under a context. It is used by one goroutine at a
// time (one synthesis or assessment, whose compiled schemas are never
// shared). Once it has stopped, every charge fails at once, so that work
// still in progress (a validation that calls the regular-expression engine
// many times) finishes quickly; its result must then be discarded (see
// stopped). A nil meter never stops.
type meter struct {
	ctx          context.Context
	steps, bytes int64
	calls        uint
	err          error
	// patterns caches the compiled patterns: a schema that repeats one
	// pattern a thousand times compiles it once.
	patterns map[string]*matcher
}

func newMeter(ctx context.Context, b Budget) *meter {
	b = b.withDefaults()
	return &meter{ctx: ctx, steps: b.Steps, bytes: b.Bytes, patterns: map[string]*matcher{}}
}

// compileStepsPerInst is what compiling one instruction of a pattern's
// program is charged, in steps (compiling costs about as much as matching
// that many bytes).
const compileStepsPerInst = 64

// ctxCheckEvery is how many small charges pass between context checks; a
// charge of at least ctxCheckSteps always checks.
const (
	ctxCheckEvery = 256
	ctxCheckSteps = 1 << 14
)

// step charges n steps and reports whether the work may go on.
func (m *meter) step(n int64) bool {
	if m == nil {
		return true
	}
	if m.err == nil {
		m.calls++
		if m.calls%ctxCheckEvery == 0 || n >= ctxCheckSteps {
			if err := m.ctx.Err(); err != nil {
				m.err = fmt.Errorf("schema: work stopped: %w", err)
			}
		}
	}
	return m.spend(&m.steps, n, errWorkBudget)
}

// take charges n bytes of generated data and reports whether the work may
// go on.
func (m *meter) take(n int64) bool {
	if m == nil {
		return true
	}
	return m.spend(&m.bytes, n, errDataBudget)
}

// spend takes n from *left, or stops the meter with exhausted when *left
// is short; it reports whether the work may go on.
func (m *meter) spend(left *int64, n int64, exhausted error) bool {
	switch {
	case m.err != nil:
		return false
	case n > *left:
		*left, m.err = 0, exhausted
		return false
	}
	*left -= n
	return true
}

// stopped returns why the meter stopped, nil while it has not.
func (m *meter) stopped() error {
	if m == nil {
		return nil
	}
	return m.err
}

// stopCause names why err stopped the work: StoppedBudget, StoppedDeadline
// or StoppedCanceled.
func stopCause(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return StoppedDeadline
	case errors.Is(err, context.Canceled):
		return StoppedCanceled
	}
	return StoppedBudget
}

// matcher is a compiled pattern whose compilation and matches are charged
// to a meter.
type matcher struct {
	pat  string
	re   *regexp.Regexp // nil when the meter had stopped before compiling
	size int64          // instructions in the compiled program
	m    *meter
}

// newMatcher compiles pat (ECMA escapes translated) with its compilation
// and matches charged to m (nil: not charged, not cached). Once m has
// stopped, nothing more is compiled: the matcher returned matches nothing,
// and the work it is part of is discarded anyway.
func newMatcher(pat string, m *meter) (*matcher, error) {
	if m != nil {
		if r, ok := m.patterns[pat]; ok {
			return r, nil
		}
		if m.err != nil {
			return &matcher{pat: pat, m: m}, nil
		}
	}
	re, err := compileECMA(pat)
	if err != nil {
		return nil, err
	}
	r := &matcher{pat: pat, re: re, size: progSize(pat), m: m}
	if m != nil {
		m.step(r.size * compileStepsPerInst)
		m.patterns[pat] = r
	}
	return r, nil
}

// MatchString charges the match, then runs it. Once the meter has stopped
// it answers false without matching; the caller discards what it was
// doing.
func (r *matcher) MatchString(s string) bool {
	if !r.m.step(r.size*int64(len(s)+1)) || r.re == nil {
		return false
	}
	return r.re.MatchString(s)
}

// String returns the source pattern.
func (r *matcher) String() string { return r.pat }

// progSize is the number of instructions of the program Go's engine runs
// for pat (at least 1); the work of one match is at most that many steps
// per byte of input.
func progSize(pat string) int64 {
	re, err := syntax.Parse(translateECMA(pat), syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return int64(max(len(prog.Inst), 1))
}
