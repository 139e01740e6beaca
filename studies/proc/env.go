package proc

import (
	"os"
	"slices"
	"strings"
)

// base names the variables of this process that every program a study
// starts inherits, when set: where programs are found, the locale and
// time zone, and the certificate bundles a TLS client needs. Locale
// variables (LC_*) are added by prefix.
var base = []string{"PATH", "LANG", "LANGUAGE", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// Installer names what a package manager inherits beside the base: the
// proxies that reach a registry and Go's module settings. A server under
// study does not get them (a proxy's URL may carry a password); a row that
// needs one names it in its own env.
var Installer = []string{"PIP_CERT", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOTOOLCHAIN", "GOROOT",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// Env is the whole environment of a program a study starts, built from an
// allow-list and never from this process's environment as a whole: HOME
// and TMPDIR are scratch (a directory of the program's own, which is also
// its working directory), then the base variables (PATH, locale, TZ,
// certificate bundles) and the names in inherit, each as this process has
// it, then set (KEY=VALUE: the row's own env for a server, the caches for
// an installer). A later entry wins over an earlier one of the same name,
// as os/exec reads an environment. No token, key or password of the
// caller's reaches the program unless set names it.
func Env(scratch string, inherit []string, set ...string) []string {
	env := []string{"HOME=" + scratch, "TMPDIR=" + scratch}
	for _, k := range slices.Concat(base, inherit) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}
