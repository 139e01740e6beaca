package testutil

import (
	"errors"
	"strings"
	"testing"
)

// WantErrorIs checks err against a table case's expected error: with want
// set, err must wrap it (or the test fails) and WantErrorIs reports true,
// the case being done; with want nil it reports false and leaves err to
// the caller.
func WantErrorIs(t testing.TB, err, want error) bool {
	t.Helper()
	if want == nil {
		return false
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	return true
}

// WantErrorText is WantErrorIs for an expected error known by part of its
// message: with want set, err must contain it.
func WantErrorText(t testing.TB, err error, want string) bool {
	t.Helper()
	if want == "" {
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	return true
}
