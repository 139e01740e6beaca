package target

import (
	"errors"
	"testing"
)

func TestCheckListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		ok       bool
		loopback bool // the refusal is ErrNotLoopback (not a parse error)
	}{
		{"127.0.0.1:0", true, false},
		{"127.8.9.10:7070", true, false},
		{"localhost:8080", true, false},
		{"[::1]:9", true, false},
		{"0.0.0.0:80", false, true},
		{":80", false, true},
		{"[::]:80", false, true},
		{"192.168.1.2:80", false, true},
		{"example.com:80", false, true},
		{"nonsense", false, false},
	} {
		err := CheckListenAddr(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckListenAddr(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if !tc.ok && errors.Is(err, ErrNotLoopback) != tc.loopback {
			t.Errorf("CheckListenAddr(%q) = %v: ErrNotLoopback %v, want %v", tc.addr, err, !tc.loopback, tc.loopback)
		}
	}
}

func TestLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost:3000":         true,
		"http://127.0.0.1":              true,
		"https://[::1]:8443":            true,
		"http://127.5.6.7:1":            true,
		"https://evil.example":          false,
		"http://127.0.0.1.evil.example": false,
		"http://localhost.evil.example": false,
		"null":                          false,
		"":                              false,
		"http://10.0.0.1":               false,
		"file:///etc/passwd":            false,
	} {
		if got := LoopbackOrigin(origin); got != want {
			t.Errorf("LoopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
