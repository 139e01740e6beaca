package scan

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// witness is a second server on another port that counts what reaches it.
type witness struct {
	hits, withAuth atomic.Int32
	srv            *httptest.Server
}

func newWitness(t *testing.T) *witness {
	t.Helper()
	w := &witness{}
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			w.withAuth.Add(1)
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func httpConfigURL(u string) mcp.Config {
	return mcp.Config{URL: u, RequestTimeout: testutil.Hang}
}

func redirectFindings(r *Report) []report.Finding {
	var out []report.Finding
	for _, f := range r.Findings {
		if f.Rule == "MCP-AUTH-REDIRECT" {
			out = append(out, f)
		}
	}
	return out
}

// TestScanRefusesCrossOriginRedirect is F7 of issue 21: a 307 to another
// port of the same host must not carry the configured headers or the body
// there, and the scan must say so.
func TestScanRefusesCrossOriginRedirect(t *testing.T) {
	w := newWitness(t)
	a := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, w.srv.URL+testbed.PathMCP+"?api_key=Q", http.StatusTemporaryRedirect)
	}))
	defer a.Close()
	cfg := withCreds(httpConfigURL(a.URL + testbed.PathMCP))
	r := runScan(t, cfg)
	if n := w.hits.Load(); n != 0 {
		t.Errorf("the redirect target received %d request(s) (%d with Authorization)", n, w.withAuth.Load())
	}
	fs := redirectFindings(r)
	if len(fs) == 0 {
		t.Fatalf("no MCP-AUTH-REDIRECT finding: %+v", r.Findings)
	}
	for _, f := range fs {
		if !strings.Contains(f.Message, "HTTP 307") || !strings.Contains(f.Message, "same host") {
			t.Errorf("finding does not name the status and host class: %+v", f)
		}
		if strings.Contains(f.Message, "api_key") || strings.Contains(f.Message, w.srv.URL) {
			t.Errorf("finding carries the redirect URL: %+v", f)
		}
		if f.Severity != report.SeverityError {
			t.Errorf("with credentials configured the finding is an error: %+v", f)
		}
	}
	for _, f := range r.Findings {
		t.Logf("%s %s %s", f.Rule, f.Severity, f.Message)
	}
	if r.Established {
		t.Error("a scan whose endpoint redirected away claims an inventory")
	}
}

// TestScanRecordsSameOriginRedirect: a redirect within the origin is
// followed and the report says so.
func TestScanRecordsSameOriginRedirect(t *testing.T) {
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, testbed.PathMCP, http.StatusTemporaryRedirect)
	})
	mux.Handle("/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := runScan(t, withCreds(httpConfigURL(srv.URL+"/old")))
	if !r.Established {
		t.Fatalf("not established through a same-origin redirect: %+v", r.Findings)
	}
	fs := redirectFindings(r)
	if len(fs) != 1 || fs[0].Severity != report.SeverityInfo || !strings.Contains(fs[0].Message, "HTTP 307") || !strings.Contains(fs[0].Message, "followed") {
		t.Fatalf("same-origin redirect not recorded once as info: %+v", fs)
	}
}
