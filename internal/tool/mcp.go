package tool

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// mcpExecutor checks an executor of type mcp: a streamable HTTP server at
// url, or a stdio server started as command with args; not both.
func mcpExecutor(e Executor) error {
	switch {
	case e.URL == "" && e.Command == "":
		return errors.New("executor: an mcp executor needs url (streamable HTTP) or command (stdio)")
	case e.URL != "" && e.Command != "":
		return errors.New("executor: an mcp executor takes url (streamable HTTP) or command (stdio), not both")
	case e.URL != "" && len(e.Args) > 0:
		return errors.New("executor.args: only with executor.command, not with url")
	}
	if e.URL != "" {
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("executor.url: %q is not an http:// or https:// URL of an MCP server", e.URL)
		}
	}
	if len(e.Tool) > 128 || strings.ContainsFunc(e.Tool, unicode.IsControl) {
		return fmt.Errorf("executor.tool: %q must be at most 128 characters, none of them control characters", e.Tool)
	}
	return nil
}
