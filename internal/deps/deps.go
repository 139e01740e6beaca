//go:build tools

// Package deps pins the project's third-party modules so go.mod stays stable
// while packages that use them are written.
package deps

import (
	_ "github.com/fatih/color"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/urfave/cli/v2"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/trace"
	_ "go.yaml.in/yaml/v3"
)
