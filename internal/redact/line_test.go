package redact

import "testing"

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"missing API_KEY", "missing API_KEY"},
		{"Error: missing API_KEY", "Error: missing API_KEY"},
		{"  spaced   out  ", "spaced out"},
		{"Authorization: Bearer abc123", "Authorization: " + Mask},
		{"api_key: sk-live-1", "api_key: " + Mask},
		{"started with --token s3cret --port 80", "started with --token " + Mask + " --port 80"},
		{"env API_KEY=s3cret loaded", "env API_KEY=" + Mask + " loaded"},
		{"connecting to https://user:pw@db.example/x?key=v", "connecting to https://db.example/x?key=" + Mask},
		{"Cannot find config file /home/me/.cfg", "Cannot find config file /home/me/.cfg"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
