package target

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		host string
		want Class
	}{
		// loopback, unspecified, private, link-local
		{"127.0.0.1", Local},
		{"127.8.9.10", Local},
		{"::1", Local},
		{"[::1]", Local},
		{"::ffff:127.0.0.1", Local},
		{"0.0.0.0", Local},
		{"::", Local},
		{"10.1.2.3", Local},
		{"172.16.0.1", Local},
		{"172.31.255.254", Local},
		{"192.168.1.20", Local},
		{"169.254.10.1", Local},
		{"fe80::1%eth0", Local},
		{"fd12:3456:789a::1", Local},
		{"localhost", Local},
		{"LOCALHOST.", Local},
		{"mcp.localhost", Local},
		{"printer.local", Local},
		// public addresses say nothing about their environment
		{"172.32.0.1", Unknown},
		{"8.8.8.8", Unknown},
		{"2001:4860:4860::8888", Unknown},
		{"[2606:4700::1111]", Unknown},
		{"::ffff:8.8.8.8", Unknown},
		{"127.1", Unknown},
		{"0x7f.1", Unknown},
		// names with environment markers
		{"dev.api.acme.com", Dev},
		{"api.dev.acme.com", Dev},
		{"mcp-dev2.acme.io", Dev},
		{"qa.acme.com", Dev},
		{"sandbox.payments.acme.com", Dev},
		{"shop.test", Dev},
		{"api.example", Dev},
		{"staging.acme.com", Staging},
		{"api-staging.acme.com", Staging},
		{"mcp.stg01.acme.io", Staging},
		{"pre-prod.acme.co", Staging},
		{"uat.bank.example.com", Staging},
		{"dev-proxy.prod.acme.com", Production},
		{"mcp.prod.acme.com", Production},
		// public look-alikes must not misfire
		{"backstage.io", Production},
		{"foo.dev", Production},
		{"dev.to", Production},
		{"devops.com", Production},
		{"api.backstage.io", Production},
		{"teststage.example.org", Production},
		{"mcp.acme.com", Production},
		{"acme-staging.com", Production},
		{"cafe.be", Production},
		{"api.githubcopilot.com", Production},
		// private-use or ambiguous
		{"mcp.default.svc.cluster.local", Unknown},
		{"tools.corp.internal", Unknown},
		{"staging.tools.internal", Staging},
		{"mcpserver", Unknown},
		{"dev-box", Dev},
		{"router.home.arpa", Unknown},
		{"", Unknown},
	}
	for _, tc := range tests {
		got := Classify(tc.host)
		if got.Class != tc.want {
			t.Errorf("Classify(%q) = %s (%s), want %s", tc.host, got.Class, got.Reason, tc.want)
		}
		if got.Reason == "" {
			t.Errorf("Classify(%q): no reason", tc.host)
		}
	}
	if len(tests) < 30 {
		t.Fatalf("table has %d hosts", len(tests))
	}
}

func TestClassifyURL(t *testing.T) {
	tests := map[string]Class{
		"http://127.0.0.1:8080/mcp":        Local,
		"https://[::1]:443/mcp":            Local,
		"https://user:pw@mcp.acme.com/mcp": Production,
		"https://staging.acme.com/mcp?x=1": Staging,
		"not a url":                        Unknown,
		"http:///nohost":                   Unknown,
	}
	for u, want := range tests {
		got := ClassifyURL(u)
		if got.Class != want {
			t.Errorf("ClassifyURL(%q) = %s (%s), want %s", u, got.Class, got.Reason, want)
		}
		if strings.Contains(got.Host, "pw") || strings.Contains(got.Reason, "pw") {
			t.Errorf("ClassifyURL(%q) leaks user info: %+v", u, got)
		}
	}
}

func TestParseAndOverride(t *testing.T) {
	for _, k := range Classes {
		got, err := ParseClass(strings.ToUpper(string(k)))
		if err != nil || got != k {
			t.Errorf("ParseClass(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseClass("prod"); err == nil {
		t.Error("ParseClass(prod) accepted")
	}
	c := Classify("mcp.acme.com").Override(Dev)
	if c.Class != Dev || !c.Overridden || !strings.Contains(c.String(), "--target-class") || !strings.Contains(c.Reason, "production") {
		t.Errorf("override: %+v %s", c, c)
	}
	if c := Classify("10.0.0.1").Override(""); c.Overridden {
		t.Errorf("empty override applied: %+v", c)
	}
	for k, want := range map[Class]bool{Local: true, Dev: true, Staging: true, Production: false, Unknown: false} {
		if k.Preproduction() != want {
			t.Errorf("%s.Preproduction() = %v", k, !want)
		}
	}
	if Stdio().Class != Local {
		t.Error("stdio is not local")
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "foo.dev", "[::1]", "a-staging-b.c.d", "0x7f.1", "..", "-", "fe80::1%x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		c := Classify(host)
		if _, err := ParseClass(string(c.Class)); err != nil || c.Reason == "" {
			t.Fatalf("Classify(%q) = %+v", host, c)
		}
		if Classify(strings.ToUpper(host)).Class != c.Class {
			t.Fatalf("Classify(%q) depends on case", host)
		}
	})
}
