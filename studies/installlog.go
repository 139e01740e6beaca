package studies

import (
	"encoding/json"
	"fmt"
	"os"
)

// InstallLogName is the install log study install writes beside
// servers.json and study run reads from there.
const InstallLogName = "install-log.json"

// Install statuses of a unit and of a server.
const (
	InstallOK     = "installed"
	InstallFailed = "failed"
)

// InstallLog is what study install did: one unit per install command, and
// per server the unit that installed it. study run turns a failed install
// into a failed row (failure "install") and records the install time apart
// from the scan's.
type InstallLog struct {
	SpecHash   string        `json:"spec_hash"`
	StartedAt  string        `json:"started_at"`
	FinishedAt string        `json:"finished_at"`
	DurationMS int64         `json:"duration_ms"`
	Jobs       int           `json:"jobs"`
	Units      []InstallUnit `json:"units"`
	// Servers maps each entry installed (or tried) to its outcome.
	Servers map[string]InstallRecord `json:"servers"`
}

// InstallUnit is one install command: an npm project directory (npm ci), a
// Go binary (go install), a venv (pip install) or an image (docker pull).
type InstallUnit struct {
	Key      string   `json:"key"`
	Registry string   `json:"registry"`
	Servers  []string `json:"servers"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	// DurationMS is the unit's wall time.
	DurationMS int64 `json:"duration_ms"`
	// Reused: an earlier install of the same lockfile was kept (npm).
	Reused bool `json:"reused,omitempty"`
	// Fallback says how a unit was installed when its first command
	// refused (npm install where npm ci found the lockfile out of sync).
	Fallback string `json:"fallback,omitempty"`
	// Output is the tail of what the commands printed, on failure.
	Output []string `json:"output,omitempty"`
	// Missing says, by server, why a unit that installed did not leave
	// that server's command executable (the server's install failed).
	Missing map[string]string `json:"missing,omitempty"`
	// ScriptsSkipped are the packages of the unit's tree that declare an
	// install script the install did not run (npm, scripts off).
	ScriptsSkipped []string `json:"scripts_skipped,omitempty"`
	// Files counts the tree's files and SavedBytes what the store saved
	// by linking those it already held (npm).
	Files      int   `json:"files,omitempty"`
	SavedBytes int64 `json:"saved_bytes,omitempty"`
}

// InstallRecord is one server's install outcome.
type InstallRecord struct {
	Package string `json:"package"`
	Unit    string `json:"unit"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	// InstallMS is the wall time of its unit (shared by the unit's servers).
	InstallMS int64 `json:"install_ms"`
	// ScriptsSkipped are the packages of its tree that declare an install
	// script, which the install did not run (npm, scripts off).
	ScriptsSkipped []string `json:"scripts_skipped,omitempty"`
}

// ReadInstallLog reads an install log.
func ReadInstallLog(path string) (*InstallLog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var l InstallLog
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &l, nil
}

// WriteInstallLog writes l as indented JSON.
func WriteInstallLog(path string, l *InstallLog) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Record returns the install outcome of e, if the log has one for its
// package as servers.json pins it now.
func (l *InstallLog) Record(e Entry) (InstallRecord, bool) {
	if l == nil {
		return InstallRecord{}, false
	}
	r, ok := l.Servers[e.Name]
	if !ok || r.Package != e.Package {
		return InstallRecord{}, false
	}
	return r, true
}
