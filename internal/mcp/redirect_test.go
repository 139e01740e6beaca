package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHTTPCrossOriginRedirectSendsNothing: a 307 to another port of the
// same host is not followed; the second server receives nothing.
func TestHTTPCrossOriginRedirectSendsNothing(t *testing.T) {
	var hits, withAuth atomic.Int32
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			withAuth.Add(1)
		}
		(&httpFake{}).ServeHTTP(w, r)
	}))
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/mcp?token=Q", http.StatusTemporaryRedirect)
	}))
	defer a.Close()
	c, err := Connect(context.Background(), httpCfg(a.URL))
	if err == nil {
		c.Close()
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect target received %d request(s), %d with Authorization", n, withAuth.Load())
	}
	var re *RedirectError
	if !errors.As(err, &re) || re.Status != http.StatusTemporaryRedirect || re.Target != HostSameHost || re.Followed {
		t.Fatalf("err = %v, want a refused 307 to the same host", err)
	}
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("a refused redirect does not read as unreachable: %v", err)
	}
	if strings.Contains(err.Error(), "token") || strings.Contains(err.Error(), b.URL) {
		t.Errorf("error carries the redirect URL: %v", err)
	}
}

// TestHTTPSameOriginRedirect: a redirect within the origin is followed with
// the headers and body, and recorded; a chain longer than MaxRedirects is not.
func TestHTTPSameOriginRedirect(t *testing.T) {
	f := &httpFake{}
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
	})
	mux.Handle("/mcp", f)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := connect(t, httpCfg(srv.URL+"/old"))
	if l, err := c.ListTools(context.Background()); err != nil || len(l.Tools) != 2 {
		t.Fatalf("list = %+v %v", l, err)
	}
	c.Close()
	f.check(t) // the user's header reached the redirect target
	o, ok := hasObs(c, ObsRedirectFollowed)
	if !ok || !strings.Contains(o.Detail, "HTTP 307") {
		t.Fatalf("same-origin redirect not recorded: %+v", c.Observations())
	}

	_, err := Connect(context.Background(), httpCfg(srv.URL+"/loop"))
	var re *RedirectError
	if !errors.As(err, &re) || re.Target != HostSameOrigin || re.Kind() != ObsRedirectLimit {
		t.Fatalf("redirect loop: err = %v", err)
	}
}

func TestClassifyRedirect(t *testing.T) {
	from, _ := url.Parse("http://127.0.0.1:8080/mcp")
	tests := []struct {
		to   string
		want HostClass
	}{
		{"http://127.0.0.1:8080/other", HostSameOrigin},
		{"HTTP://127.0.0.1:8080/other", HostSameOrigin},
		{"http://127.0.0.1:9090/mcp", HostSameHost},
		{"https://127.0.0.1:8080/mcp", HostSameHost},
		{"http://127.0.0.2:8080/mcp", HostLoopback},
		{"http://localhost:8080/mcp", HostLoopback},
		{"http://[::1]:8080/mcp", HostLoopback},
		{"http://10.1.2.3/mcp", HostPrivate},
		{"http://[fe80::1%25eth0]/mcp", HostPrivate},
		{"http://[::ffff:192.168.0.1]/mcp", HostPrivate},
		{"http://8.8.8.8/mcp", HostPublic},
		{"https://evil.example.com/mcp", HostNamed},
		{"ftp://127.0.0.1:8080/mcp", HostNotHTTP},
	}
	for _, tc := range tests {
		to, err := url.Parse(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if got := classifyRedirect(from, to); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.to, got, tc.want)
		}
	}
	d, _ := url.Parse("http://h/mcp")
	p, _ := url.Parse("http://h:80/x")
	if classifyRedirect(d, p) != HostSameOrigin {
		t.Error("an explicit default port is another origin")
	}
}
