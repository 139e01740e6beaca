package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The OpenTelemetry environment variables EndpointFromEnv reads (OTLP
// exporter and SDK configuration specifications).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
)

// ErrProtocol reports an OTLP protocol other than http/protobuf, the only
// one the tracer speaks.
var ErrProtocol = errors.New("telemetry: only the http/protobuf OTLP protocol is supported")

// EndpointFromEnv returns the traces URL the OpenTelemetry environment
// names, read as the OTLP exporter specification reads it:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT
// as a base URL with v1/traces appended to its path. It returns "" when
// neither is set, when OTEL_SDK_DISABLED is true or when OTEL_TRACES_EXPORTER
// is none; an error when the protocol set for traces is not http/protobuf
// ([ErrProtocol]) or a base endpoint is not an http(s) URL ([ErrEndpoint]).
func EndpointFromEnv(getenv func(string) string) (string, error) {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv(EnvTracesExporter)), "none") {
		return "", nil
	}
	endpoint := strings.TrimSpace(getenv(EnvTracesEndpoint))
	base := strings.TrimSpace(getenv(EnvEndpoint))
	if endpoint == "" && base == "" {
		return "", nil
	}
	proto, name := strings.TrimSpace(getenv(EnvTracesProtocol)), EnvTracesProtocol
	if proto == "" {
		proto, name = strings.TrimSpace(getenv(EnvProtocol)), EnvProtocol
	}
	if proto != "" && proto != "http/protobuf" {
		return "", fmt.Errorf("%w (%s is %q)", ErrProtocol, name, proto)
	}
	if endpoint != "" {
		return endpoint, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w (%s)", ErrEndpoint, EnvEndpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	u.RawPath = ""
	return u.String(), nil
}
