package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpdrill/mcpdrill/"

// allowed lists, per package, every project package it may depend on,
// directly or not. Anything else is a layering violation.
var allowed = map[string][]string{
	"report":                 {"internal/jsonvalue", "internal/safetext"},
	"internal/jsonrpc":       {},
	"internal/pipes":         {},
	"internal/reap":          {},
	"internal/reap/reaptest": {},
	"internal/redact":        {},
	"internal/jsonvalue":     {"internal/safetext"},
	"internal/safetext":      {},
	"internal/strwalk":       {},
	"internal/jsonschema":    {"internal/jsonvalue", "internal/safetext", "internal/splitmix"},
	"internal/splitmix":      {},
	"internal/target":        {},
	"internal/inputfile":     {},
	"internal/clientconfig":  {"internal/jsonvalue", "internal/redact", "internal/safetext"},
	"internal/outfile":       {},
	"internal/testbed":       {"internal/jsonrpc", "internal/splitmix", "internal/target"},
	"internal/mcp":           {"internal/jsonrpc", "internal/jsonvalue", "internal/safetext", "internal/pipes", "internal/reap"},
	"internal/telemetry":     {"internal/jsonrpc"},
	"faults":                 {"internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix"},
	"drift":                  {"internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix", "internal/target", "internal/telemetry", "report"},
	"guard":                  {"drift", "internal/inputfile", "internal/outfile", "internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix", "internal/target", "internal/telemetry", "report"},
	"proxy":                  {"faults", "internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix"},
	// Guard mode is an interceptor the proxy is given: it does not know
	// the proxy's relays, and the proxy does not know the guard.
	"guard/intercept": {"drift", "faults", "guard", "internal/inputfile", "internal/outfile", "internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix", "internal/target", "internal/telemetry", "report"},
	"scan/provider":   {"internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix"},
	"scan":            {"scan/provider", "faults", "internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix", "internal/target", "internal/telemetry", "report"},
	"clientdrill":     {"faults", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/reap", "internal/safetext", "internal/splitmix", "internal/target", "report"},
	// The study's core (spec, run, shard, results, aggregate) and its
	// rooms: proc runs other people's programs, install installs them,
	// registry imports a registry list; the rooms build on the core, never
	// the other way, and proc on nothing of the study's.
	"studies/proc":                   {"internal/reap"},
	"studies":                        {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies/proc"},
	"studies/install":                {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies", "studies/proc"},
	"studies/population":             {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies", "studies/install", "studies/proc"},
	"studies/registry":               {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies", "studies/proc"},
	"studies/pages":                  {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies", "studies/proc"},
	"studies/versiondrift":           {"clientdrill", "drift", "faults", "internal/clientconfig", "internal/jsonrpc", "internal/jsonschema", "internal/jsonvalue", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/safetext", "internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "report", "scan", "scan/provider", "studies", "studies/proc"},
	"mcpserve":                       {"drift", "faults", "internal/clientconfig", "internal/inputfile", "internal/jsonrpc", "internal/mcp", "internal/pipes", "internal/reap", "internal/redact", "internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix", "internal/target", "internal/telemetry", "report", "scan", "scan/provider"},
	"internal/mcptest/sdkserver":     {},
	"internal/mcptest/relay":         {"internal/pipes"},
	"internal/mcptest/memnet":        {},
	"internal/mcptest/testutil":      {},
	"internal/mcptest/hostile":       {},
	"internal/mcptest/testbedserver": {"internal/jsonrpc", "internal/splitmix", "internal/target", "internal/testbed"},
	"internal/mcptest/schemapair":    {"internal/jsonschema", "internal/jsonvalue", "internal/safetext", "internal/splitmix"},
	// The CLI may use every product package, and no test-only one (see
	// TestReleaseBinaryHasNoTestFixtures).
	"cmd/mcpdrill": {"clientdrill", "drift", "faults", "guard", "guard/intercept", "internal/clientconfig", "internal/inputfile", "internal/jsonrpc",
		"internal/mcp", "internal/outfile", "internal/pipes", "internal/reap", "internal/redact", "internal/jsonschema", "internal/jsonvalue", "internal/safetext",
		"internal/splitmix", "internal/strwalk", "internal/target", "internal/telemetry", "internal/testbed", "mcpserve", "proxy", "report", "scan", "scan/provider", "studies", "studies/install", "studies/pages", "studies/proc", "studies/registry", "studies/versiondrift"},
}

// TestEveryPackageIsLayered: a package missing from allowed would escape
// the check.
func TestEveryPackageIsLayered(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, module)
		if _, ok := allowed[rel]; !ok && rel != "internal/layering" {
			t.Errorf("package %s is not in the layering table", rel)
		}
	}
}

func TestImportsGoOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, inProject := strings.CutPrefix(dep, module)
			if !inProject || rel == pkg {
				continue
			}
			if !slices.Contains(ok, rel) {
				t.Errorf("%s depends on %s, which it may not", pkg, rel)
			}
		}
	}
}

// TestScanAndProxyAreIndependent is the rule DESIGN.md states outright.
func TestScanAndProxyAreIndependent(t *testing.T) {
	if slices.Contains(allowed["scan"], "proxy") || slices.Contains(allowed["proxy"], "scan") {
		t.Fatal("the table allows scan and proxy to import each other")
	}
}

// TestReleaseBinaryHasNoTestFixtures: the mcpdrill binary links no test
// fixture, no test helper and not the official Go SDK (which only the
// fixtures and the tests use).
func TestReleaseBinaryHasNoTestFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"cmd/mcpdrill").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk") ||
			strings.HasPrefix(dep, module+"internal/mcptest") || strings.HasPrefix(dep, module+"internal/mcptest/testutil") ||
			strings.HasSuffix(dep, "/reaptest") {
			t.Errorf("the release binary links %s", dep)
		}
	}
}
