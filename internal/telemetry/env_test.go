package telemetry

import (
	"errors"
	"testing"
)

// TestEndpointFromEnv: the OpenTelemetry environment names the collector
// as the OTLP exporter specification says: the traces endpoint as it is,
// the base endpoint with v1/traces appended to its path.
func TestEndpointFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr error
	}{
		{"nothing set", nil, "", nil},
		{"base", map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, "http://127.0.0.1:4318/v1/traces", nil},
		{"base with a slash", map[string]string{EnvEndpoint: "http://127.0.0.1:4318/"}, "http://127.0.0.1:4318/v1/traces", nil},
		{"base with a path", map[string]string{EnvEndpoint: "https://otel.example/otlp"}, "https://otel.example/otlp/v1/traces", nil},
		{"traces endpoint as it is", map[string]string{EnvTracesEndpoint: "https://otel.example/t", EnvEndpoint: "http://x:4318"}, "https://otel.example/t", nil},
		{"http/protobuf", map[string]string{EnvEndpoint: "http://x:4318", EnvProtocol: "http/protobuf"}, "http://x:4318/v1/traces", nil},
		{"grpc", map[string]string{EnvEndpoint: "http://x:4317", EnvProtocol: "grpc"}, "", ErrProtocol},
		{"traces protocol wins", map[string]string{EnvEndpoint: "http://x:4318", EnvProtocol: "grpc", EnvTracesProtocol: "http/protobuf"}, "http://x:4318/v1/traces", nil},
		{"protocol alone", map[string]string{EnvProtocol: "grpc"}, "", nil},
		{"not a URL", map[string]string{EnvEndpoint: "127.0.0.1:4318"}, "", ErrEndpoint},
		{"SDK disabled", map[string]string{EnvEndpoint: "http://x:4318", EnvSDKDisabled: "TRUE"}, "", nil},
		{"no traces exporter", map[string]string{EnvEndpoint: "http://x:4318", EnvTracesExporter: "none"}, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EndpointFromEnv(func(k string) string { return tc.env[k] })
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("EndpointFromEnv = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
