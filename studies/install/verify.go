package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/studies"
)

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Install tunes the reinstall (Jobs, Only and NoStore are Verify's).
	Install Options
	// Run tunes the scan (Jobs, Installed and Progress are Verify's).
	Run studies.Options
	// Keep leaves the scratch study directory in place (Verified.Dir).
	Keep bool
}

// Verified is one row reinstalled alone and run again.
type Verified struct {
	// Dir is the scratch study directory (removed unless Keep).
	Dir string
	// Unit is the reinstall (nil for an entry with nothing to install).
	Unit *studies.InstallUnit
	// Row is the row the run gave, Stderr the last lines the server said.
	Row    studies.Row
	Stderr []string
}

// Verify reinstalls the entry name of spec alone, in a scratch study
// directory, and runs it again, so that any label a study gave it can be
// checked: what its project pins (npm's package.json, package-lock.json
// and .npmrc; a PyPI requirements.txt) is copied there, installed into a
// tree of its own (package caches are shared, the store is not), and the
// entry is scanned from there with the study's rules.
func Verify(ctx context.Context, spec *studies.Spec, name string, o VerifyOptions) (*Verified, error) {
	i := slices.IndexFunc(spec.Servers, func(e studies.Entry) bool { return e.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("servers.json has no server %q", name)
	}
	e := spec.Servers[i]
	scratch, err := os.MkdirTemp(o.Install.TempDir, "mcpdrill-verify-")
	if err != nil {
		return nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(scratch)
	}
	if abs, err := filepath.EvalSymlinks(scratch); err == nil {
		scratch = abs
	}
	for _, u := range planInstall(spec, []string{name}) {
		if err := copyPins(spec.Dir, scratch, u); err != nil {
			return nil, err
		}
	}
	alone := &studies.Spec{Dir: scratch, Hash: spec.Hash, Servers: []studies.Entry{e}, Inputs: spec.Inputs}
	v := &Verified{Dir: scratch}
	inst := o.Install
	inst.Jobs, inst.Only, inst.NoStore, inst.Force, inst.Progress = 1, nil, true, true, nil
	if inst.CacheDir == "" {
		inst.CacheDir = filepath.Join(spec.Dir, ".cache")
	}
	log, err := Run(ctx, alone, inst)
	if err != nil {
		return nil, err
	}
	if len(log.Units) > 0 {
		v.Unit = &log.Units[0]
	}
	ro := o.Run
	ro.Jobs, ro.Installed, ro.Progress = 1, log, nil
	res, err := studies.Run(ctx, alone, ro)
	if err != nil {
		return nil, err
	}
	v.Row = res.Servers[0]
	v.Stderr = res.Meta.Servers[name].Stderr
	return v, nil
}

// copyPins copies what unit u installs from (its lockfiles) from the study
// directory to the same place under scratch.
func copyPins(specDir, scratch string, u *unit) error {
	if u.err != nil {
		return nil // the reinstall reports it
	}
	var files []string
	switch u.registry {
	case studies.RegistryNPM:
		for _, f := range []string{"package.json", "package-lock.json", ".npmrc"} {
			files = append(files, filepath.Join(u.dir, f))
		}
	case studies.RegistryPyPI:
		if u.requirements != "" {
			files = append(files, u.requirements)
		}
	}
	for _, f := range files {
		r, err := filepath.Rel(specDir, f)
		if err != nil || strings.HasPrefix(r, "..") {
			return fmt.Errorf("%s is outside the study directory: verify copies only what the study pins", f)
		}
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // the reinstall reports what is missing
		} else if err != nil {
			return err
		}
		dst := filepath.Join(scratch, r)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteVerified writes what Verify found, for a person: the outcome and
// why, the reinstall, the row's status and the server's last words. Text
// the server controls is quoted (Go syntax), never written raw.
func WriteVerified(w io.Writer, name string, v *Verified) error {
	var b strings.Builder
	r := v.Row
	fmt.Fprintf(&b, "%s: %s\n", name, r.Outcome)
	if r.OutcomeWhy != "" {
		fmt.Fprintf(&b, "  why:     %s\n", r.OutcomeWhy)
	}
	if u := v.Unit; u != nil {
		fmt.Fprintf(&b, "  install: %s: %s in %s", u.Key, u.Status, (time.Duration(u.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
		if u.Reason != "" {
			fmt.Fprintf(&b, " (%s)", u.Reason)
		}
		b.WriteString("\n")
		if len(u.ScriptsSkipped) > 0 {
			fmt.Fprintf(&b, "           install scripts not run: %s\n", strings.Join(u.ScriptsSkipped, ", "))
		}
	} else {
		b.WriteString("  install: nothing to install (a bare command, or excluded)\n")
	}
	status := r.Status
	if r.Failure != "" {
		status += " (" + r.Failure + ")"
	}
	fmt.Fprintf(&b, "  status:  %s", status)
	if r.Reason != "" {
		fmt.Fprintf(&b, ": %q", r.Reason)
	}
	b.WriteString("\n")
	if r.Status == studies.StatusScanned {
		fmt.Fprintf(&b, "  tools:   %d\n", len(r.Tools))
	}
	if len(v.Stderr) > 0 {
		b.WriteString("  stderr:\n")
		for _, l := range v.Stderr {
			fmt.Fprintf(&b, "    %q\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
