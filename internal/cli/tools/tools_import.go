package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/yaml"

	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// toolsImport prints a tools file for a live MCP server's tools/list: each
// tool with its schema and an executor of type mcp naming that server.
// --mcp is a streamable HTTP URL or a command line (split on spaces, no
// shell) that starts a stdio server.
func toolsImport(args []string, tio ToolsIO) error {
	fs, _ := toolsFlags("import", tio)
	server := fs.String("mcp", "", "the MCP server: an http(s):// URL (streamable HTTP) or a command line (stdio)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the server's tool list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *server == "" || fs.NArg() > 0 {
		return cmdutil.UsageError("tools import: want --mcp URL|COMMAND (quote a command with arguments)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	exe, transport, err := mcpServer(*server)
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolgate", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("tools import: %s: connecting: %w", *server, err)
	}
	defer cs.Close()
	var defs []tool.Definition
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools import: %s: tools/list: %w", *server, err)
		}
		if t.Name == wire.MCPStatusTool {
			continue // toolgate's own question to the server, never a tool for the model
		}
		if len(defs) == maxImported {
			return fmt.Errorf("tools import: %s lists more than %d tools", *server, maxImported)
		}
		defs = append(defs, importedTool(t, exe))
	}
	if len(defs) == 0 {
		return fmt.Errorf("tools import: %s lists no tools", *server)
	}
	js, err := json.Marshal(map[string]any{"tools": defs})
	if err != nil {
		return fmt.Errorf("tools import: %w", err)
	}
	out, err := yaml.JSONToYAML(js)
	if err != nil {
		return fmt.Errorf("tools import: %w", err)
	}
	fmt.Fprintf(tio.Out, "# toolgate tools file imported from the MCP server %s\n%s", *server, out)
	return nil
}

// mcpServer reads --mcp.
func mcpServer(s string) (tool.Executor, mcp.Transport, error) {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return tool.Executor{Type: "mcp", URL: s}, &mcp.StreamableClientTransport{Endpoint: s, DisableStandaloneSSE: true}, nil
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return tool.Executor{}, nil, errors.New("tools import: --mcp: empty command")
	}
	return tool.Executor{Type: "mcp", Command: f[0], Args: f[1:]}, &mcp.CommandTransport{Command: exec.Command(f[0], f[1:]...)}, nil
}

// maxImported bounds a server's tool list.
const maxImported = 10000

var importBadName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// importedTool is one listed tool. A name toolgate cannot take (dots,
// slashes, over 64 characters) becomes one it can, with executor.tool
// keeping the MCP name.
func importedTool(t *mcp.Tool, exe tool.Executor) tool.Definition {
	name := importBadName.ReplaceAllString(t.Name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "tool"
	}
	if name != t.Name {
		exe.Tool = t.Name
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	return tool.Definition{Name: name, Description: t.Description, InputSchema: schema, Executor: exe}
}
