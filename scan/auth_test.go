package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// Secret header values used by the fixtures; no report may contain them.
const (
	secretToken = "tok-SECRET-4f9a1c"
	secretKey   = "key-SECRET-77b2e0"
)

// authFixture serves the good testbed profile behind an auth middleware.
type authFixture struct {
	url       string
	anonymous atomic.Int64 // requests that reached the MCP endpoint without the token
	metadata  atomic.Int64 // metadata GETs
	leaked    atomic.Int64 // metadata GETs that carried a configured header
}

// newAuthFixture starts a server in one of the postures:
//
//	open     no authentication
//	bearer   401 + "WWW-Authenticate: Bearer resource_metadata=…" without the
//	         token, and a protected-resource-metadata document
//	bare401  401 without WWW-Authenticate, no metadata
//	fail500  500 for any request without the token
func newAuthFixture(t *testing.T, mode string) *authFixture {
	t.Helper()
	h, err := testbed.NewHandler(testbed.Options{Profile: "good", Reply: "json"})
	if err != nil {
		t.Fatal(err)
	}
	f := &authFixture{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		f.metadata.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			f.leaked.Add(1)
		}
		if mode != "bearer" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://auth.example.com"],"scopes_supported":["tools"]}`, f.url)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+secretToken || mode == "open" {
			h.ServeHTTP(w, r)
			return
		}
		f.anonymous.Add(1)
		switch mode {
		case "bearer":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s", scope="tools", error="invalid_token"`,
				strings.Replace(f.url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		case "bare401":
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL + testbed.PathMCP
	return f
}

func withCreds(cfg mcp.Config) mcp.Config {
	cfg.Headers = http.Header{"Authorization": {"Bearer " + secretToken}, "X-Api-Key": {secretKey}}
	return cfg
}

func authFindings(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		if strings.HasPrefix(f.Rule, "MCP-AUTH-") {
			out = append(out, string(f.Severity)+" "+f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

func scanWith(t *testing.T, cfg mcp.Config, o Options) *Report {
	t.Helper()
	o.ToolVersion, o.Deadline, o.SkipSecondConnection = "test", testutil.Hang, true
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = testutil.Hang
	}
	rep, err := Run(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAuthPostures(t *testing.T) {
	closed := func() string {
		return "http://" + testutil.FreeAddr(t) + "/mcp"
	}
	tests := []struct {
		name, mode string
		creds      bool
		skip       bool
		want       []string
		verdict    string
		source     string
		outcome    string
		status     int
	}{
		{"open, no credentials", "open", false, false, []string{"info MCP-AUTH-ANONYMOUS-LIST"}, target.VerdictAnonymous, target.SourcePrimary, target.OutcomeListed, 0},
		{"open, credentials ignored", "open", true, false, []string{"info MCP-AUTH-ANONYMOUS-LIST"}, target.VerdictAnonymous, target.SourceProbe, target.OutcomeListed, 0},
		{"bearer with a challenge", "bearer", true, false, []string{"info MCP-AUTH-ENFORCED"}, target.VerdictEnforced, target.SourceProbe, target.OutcomeRefused, 401},
		{"bearer, no credentials", "bearer", false, false, []string{"info MCP-AUTH-ENFORCED"}, target.VerdictEnforced, target.SourcePrimary, target.OutcomeRefused, 401},
		{"401 without WWW-Authenticate", "bare401", true, false, []string{"info MCP-AUTH-ENFORCED", "warn MCP-AUTH-METADATA-MISSING", "warn MCP-AUTH-NO-CHALLENGE"}, target.VerdictEnforced, target.SourceProbe, target.OutcomeRefused, 401},
		{"500 on anonymous", "fail500", true, false, []string{"warn MCP-AUTH-INDETERMINATE"}, target.VerdictIndeterminate, target.SourceProbe, target.OutcomeFailed, 500},
		{"probe skipped", "bearer", true, true, nil, target.VerdictNotEstablished, target.SourceSkipped, target.OutcomeNotRun, 0},
		{"unreachable", "", false, false, []string{"warn MCP-AUTH-INDETERMINATE"}, target.VerdictIndeterminate, target.SourcePrimary, target.OutcomeFailed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var f *authFixture
			cfg := mcp.Config{RequestTimeout: testutil.Hang}
			if tc.mode == "" {
				cfg.URL = closed()
			} else {
				f = newAuthFixture(t, tc.mode)
				cfg.URL = f.url
			}
			if tc.creds {
				cfg = withCreds(cfg)
			}
			rep := scanWith(t, cfg, Options{SkipAuthProbe: tc.skip})
			if got := authFindings(rep.Findings); !slices.Equal(got, tc.want) {
				t.Errorf("auth findings %v, want %v", got, tc.want)
			}
			p := rep.AuthPosture
			if p == nil {
				t.Fatal("no auth_posture")
			}
			if p.Verdict != tc.verdict || p.Anonymous.Source != tc.source || p.Anonymous.Outcome != tc.outcome || p.Anonymous.HTTPStatus != tc.status {
				t.Errorf("posture %+v", p)
			}
			if p.AuthorizationPresented != tc.creds || (tc.creds && !slices.Equal(p.HeaderNames, []string{"Authorization", "X-Api-Key"})) {
				t.Errorf("presented %v, names %v", p.AuthorizationPresented, p.HeaderNames)
			}
			if p.Target.Class != target.Local {
				t.Errorf("class %+v", p.Target)
			}
			for _, fd := range rep.Findings {
				if strings.HasPrefix(fd.Rule, "MCP-AUTH-") && !strings.Contains(fd.Evidence, "target class local") {
					t.Errorf("%s does not name the class: %q", fd.Rule, fd.Evidence)
				}
			}
			if f != nil && f.leaked.Load() != 0 {
				t.Errorf("a configured header was sent to the metadata document")
			}
			if f != nil && tc.creds && tc.skip && f.anonymous.Load() != 0 {
				t.Errorf("--skip-auth-probe still sent %d anonymous request(s)", f.anonymous.Load())
			}
			b, _ := json.Marshal(rep)
			if strings.Contains(string(b), secretToken) || strings.Contains(string(b), secretKey) {
				t.Errorf("a header value reached the report")
			}
		})
	}
}

func TestAuthChallengeAndMetadata(t *testing.T) {
	f := newAuthFixture(t, "bearer")
	rep := scanWith(t, withCreds(mcp.Config{URL: f.url}), Options{})
	p := rep.AuthPosture
	if p.Challenge == nil || !p.Challenge.Present || !p.Challenge.ResourceMetadata || !p.Challenge.Scope || p.Challenge.Error != "invalid_token" ||
		!slices.Equal(p.Challenge.Schemes, []string{"Bearer"}) {
		t.Errorf("challenge %+v", p.Challenge)
	}
	md := p.ResourceMetadata
	if md == nil || !md.Found || md.Source != "header" || md.AuthorizationServers != 1 || md.ResourceMatches == nil || !*md.ResourceMatches {
		t.Fatalf("metadata %+v", md)
	}
	if p.Origin == nil || p.Origin.Outcome != target.OutcomeRefused || !p.Origin.Required {
		t.Errorf("origin %+v", p.Origin)
	}
}

// TestAuthGradedByClass dials the loopback fixture under public host names
// (the transport ignores the host), so the classifier sees a production
// or staging name.
func TestAuthGradedByClass(t *testing.T) {
	f := newAuthFixture(t, "open")
	addr := strings.TrimPrefix(strings.TrimSuffix(f.url, "/mcp"), "http://")
	dial := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	tests := []struct {
		url   string
		class target.Class
		creds bool
		want  []string
	}{
		{"http://mcp.acme.com/mcp", "", false, []string{"error MCP-AUTH-ANONYMOUS-LIST", "warn MCP-AUTH-PLAINTEXT-TRANSPORT"}},
		{"http://mcp.acme.com/mcp", "", true, []string{"error MCP-AUTH-ANONYMOUS-LIST", "error MCP-AUTH-PLAINTEXT-TRANSPORT"}},
		{"http://staging.acme.com/mcp", "", false, []string{"warn MCP-AUTH-ANONYMOUS-LIST", "warn MCP-AUTH-PLAINTEXT-TRANSPORT"}},
		{"http://mcp.acme.com/mcp", target.Local, false, []string{"info MCP-AUTH-ANONYMOUS-LIST"}},
		{"http://127.0.0.1/mcp", target.Production, false, []string{"error MCP-AUTH-ANONYMOUS-LIST", "warn MCP-AUTH-PLAINTEXT-TRANSPORT"}},
	}
	for _, tc := range tests {
		cfg := mcp.Config{URL: tc.url, HTTPClient: dial}
		if tc.creds {
			cfg = withCreds(cfg)
		}
		rep := scanWith(t, cfg, Options{TargetClass: tc.class, SkipOriginCheck: true})
		if got := authFindings(rep.Findings); !slices.Equal(got, tc.want) {
			t.Errorf("%s (class %q): %v, want %v", tc.url, tc.class, got, tc.want)
		}
		want := string(rep.AuthPosture.Target.Class)
		for _, fd := range rep.Findings {
			if strings.HasPrefix(fd.Rule, "MCP-AUTH-") && !strings.Contains(fd.Evidence, "target class "+want) {
				t.Errorf("%s: evidence %q does not name class %s", fd.Rule, fd.Evidence, want)
			}
		}
	}
}

func TestStdioHasNoAuthPosture(t *testing.T) {
	rep := scanWith(t, stdioConfig(t, testbed.Options{Profile: "good"}), Options{})
	if rep.AuthPosture != nil || len(authFindings(rep.Findings)) != 0 {
		t.Errorf("stdio posture %+v", rep.AuthPosture)
	}
}

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`Bearer resource_metadata="https://a/b", scope="x y"`, `Bearer{resource_metadata=https://a/b scope=x y}`},
		{`Basic realm="r", Bearer error="insufficient_scope"`, `Basic{realm=r} Bearer{error=insufficient_scope}`},
		{`Negotiate abc123==, Bearer`, `Negotiate{} Bearer{}`},
		{`Bearer realm="a \"q\" b"`, `Bearer{realm=a "q" b}`},
		{`Bearer Realm=x, REALM=y`, `Bearer{realm=x}`},
		{``, ``},
		{`, ,`, ``},
		{`="x"`, ``},
	}
	for _, tc := range tests {
		var parts []string
		for _, c := range ParseChallenges(tc.in) {
			var ps []string
			for k, v := range c.Params {
				ps = append(ps, k+"="+v)
			}
			slices.Sort(ps)
			parts = append(parts, c.Scheme+"{"+strings.Join(ps, " ")+"}")
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("ParseChallenges(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer resource_metadata="https://a/b"`, `Basic abc==, Bearer x=1`, `"`, `a="\`, `a b=c=d, e`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := ParseChallenges(s)
		if len(cs) > maxChallenges {
			t.Fatalf("%d challenges", len(cs))
		}
		for _, c := range cs {
			if c.Scheme == "" || len(c.Params) > maxChallenges {
				t.Fatalf("bad challenge %+v", c)
			}
		}
	})
}
