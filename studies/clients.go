package studies

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/mcpdrill/mcpdrill/clientdrill"
)

// The client study runs `mcpdrill client` over a list of client adapters
// (studies/clients/clients.json) and keeps every observed cell.

// ClientSpec is a client study's list of adapters.
type ClientSpec struct {
	Clients []ClientEntry `json:"clients"`
}

// ClientEntry is one client library and the adapter that drives it.
type ClientEntry struct {
	// Name is the column's name.
	Name string `json:"name"`
	// Package and Version name the library as its registry does.
	Package string `json:"package"`
	Version string `json:"version"`
	// Kind is "library" (the value is what the application gets),
	// "framework" (what the model would be handed) or "proxy".
	Kind string `json:"kind"`
	// Command is the adapter's argv; a first word with a slash is relative
	// to the spec's directory.
	Command []string `json:"command"`
	// Transports the adapter supports (empty: stdio and http).
	Transports []clientdrill.Transport `json:"transports,omitempty"`
	// Note says how the adapter uses the library.
	Note string `json:"note,omitempty"`
}

// ReadClientSpec reads and checks a client study's spec.
func ReadClientSpec(path string) (*ClientSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("studies: %w", err)
	}
	var s ClientSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("studies: %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, c := range s.Clients {
		switch {
		case c.Name == "" || len(c.Command) == 0:
			return nil, fmt.Errorf("studies: %s: client %d needs a name and a command", path, i+1)
		case seen[c.Name]:
			return nil, fmt.Errorf("studies: %s: client %q is listed twice", path, c.Name)
		}
		for _, t := range c.Transports {
			if t != clientdrill.Stdio && t != clientdrill.HTTP {
				return nil, fmt.Errorf("studies: %s: client %q: unknown transport %q", path, c.Name, t)
			}
		}
		seen[c.Name] = true
	}
	return &s, nil
}

// ClientResults is results.json of a client study.
type ClientResults struct {
	SchemaVersion int         `json:"schema_version"`
	Meta          ClientMeta  `json:"meta"`
	Scenarios     []string    `json:"scenarios"`
	Clients       []ClientRow `json:"clients"`
}

// ClientMeta describes the run.
type ClientMeta struct {
	Seed      uint64 `json:"seed"`
	TimeoutMS int64  `json:"timeout_ms"`
	Revision  string `json:"revision"`
}

// ClientRow is one client's drill: every cell it was observed in, or why
// it could not be drilled.
type ClientRow struct {
	ClientEntry
	Results []clientdrill.Result `json:"results"`
	Error   string               `json:"error,omitempty"`
}

// Cell returns the result of a scenario over a transport, if observed.
func (r ClientRow) Cell(scenario string, t clientdrill.Transport) (clientdrill.Result, bool) {
	for _, x := range r.Results {
		if x.Scenario == scenario && x.Transport == t {
			return x, true
		}
	}
	return clientdrill.Result{}, false
}

// ClientRunOptions configures a client study run.
type ClientRunOptions struct {
	// Dir is the spec's directory: adapters' relative commands start there.
	Dir string
	// ServerArgv starts `mcpdrill client-server`.
	ServerArgv []string
	Seed       uint64
	// Jobs drills at most this many clients at once (at least 1).
	Jobs int
	// Only, when set, names the clients to drill.
	Only []string
	// Progress, when set, is called after each client.
	Progress func(ClientRow)
}

// RunClients drills every client of the spec; a client that cannot be
// drilled is a row with its error.
func RunClients(ctx context.Context, s *ClientSpec, o ClientRunOptions) (*ClientResults, error) {
	res := &ClientResults{SchemaVersion: 1, Meta: ClientMeta{Seed: o.Seed, TimeoutMS: clientdrill.DefaultTimeout.Milliseconds(), Revision: clientdrill.PreferredRevision}}
	for _, sc := range clientdrill.Catalogue() {
		res.Scenarios = append(res.Scenarios, sc.ID)
	}
	var entries []ClientEntry
	for _, c := range s.Clients {
		if len(o.Only) == 0 || slices.Contains(o.Only, c.Name) {
			entries = append(entries, c)
		}
	}
	for _, name := range o.Only {
		if !slices.ContainsFunc(entries, func(c ClientEntry) bool { return c.Name == name }) {
			return nil, fmt.Errorf("studies: no client %q in the spec", name)
		}
	}
	rows := make([]ClientRow, len(entries))
	sem := make(chan struct{}, max(o.Jobs, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, c := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			argv := slices.Clone(c.Command)
			if filepath.Base(argv[0]) != argv[0] && !filepath.IsAbs(argv[0]) {
				argv[0] = filepath.Join(o.Dir, argv[0])
			}
			rep, err := clientdrill.Run(ctx, clientdrill.Options{Command: argv, Dir: o.Dir, ServerArgv: o.ServerArgv,
				Seed: o.Seed, Transports: c.Transports})
			row := ClientRow{ClientEntry: c, Results: []clientdrill.Result{}}
			if err != nil {
				row.Error = err.Error()
			} else {
				row.Results = rep.Results
			}
			rows[i] = row
			if o.Progress != nil {
				mu.Lock()
				o.Progress(row)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	res.Clients = rows
	return res, nil
}

// ReadClientResults reads a client study's results.json.
func ReadClientResults(path string) (*ClientResults, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("studies: %w", err)
	}
	var r ClientResults
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("studies: %s: %w", path, err)
	}
	if r.SchemaVersion != 1 {
		return nil, fmt.Errorf("studies: %s: schema_version %d, want 1", path, r.SchemaVersion)
	}
	return &r, nil
}
