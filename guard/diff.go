package guard

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// ErrLiveIncomplete is returned by Diff when the live listing did not give
// the whole tool set (a page cap, or entries that could not be read): a
// diff against part of a set would report tools as removed that are not.
var ErrLiveIncomplete = errors.New("the live tool set is incomplete")

// DiffReport compares a server's approved baseline with a current set: its
// last-seen set, or what the server lists live.
type DiffReport struct {
	Server string `json:"server"`
	Status string `json:"status"`
	// Against is "last-seen" or "live".
	Against string `json:"against"`
	// Baseline and Current are the two sets' fingerprints (Baseline empty
	// when nothing is approved).
	Baseline string         `json:"baseline,omitempty"`
	Current  string         `json:"current"`
	Changes  []drift.Change `json:"changes"`
	// BaselineTools and CurrentTools are the two sets, for the caller's
	// rendering; not in the JSON.
	BaselineTools []mcp.Tool `json:"-"`
	CurrentTools  []mcp.Tool `json:"-"`
}

// Diff compares r's approved baseline with its last-seen set, or, when live
// is not nil, with what the server it configures lists now.
func Diff(ctx context.Context, server string, r *Record, live *mcp.Config) (*DiffReport, error) {
	rep := &DiffReport{Server: server, Status: r.Status.String(), Against: "last-seen"}
	var err error
	if live != nil {
		obs, err := drift.Observe(ctx, *live)
		if err != nil {
			return nil, err
		}
		if obs.Capped {
			return nil, fmt.Errorf("%w: the live tools/list stopped before its end (page cap)", ErrLiveIncomplete)
		}
		if len(obs.Unreadable) > 0 {
			u := obs.Unreadable[0]
			name := "unnamed"
			if u.Name != "" {
				name = strconv.Quote(u.Name)
			}
			return nil, fmt.Errorf("%w: %d of the live tool entries could not be read (the first, %s: %s)", ErrLiveIncomplete, len(obs.Unreadable), name, u.Reason)
		}
		rep.CurrentTools, rep.Against = obs.Tools, "live"
	} else {
		if r.LastSeen == nil {
			return nil, fmt.Errorf("%w: %q", ErrNothingToApprove, server)
		}
		if rep.CurrentTools, err = r.LastSeen.Parse(); err != nil {
			return nil, fmt.Errorf("%w: last-seen set: %w", ErrCorrupt, err)
		}
	}
	rep.Current = drift.Fingerprint(rep.CurrentTools)
	if r.Baseline != nil {
		rep.Baseline = r.Baseline.Fingerprint
		if rep.BaselineTools, err = r.Baseline.Parse(); err != nil {
			return nil, fmt.Errorf("%w: baseline: %w", ErrCorrupt, err)
		}
	}
	rep.Changes = drift.Diff(rep.BaselineTools, rep.CurrentTools)
	if rep.Changes == nil {
		rep.Changes = []drift.Change{}
	}
	return rep, nil
}
