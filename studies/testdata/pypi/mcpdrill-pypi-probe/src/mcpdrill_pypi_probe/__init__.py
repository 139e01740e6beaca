"""A dependency-free MCP server over stdio, for mcpdrill's offline PyPI path test.

It speaks newline-delimited JSON-RPC 2.0 on stdin and stdout with the
initialize handshake and serves three tools: add (an output schema that
describes its result), echo (no output schema), and word_count, whose
result is wrapped the way Python's FastMCP wraps a plain return value
({"result": ...} under an output schema marked x-fastmcp-wrap-result).
"""

import json
import sys

__version__ = "0.1.0"

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
            "additionalProperties": False,
        },
    },
    {
        "name": "echo",
        "description": "Echo a message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "word_count",
        "description": "Count the words of a text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
            "x-fastmcp-wrap-result": True,
        },
    },
]


class ArgError(Exception):
    pass


def _arg(args, name, types):
    if name not in args:
        raise ArgError("missing required argument: " + name)
    v = args[name]
    if isinstance(v, bool) or not isinstance(v, types):
        raise ArgError("argument %s has the wrong type" % name)
    return v


def call_tool(name, args):
    if name == "add":
        s = _arg(args, "a", (int, float)) + _arg(args, "b", (int, float))
        return {"content": [{"type": "text", "text": json.dumps({"sum": s})}], "structuredContent": {"sum": s}}
    if name == "echo":
        return {"content": [{"type": "text", "text": _arg(args, "message", str)}]}
    if name == "word_count":
        n = len(_arg(args, "text", str).split())
        return {"content": [{"type": "text", "text": json.dumps({"result": n})}], "structuredContent": {"result": n}}
    return None


def handle(msg):
    """Returns the answer to one decoded message, or None for a notification."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
        return error(msg.get("id") if isinstance(msg, dict) else None, -32600, "invalid request")
    if "id" not in msg:
        return None
    mid, method, params = msg["id"], msg["method"], msg.get("params") or {}
    if not isinstance(params, dict):
        return error(mid, -32602, "params must be an object")
    if method == "initialize":
        asked = params.get("protocolVersion")
        rev = asked if asked in REVISIONS else REVISIONS[-1]
        return result(mid, {
            "protocolVersion": rev,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "mcpdrill-pypi-probe", "version": __version__},
        })
    if method == "ping":
        return result(mid, {})
    if method == "tools/list":
        return result(mid, {"tools": TOOLS})
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if not isinstance(args, dict):
            return error(mid, -32602, "arguments must be an object")
        if not any(t["name"] == name for t in TOOLS):
            return error(mid, -32602, "unknown tool: %s" % name)
        try:
            return result(mid, call_tool(name, args))
        except ArgError as e:
            return error(mid, -32602, str(e))
    return error(mid, -32601, "method not found: " + method)


def result(mid, res):
    return {"jsonrpc": "2.0", "id": mid, "result": res}


def error(mid, code, message):
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            answer = error(None, -32700, "parse error")
        else:
            answer = handle(msg)
        if answer is not None:
            out.write(json.dumps(answer, separators=(",", ":")) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
