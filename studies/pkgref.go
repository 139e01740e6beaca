package studies

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Registry text is data, never a command's option: a package name or
// version from servers.json or from a registry is checked against its
// registry's grammar before any command line holds it. The grammars
// (one validator per registry):
//
//   - npm: a name as npm accepts a new one (lowercase, URL-safe, at most
//     214 bytes, an optional @scope/), not starting with '.', '_' or '-';
//     a version is a Semantic Versioning 2.0.0 version, nothing looser
//     (no range, tag or URL).
//   - PyPI: a PEP 508 name (letters, digits, '.', '_', '-', beginning and
//     ending with a letter or digit); a version is a PEP 440 version.
//   - Go: a module or package path of slash-separated elements of letters,
//     digits and '-', '.', '_', '~' (none starting with '-' or '.'), the
//     first holding a dot; a version is 'v' and a semantic version.
//   - OCI: a distribution reference, [domain[:port]/]path[:tag][@digest],
//     lowercase path components joined by '.', '_', '__' or dashes.
//
// A name that begins with '-' is refused in every registry: it would read
// as an option to the runner.
var (
	npmName = regexp.MustCompile(`^(?:@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)
	// SemVer 2.0.0: MAJOR.MINOR.PATCH, optional pre-release and build.
	semverRE = regexp.MustCompile(`^(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)` +
		`(?:-(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
		`(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$`)
	pep508Name = regexp.MustCompile(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$`)
	// PEP 440, with the spellings its normalisation accepts.
	pep440 = regexp.MustCompile(`^(?i:v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*` +
		`(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?` +
		`(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?` +
		`(?:[-_.]?dev[-_.]?[0-9]*)?` +
		`(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?)$`)
	goElem = regexp.MustCompile(`^[A-Za-z0-9_~][A-Za-z0-9._~-]*$`)
	ociRef = regexp.MustCompile(`^` +
		// domain: host name or IPv4, optional port
		`(?:(?:localhost|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)(?::[0-9]+)?/)?` +
		// path components
		`[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*` +
		// tag, digest
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?` +
		`(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?$`)
)

// CheckNPMName reports whether name is an npm package name by npm's grammar.
func CheckNPMName(name string) error {
	switch {
	case name == "":
		return errors.New("npm package name is empty")
	case len(name) > 214:
		return fmt.Errorf("npm package name %q is longer than 214 bytes", trimQuote(name))
	case !npmName.MatchString(name):
		return fmt.Errorf("%q is not an npm package name (lowercase letters, digits, '-', '.', '_', '~', an optional @scope/, not starting with '.', '_' or '-')", trimQuote(name))
	}
	return nil
}

// CheckSemver reports whether v is a Semantic Versioning 2.0.0 version
// (npm's versions): an exact version, not a range, a tag or a URL.
func CheckSemver(v string) error {
	if !semverRE.MatchString(v) {
		return fmt.Errorf("%q is not an exact semantic version", trimQuote(v))
	}
	return nil
}

// CheckPyPIName reports whether name is a PEP 508 distribution name.
func CheckPyPIName(name string) error {
	if !pep508Name.MatchString(name) {
		return fmt.Errorf("%q is not a PyPI distribution name (PEP 508: letters, digits, '.', '_', '-', beginning and ending with a letter or digit)", trimQuote(name))
	}
	return nil
}

// CheckPEP440 reports whether v is a PEP 440 version.
func CheckPEP440(v string) error {
	if !pep440.MatchString(v) {
		return fmt.Errorf("%q is not a PEP 440 version", trimQuote(v))
	}
	return nil
}

// checkGoPath reports whether p is a Go module or package path.
func checkGoPath(p string) error {
	elems := strings.Split(p, "/")
	for _, e := range elems {
		if !goElem.MatchString(e) || strings.HasSuffix(e, ".") {
			return fmt.Errorf("%q is not a Go package path (slash-separated elements of letters, digits, '-', '.', '_', '~')", trimQuote(p))
		}
	}
	if !strings.Contains(elems[0], ".") {
		return fmt.Errorf("%q is not a Go package path: its first element names no host (no dot)", trimQuote(p))
	}
	return nil
}

// checkGoVersion reports whether v is a Go module version ("v" and a
// semantic version).
func checkGoVersion(v string) error {
	if rest, ok := strings.CutPrefix(v, "v"); !ok || CheckSemver(rest) != nil {
		return fmt.Errorf("%q is not a Go module version (v and a semantic version)", trimQuote(v))
	}
	return nil
}

// CheckOCIRef reports whether ref is an image reference by the
// distribution grammar.
func CheckOCIRef(ref string) error {
	if len(ref) > 512 || !ociRef.MatchString(ref) {
		return fmt.Errorf("%q is not an image reference ([domain/]path[:tag][@digest])", trimQuote(ref))
	}
	return nil
}

// checkPackage checks a Package ("name@version"; an image reference for
// OCI) by the grammar of its registry; the version may be absent.
func checkPackage(registry, pkg string) error {
	if registry == RegistryOCI {
		return CheckOCIRef(pkg)
	}
	name, version := splitPackage(pkg)
	var nameErr, versionErr error
	switch registry {
	case RegistryNPM:
		nameErr = CheckNPMName(name)
		if version != "" {
			versionErr = CheckSemver(version)
		}
	case RegistryPyPI:
		nameErr = CheckPyPIName(name)
		if version != "" {
			versionErr = CheckPEP440(version)
		}
	case RegistryGo:
		nameErr = checkGoPath(name)
		if version != "" {
			versionErr = checkGoVersion(version)
		}
	}
	return errors.Join(nameErr, versionErr)
}

// trimQuote bounds registry text quoted in an error.
func trimQuote(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
