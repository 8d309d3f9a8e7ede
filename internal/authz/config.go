package authz

import (
	"fmt"
	"slices"
	"strings"
)

// Config names the users a deployment has besides the admin and the
// stages: its executor groups and its tenants. Both are known when the
// broker starts (toolgate up) or its configuration is rendered (deploy/):
// a tool a group does not list cannot be served by anyone, a tenant not
// listed has no producer user that can read its results.
type Config struct {
	// Groups are the executor groups: user executor-<group> may serve
	// exactly its tools.
	Groups []Group
	// Tenants get a producer user each, producer-<tenant>, that reads only
	// that tenant's results and progress. The tenant-less producer
	// (Producer) always exists.
	Tenants []string
	// Lanes is the deployment's number of fairness lanes (--lanes,
	// streams.Fair.Lanes): each lane durable of a stage is granted by name.
	// 0: streams.DefaultLanes.
	Lanes int
	// Partitions is the deployment's P (--partitions, streams.Fair.
	// Partitions): each partitioned stage's user is granted its partition
	// streams 1 to P-1 by name. 0 or 1: none. While P is lowered, render
	// with the larger P until the streams beyond it are pruned.
	Partitions int
	// Mapped is the P the server maps the claimed subjects with
	// (wire.Mappings: the deployment's P, which the grants of
	// Partitions may exceed); Render writes its mappings block. 0 or 1:
	// none.
	Mapped int
}

// Group is one executor credential and the tools it serves.
type Group struct {
	Name  string
	Tools []string
}

// ExampleGroup serves the example tools (examples/tools.yaml): the
// executor group of `toolgate up` and of the committed deploy/ unless told
// otherwise (--executor-groups, TOOLGATE_EXECUTOR_GROUPS).
const ExampleGroup = "example"

// ExampleTools are the tools of examples/tools.yaml.
func ExampleTools() []string {
	return []string{"create_invoice", "get_weather", "delete_customer_account"}
}

// DefaultGroups is the --executor-groups value of DefaultConfig.
func DefaultGroups() string { return ExampleGroup + "=" + strings.Join(ExampleTools(), ",") }

// DefaultConfig is one executor group for the example tools, no tenant
// producers, and the stages' partitions up to DeployPartitions.
func DefaultConfig() Config {
	return Config{Groups: []Group{{Name: ExampleGroup, Tools: ExampleTools()}}, Partitions: DeployPartitions}
}

// ExecutorUser is the NATS user of an executor group.
func ExecutorUser(group string) string { return "executor-" + group }

// ProducerUser is the NATS user of a tenant's producer; Producer for no
// tenant.
func ProducerUser(tenant string) string {
	if tenant == "" {
		return Producer
	}
	return Producer + "-" + tenant
}

// ParseGroups reads executor groups written as
// "payments=create_invoice,refund;accounts=delete_customer_account".
func ParseGroups(s string) ([]Group, error) {
	var groups []Group
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, tools, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("authz: executor group %q: want name=tool,tool (e.g. payments=create_invoice,refund)", part)
		}
		g := Group{Name: strings.TrimSpace(name)}
		for _, t := range strings.Split(tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				g.Tools = append(g.Tools, t)
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// ParseTenants reads a comma-separated tenant list.
func ParseTenants(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Validate refuses a configuration whose users could not be told apart or
// whose grants would reach beyond what they name: group and tenant names
// are 1-64 lowercase letters, digits or '-' (so user names and their
// password variables are unique), tool names are toolgate tool names (one
// subject token), and no tool is served by two groups.
func (c Config) Validate() error {
	served := map[string]string{}
	var names []string
	for _, g := range c.Groups {
		if !userToken(g.Name) {
			return fmt.Errorf("authz: executor group %q: want 1-64 lowercase letters, digits or '-'", g.Name)
		}
		if slices.Contains(names, g.Name) {
			return fmt.Errorf("authz: executor group %q is listed twice", g.Name)
		}
		names = append(names, g.Name)
		if len(g.Tools) == 0 {
			return fmt.Errorf("authz: executor group %q lists no tool", g.Name)
		}
		for _, t := range g.Tools {
			if !toolToken(t) {
				return fmt.Errorf("authz: executor group %q: tool %q is not a tool name (1-64 letters, digits, '_' or '-')", g.Name, t)
			}
			if other, ok := served[t]; ok {
				return fmt.Errorf("authz: tool %s is in executor groups %s and %s: give each tool one group", t, other, g.Name)
			}
			served[t] = g.Name
		}
	}
	var seen []string
	for _, t := range c.Tenants {
		if !userToken(t) {
			return fmt.Errorf("authz: tenant %q: want 1-64 lowercase letters, digits or '-' (a producer user is named after it)", t)
		}
		if slices.Contains(seen, t) {
			return fmt.Errorf("authz: tenant %q is listed twice", t)
		}
		seen = append(seen, t)
	}
	return nil
}

func userToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// toolToken is internal/tool's name rule: one subject token.
func toolToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
