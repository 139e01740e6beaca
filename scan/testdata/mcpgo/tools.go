//go:build tools

// Package mcpgo only pins github.com/mark3labs/mcp-go: the agreement test
// builds github.com/mark3labs/mcp-go/examples/everything in this module.
package mcpgo

import _ "github.com/mark3labs/mcp-go/server"
