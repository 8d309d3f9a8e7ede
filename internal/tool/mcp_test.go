package tool

import (
	"strings"
	"testing"
)

func TestLoad_mcp_executor_fields_are_checked(t *testing.T) {
	for _, c := range []struct{ exec, want string }{
		{`{type: mcp, url: "http://mcp.example:8080/mcp", tool: remote_name, timeout: 5s}`, ""},
		{`{type: mcp, command: /usr/bin/mcp-server, args: ["--stdio"]}`, ""},
		{`{type: mcp}`, "needs url (streamable HTTP) or command (stdio)"},
		{`{type: mcp, url: "http://a/mcp", command: x}`, "not both"},
		{`{type: mcp, url: "ftp://a/mcp"}`, "not an http:// or https:// URL"},
		{`{type: mcp, url: "http://a/mcp", args: [x]}`, "only with executor.command"},
		{`{type: http, url: "http://a/x", command: x}`, "only for an mcp executor"},
		{`{type: nats, tool: x}`, "only for an mcp executor"},
		{`{type: grpc}`, "not one of nats, http, mcp"},
	} {
		src := "tools:\n  - name: t\n    input_schema: {type: object}\n    executor: " + c.exec + "\n"
		_, err := Load("tools.yaml", []byte(src))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.exec, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", c.exec, err, c.want)
		}
	}
}
