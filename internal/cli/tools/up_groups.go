package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/streams"
)

// coverSubject is where toolgate up answers `toolgate tools apply`: "these
// tools were applied; which executor group serves each?". Only the admin
// may publish on it (no other user's grants reach toolgate.admin.>), and
// an answer only ever covers tools registered in the tools bucket, which
// up's own watch of the bucket covers anyway.
const coverSubject = "toolgate.admin.executor-groups"

// maxCoverRequest bounds a cover request: tool names, not definitions.
const maxCoverRequest = 1 << 20

// coverRequest names tools just applied.
type coverRequest struct {
	Tools []string `json:"tools"`
}

// Coverage is how one tool is served: the group and its NATS user, the
// file of the user's password, and whether up made the group for the tool
// (created) or added the tool to a group of that name (extended) since it
// started, rather than having it from --executor-groups.
type Coverage struct {
	Tool         string `json:"tool"`
	Group        string `json:"group,omitempty"`
	User         string `json:"user,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
	Created      bool   `json:"created,omitempty"`
	Extended     bool   `json:"extended,omitempty"`
	// Reload is how long the server took to reload its users (created or
	// extended by this request).
	Reload time.Duration `json:"reload_ns,omitempty"`
	// Skipped says why a tool needs no group (an HTTP or MCP executor,
	// not registered).
	Skipped string `json:"skipped,omitempty"`
}

// coverReply answers a coverRequest.
type coverReply struct {
	Tools []Coverage `json:"tools,omitempty"`
	Error string     `json:"error,omitempty"`
}

// LiveGroups keeps the embedded server's executor users in step with the
// tool definitions: a tool applied with a NATS executor that no executor
// group lists gets a group of its own (groupFor), its user and password
// are made, and the server's users are reloaded in place (nats-server's
// ReloadOptions), so its executor connects at once; nobody restarts
// toolgate up. Other connections keep their users and subscriptions.
// Groups made so are not stored: the next start makes them again from the
// registered tools, with the passwords kept in the secrets directory.
type LiveGroups struct {
	mu        sync.Mutex
	ns        *server.Server
	opts      *server.Options // the options the server runs with now
	config    authz.Config
	dir       string
	passwords map[string]string   // every user's, the new groups' included
	made      map[string]Coverage // tool -> how up covered it live
	log       zerolog.Logger
}

// NewLiveGroups manages ns's executor users; opts are the options ns was
// started with, c and passwords the users they hold.
func NewLiveGroups(ns *server.Server, opts *server.Options, c authz.Config, dir string, passwords map[string]string, log zerolog.Logger) *LiveGroups {
	c.Groups = slices.Clone(c.Groups)
	return &LiveGroups{ns: ns, opts: opts, config: c, dir: dir, passwords: maps.Clone(passwords), made: map[string]Coverage{}, log: log}
}

// groupFor is the group a tool no group lists gets: the tool's name in a
// group name's alphabet (lowercase, '-' for '_'). When a group of that
// name exists, the tool joins it.
func groupFor(tool string) string {
	return strings.ReplaceAll(strings.ToLower(tool), "_", "-")
}

// groupOf is the group of c that lists tool, or "".
func groupOf(c authz.Config, tool string) string {
	for _, g := range c.Groups {
		if slices.Contains(g.Tools, tool) {
			return g.Name
		}
	}
	return ""
}

// Cover makes sure a group lists each of tools (NATS-executed tools; the
// caller filters) and reloads the server's users when one had to be made
// or extended.
func (lg *LiveGroups) Cover(tools []string) ([]Coverage, error) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	next := lg.config
	next.Groups = make([]authz.Group, len(lg.config.Groups))
	for i, g := range lg.config.Groups {
		next.Groups[i] = authz.Group{Name: g.Name, Tools: slices.Clone(g.Tools)}
	}
	out := make([]Coverage, 0, len(tools))
	changed := false
	for _, t := range tools {
		if c, ok := lg.made[t]; ok {
			out = append(out, c)
			continue
		}
		c := Coverage{Tool: t, Group: groupOf(next, t)}
		if c.Group == "" {
			c.Group = groupFor(t)
			i := slices.IndexFunc(next.Groups, func(g authz.Group) bool { return g.Name == c.Group })
			if i < 0 {
				next.Groups = append(next.Groups, authz.Group{Name: c.Group, Tools: []string{t}})
				c.Created = true
			} else {
				next.Groups[i].Tools = append(next.Groups[i].Tools, t)
				c.Extended = true
			}
			changed = true
		}
		c.User = authz.ExecutorUser(c.Group)
		c.PasswordFile = filepath.Join(lg.dir, authz.PasswordFile(c.User))
		out = append(out, c)
	}
	if !changed {
		return out, nil
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	passwords := maps.Clone(lg.passwords)
	for _, c := range out {
		if _, ok := passwords[c.User]; ok {
			continue
		}
		b, err := secrets.Ensure(lg.dir, authz.PasswordFile(c.User), secrets.Random(16))
		if err != nil {
			return nil, fmt.Errorf("up: %w", err)
		}
		passwords[c.User] = strings.TrimRight(string(b), "\r\n")
	}
	users, err := natsusers.ConfigUsers(next, passwords)
	if err != nil {
		return nil, err
	}
	opts := lg.opts.Clone()
	opts.Users = users
	start := time.Now()
	if err := lg.ns.ReloadOptions(opts); err != nil {
		return nil, fmt.Errorf("up: reload the NATS users: %w", err)
	}
	took := time.Since(start)
	lg.opts, lg.config, lg.passwords = opts, next, passwords
	for i, c := range out {
		if (c.Created || c.Extended) && c.Reload == 0 {
			out[i].Reload = took
			lg.made[c.Tool] = out[i]
			logCoverage(lg.log, out[i])
		}
	}
	return out, nil
}

// Serve answers cover requests on nc (the admin's connection) until it
// closes: each named tool is read from the tools bucket, and each one
// registered with a NATS executor is covered.
func (lg *LiveGroups) Serve(nc *nats.Conn, js jetstream.JetStream) (*nats.Subscription, error) {
	return nc.Subscribe(coverSubject, func(m *nats.Msg) {
		reply := lg.answer(js, m.Data)
		b, _ := json.Marshal(reply)
		_ = m.Respond(b)
	})
}

// answer is serve's reply to one request.
func (lg *LiveGroups) answer(js jetstream.JetStream, data []byte) coverReply {
	var req coverRequest
	if len(data) > maxCoverRequest {
		return coverReply{Error: fmt.Sprintf("request of %d bytes; at most %d", len(data), maxCoverRequest)}
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return coverReply{Error: "request: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return coverReply{Error: err.Error()}
	}
	var natsTools []string
	var skipped []Coverage
	for _, name := range req.Tools {
		e, err := kv.Get(ctx, name)
		if err != nil {
			skipped = append(skipped, Coverage{Tool: name, Skipped: "not registered"})
			continue
		}
		d, err := registry.Decode(e.Key(), e.Value())
		switch {
		case err != nil:
			skipped = append(skipped, Coverage{Tool: name, Skipped: "unreadable definition: " + err.Error()})
		case d.Executor.Type == "http" || d.Executor.Type == "mcp":
			skipped = append(skipped, Coverage{Tool: name, Skipped: d.Executor.Type + " executor"})
		default:
			natsTools = append(natsTools, d.Name)
		}
	}
	cs, err := lg.Cover(natsTools)
	if err != nil {
		return coverReply{Error: err.Error()}
	}
	return coverReply{Tools: append(cs, skipped...)}
}

// logCoverage logs a group made or extended for c.Tool.
func logCoverage(log zerolog.Logger, c Coverage) {
	log.Info().Str("tool", c.Tool).Str("group", c.Group).Str("user", c.User).Str("password_file", c.PasswordFile).Bool("created", c.Created).Dur("reload", c.Reload).
		Msg("executor group " + c.Group + " now serves tool " + c.Tool + ": its executor connects as " + c.User + ", no restart")
}

// errNoLiveGroups is the cover request's answer when nobody manages the
// executor groups live: a deployment's own nats-server (deploy/), or
// toolgate up --insecure.
var errNoLiveGroups = errors.New("no toolgate up manages the executor groups on this server")

// requestCover asks the toolgate up behind nc which executor group serves
// each of tools, making or extending groups as needed.
func requestCover(nc *nats.Conn, tools []string) ([]Coverage, error) {
	b, _ := json.Marshal(coverRequest{Tools: tools})
	m, err := nc.Request(coverSubject, b, 10*time.Second)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, errNoLiveGroups
	}
	if err != nil {
		return nil, err
	}
	var r coverReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return nil, fmt.Errorf("toolgate up's answer: %w", err)
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	return r.Tools, nil
}
