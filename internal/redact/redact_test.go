package redact

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:3000/mcp", "http://127.0.0.1:3000/mcp"},
		{"https://user:pw@example.com/mcp", "https://example.com/mcp"},
		{"https://tokenonly@example.com/mcp", "https://example.com/mcp"},
		{"http://h/mcp?api_key=Q&region=eu", "http://h/mcp?api_key=REDACTED&region=REDACTED"},
		{"http://h/mcp?bare-token", "http://h/mcp?REDACTED"},
		{"http://h/mcp?a=1&&b=", "http://h/mcp?a=REDACTED&&b=REDACTED"},
		{"http://u:p@h:8080/mcp?k=v#frag", "http://h:8080/mcp?k=REDACTED"},
		{"http://h/mcp#access_token=x", "http://h/mcp"},
		{"/usr/bin/server", "/usr/bin/server"},
		{"", ""},
		// Not parsable: cut by hand.
		{"http://127.0.0.1:${PORT}/mcp", "http://127.0.0.1:${PORT}/mcp"},
		{"http://127.0.0.1:${PORT}/mcp?key=${KEY}#f", "http://127.0.0.1:${PORT}/mcp?key=REDACTED"},
		{"http://${USER}:${PASS}@127.0.0.1:${PORT}/mcp", "http://127.0.0.1:${PORT}/mcp"},
		{"http://u:p/w@h/mcp", "http://h/mcp"}, // a password holding '/', '?' or '#'
		{"http://u:p#w@h/mcp?k=v", "http://h/mcp?k=REDACTED"},
		{"mailto:%zz@x", "REDACTED"},
		{"http://u:p?w@h/mcp", "http://h/mcp"},
		// Opaque forms that hold an '@'.
		{"user:pw@host:8080", "REDACTED"},
		{"redis:u:pw@host", "REDACTED"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURLError(t *testing.T) {
	//lint:ignore SA1007 the URL is invalid on purpose: the test needs the parse error
	_, err := url.Parse("http://u:SECRET@h:port/mcp?k=Q")
	if err == nil {
		t.Fatal("no parse error")
	}
	got := URLError(err)
	if s := got.Error(); strings.Contains(s, "SECRET") || strings.Contains(s, "=Q") || !strings.Contains(s, "invalid port") {
		t.Errorf("URLError: %q", s)
	}
	var ue *url.Error
	if !errors.As(got, &ue) || ue.Err != err.(*url.Error).Err {
		t.Errorf("URLError lost the cause: %#v", got)
	}
	plain := errors.New("x")
	if URLError(plain) != plain || URLError(nil) != nil {
		t.Error("URLError changed an error that is not a *url.Error")
	}
}

func TestSecretName(t *testing.T) {
	for _, name := range []string{"token", "--api-key", "GITHUB_TOKEN", "Authorization", "password", "PASSWD", "db_pass",
		"client-secret", "X-Session-Id", "cookie", "bearer", "aws_credentials", "private-key-file"} {
		if !SecretName(name) {
			t.Errorf("SecretName(%q) = false", name)
		}
	}
	for _, name := range []string{"port", "verbose", "url", "region", "dir", "Content-Type", ""} {
		if SecretName(name) {
			t.Errorf("SecretName(%q) = true", name)
		}
	}
}

func TestArgv(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"server"}, []string{"server"}},
		{[]string{"/usr/bin/srv", "--port", "8080", "/tmp"}, []string{"/usr/bin/srv", "--port", "8080", "/tmp"}},
		{[]string{"srv", "--token", "T0K"}, []string{"srv", "--token", Mask}},
		{[]string{"srv", "-api-key", "K"}, []string{"srv", "-api-key", Mask}},
		{[]string{"srv", "--Password", "P", "x"}, []string{"srv", "--Password", Mask, "x"}},
		{[]string{"srv", "--secret=S", "--port=1"}, []string{"srv", "--secret=" + Mask, "--port=1"}},
		{[]string{"srv", "--token", "--verbose"}, []string{"srv", "--token", "--verbose"}},
		{[]string{"srv", "--token"}, []string{"srv", "--token"}},
		{[]string{"env", "API_KEY=K", "HOME=/h", "srv"}, []string{"env", "API_KEY=" + Mask, "HOME=/h", "srv"}},
		{[]string{"srv", "--header", "Authorization: Bearer X"}, []string{"srv", "--header", "Authorization: " + Mask}},
		{[]string{"srv", "--header=Authorization: Bearer X"}, []string{"srv", "--header=Authorization: " + Mask}},
		{[]string{"srv", "--header", "Authorization=Bearer X"}, []string{"srv", "--header", "Authorization=" + Mask}},
		{[]string{"srv", "--env=GH_TOKEN=X"}, []string{"srv", "--env=GH_TOKEN=" + Mask}},
		{[]string{"mcp-remote", "https://u:pw@h/mcp?k=v"}, []string{"mcp-remote", "https://h/mcp?k=" + Mask}},
		{[]string{"srv", "--url=https://u:pw@h/"}, []string{"srv", "--url=https://h/"}},
		{[]string{"srv", "ENDPOINT=https://u:pw@h/"}, []string{"srv", "ENDPOINT=https://h/"}},
		{[]string{"srv", "--auth-url", "https://u:pw@h/"}, []string{"srv", "--auth-url", Mask}},
		{[]string{"https://u:pw@h/"}, []string{"https://h/"}},
		{[]string{"srv", "note: hello", "a=b=c"}, []string{"srv", "note: hello", "a=b=c"}},
	} {
		in := slices.Clone(tc.in)
		got := Argv(tc.in)
		if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("Argv(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Argv changed its argument: %q", tc.in)
		}
	}
	if got := Command([]string{"srv", "--token", "T"}); got != "srv --token "+Mask {
		t.Errorf("Command = %q", got)
	}
}

// userPassword is the password url.Parse reads in s, when it reads one
// that appears nowhere else in s (so that its absence can be demanded).
func userPassword(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return "", false
	}
	p, ok := u.User.Password()
	if !ok || len(p) < 4 || strings.Count(s, p) != 1 {
		return "", false
	}
	return p, true
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{"http://u:secret@h/mcp?k=v#f", "https://h:1/x?a&b=c", "http://127.0.0.1:${PORT}/mcp?x=1",
		"user:pw@host", "%zz", "http://[::1]:80/", "//u:pw@h/p", "http://u:p/w@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s)
		if p, ok := userPassword(s); ok && strings.Contains(out, p) {
			t.Fatalf("URL(%q) = %q keeps the password %q", s, out, p)
		}
		if u, err := url.Parse(out); err == nil && u.User != nil {
			t.Fatalf("URL(%q) = %q still has user info", s, out)
		}
	})
}

func FuzzArgv(f *testing.F) {
	f.Add("srv", "T0KEN-value", "http://u:secret@h/mcp?k=v")
	f.Add("/bin/x", "-x", "--header=Authorization: Bearer y")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, cmd, v, raw string) {
		argv := []string{cmd, raw, "--token", v, "--api-key=" + v, "API_KEY=" + v, "--header", "Authorization: " + v}
		out := Argv(argv)
		if len(out) != len(argv) {
			t.Fatalf("Argv changed the argument count: %q", out)
		}
		if out[0] != cmd && !strings.Contains(cmd, "://") {
			t.Fatalf("command name changed: %q -> %q", cmd, out[0])
		}
		want := []string{Mask, "--api-key=" + Mask, "API_KEY=" + Mask, "--header", "Authorization: " + Mask}
		if strings.HasPrefix(v, "-") {
			want[0] = out[3] // a flag, not a value: judged on its own
		}
		if !slices.Equal(out[3:], want) {
			t.Fatalf("Argv(%q) = %q, want the values masked: %q", argv, out, want)
		}
		if p, ok := userPassword(raw); ok && strings.Contains(out[1], p) {
			t.Fatalf("Argv kept the URL password: %q -> %q", raw, out[1])
		}
	})
}

func TestValues(t *testing.T) {
	const key = "ghp_A1b2C3d4E5f6G7h8I9j0"
	for _, tc := range []struct {
		name   string
		values []string
		in     string
		want   string
	}{
		{"none", nil, "a secret-value here", "a secret-value here"},
		{"plain", []string{"s3cr3t-value"}, "token s3cr3t-value, again s3cr3t-value", "token REDACTED, again REDACTED"},
		{"short values are left", []string{"1", "on", "abc"}, "1 on abc", "1 on abc"},
		{"JSON-escaped form", []string{`pa"ss\word`}, `{"v":"pa\"ss\\word"} pa"ss\word`, `{"v":"REDACTED"} REDACTED`},
		{"longest first", []string{"abcd", "abcdefgh"}, "abcdefgh abcd", "REDACTED REDACTED"},
		{"duplicates", []string{"same-value", "same-value"}, "same-value", "REDACTED"},
		// Echoes of a part of a secret: any run of EchoRun bytes.
		{"the value less its last character", []string{key}, "name " + key[:len(key)-1] + "!", "name REDACTED!"},
		{"less its first character", []string{key}, "v" + key[1:], "vREDACTED"},
		{"a middle part", []string{key}, "[" + key[5:5+EchoRun] + "]", "[REDACTED]"},
		{"a part too short", []string{key}, key[:EchoRun-1] + " " + key[len(key)-EchoRun+1:], key[:EchoRun-1] + " " + key[len(key)-EchoRun+1:]},
		{"parts joined", []string{key}, key[:12] + "-" + key[12:], "REDACTED-REDACTED"},
		{"a short secret whole only", []string{"pw1234"}, "pw1234 pw123", "REDACTED pw123"},
		{"one-class runs are words", []string{"production-database-7"}, "the production database", "the production database"},
		{"mixed runs still match", []string{"production-database-7"}, "production-databas", "proREDACTED"},
		{"not ASCII: whole only", []string{"пароль-секрет-42"}, "x пароль-секрет-42 y пароль-секрет-4", "x REDACTED y пароль-секрет-4"},
		{"a run across JSON structure is not matched", []string{`{"Profile":"good","Seed":1}`}, `{"profile":"good","seed":1}`, `{"profile":"good","seed":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Values(tc.values)(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	var s Secrets
	s.Header("Authorization", "Bearer tok-1234567")
	s.Header("X-Api-Key", "k-abcdef")
	s.Input("input-value")
	s.Env("GITHUB_TOKEN", "gh-env-value")
	s.Env("FSROOT", "/tmp")
	s.Env("HOME", "/home/me")
	s.Env("LOG_LEVEL", "debug")
	s.Env("GH_PAT", "ghp_0123456789abcdefABCDEF") // the shape says so
	s.Env("DATABASE_URL", "postgres://dbuser:db-pass@h/db?sslmode=require&password=q-pass")
	s.Env("API_KEY", "/run/secrets/key") // a path: never a secret
	s.Placeholder("SERVICE_SECRET", "placeholder-secret")
	s.Placeholder("REGION", "eu-west-1")
	s.URL("https://u-name:u-pass@h/mcp?api_key=q-key&page=22")
	s.Argv([]string{"srv", "--token", "arg-token", "--port", "8080", "--api-key=arg-key", "SECRET=kv-secret", "--header", "Authorization: Basic hdr-basic", "https://x:url-pass@h/"})
	want := []string{"Bearer tok-1234567", "tok-1234567", "k-abcdef", "input-value", "gh-env-value", "ghp_0123456789abcdefABCDEF",
		"dbuser", "db-pass", "q-pass", "placeholder-secret", "u-name", "u-pass", "q-key",
		"arg-token", "arg-key", "kv-secret", "Basic hdr-basic", "hdr-basic", "url-pass"}
	if got := s.Values(); !slices.Equal(got, want) {
		t.Errorf("secrets %q\nwant %q", got, want)
	}
}

func TestPathAndTokenShape(t *testing.T) {
	for _, p := range []string{"/tmp", "/home/me", "~/x", "./data", "../up", `C:\Users\me`, "d:/work"} {
		if !Path(p) {
			t.Errorf("Path(%q) = false", p)
		}
	}
	for _, p := range []string{"tmp", "ghp_x", "https://h/", "C:", ""} {
		if Path(p) {
			t.Errorf("Path(%q) = true", p)
		}
	}
	for _, v := range []string{"ghp_0123456789abcdefABCDEF", "sk-live-51HxYz0123456789abcd", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.sig0123"} {
		if !TokenShaped(v) {
			t.Errorf("TokenShaped(%q) = false", v)
		}
	}
	for _, v := range []string{"production-database", "--max-old-space-size=4096", "/usr/local/bin/node12345678", "short1", "two words 0123456789 abcdef"} {
		if TokenShaped(v) {
			t.Errorf("TokenShaped(%q) = true", v)
		}
	}
}

// FuzzValues: a masked text holds no secret whole, nor a mixed run of
// EchoRun token characters of it, and masking a JSON document (with
// secrets free of quotes and backslashes) leaves it JSON.
func FuzzValues(f *testing.F) {
	f.Add("ghp_A1b2C3d4E5f6G7h8", "x ghp_A1b2C3d4E5f6G7h y")
	f.Add("s3cr3t-value", `{"a":"s3cr3t-valu"}`)
	f.Add("pw", "pw")
	f.Fuzz(func(t *testing.T, secret, text string) {
		mask := Values([]string{secret})
		out := mask(text)
		if len(secret) >= MinValueLen && strings.Contains(out, secret) {
			t.Fatalf("Values(%q)(%q) = %q keeps the secret", secret, text, out)
		}
		for i := 0; i+EchoRun <= len(secret) && len(secret) > EchoRun; i++ {
			if r := secret[i : i+EchoRun]; tokenRun(r) && strings.Contains(out, r) && !strings.Contains(Mask, r) {
				t.Fatalf("Values(%q)(%q) = %q keeps the run %q", secret, text, out, r)
			}
		}
		if strings.ContainsAny(secret, `"\`) || !utf8.ValidString(text) {
			return
		}
		doc, err := json.Marshal(map[string]string{"k": text, text: "v"})
		if err != nil {
			t.Skip()
		}
		if m := mask(string(doc)); !json.Valid([]byte(m)) {
			t.Fatalf("masking %q in %s broke the JSON: %s", secret, doc, m)
		}
	})
}
