package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// BigAnswerTool is the soak's HTTP tool: it answers BigAnswerSize bytes.
const (
	BigAnswerTool = "hostile_big_answer"
	BigAnswerSize = 6 << 20
)

// execution is what a tool received for one call.
type execution struct {
	Tool    string
	Changed bool // the arguments held U+FFFD or were not valid UTF-8
}

// hostileTools serves examples/tools.yaml's tools (pkg/toolserver) and the
// 6 MB HTTP tool, and records every call they received.
type hostileTools struct {
	srv  *toolserver.Server
	http *http.Server

	mu   sync.Mutex
	runs map[string]execution // call id -> what the tool received
	big  int                  // requests to the HTTP tool
}

func startHostileTools(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, secretsDir string) (*hostileTools, error) {
	t := &hostileTools{runs: map[string]execution{}}
	pub, err := os.ReadFile(filepath.Join(secretsDir, wire.ExecPublicKeyFile)) // toolgate up's signing key
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	keys, err := wire.ParseExecPublicKeys(string(pub))
	if err != nil {
		return nil, err
	}
	srv, err := toolserver.New(nc, "hostile-soak-tools", "1.0.0", toolserver.PublicKey(keys...))
	if err != nil {
		return nil, err
	}
	t.srv = srv
	for _, name := range []string{"create_invoice", "get_weather", "delete_customer_account"} {
		name := name
		err := srv.Handle(name, func(ctx context.Context, c toolserver.Call) (any, error) {
			changed := !utf8.Valid(c.Arguments) || strings.ContainsRune(string(c.Arguments), utf8.RuneError) ||
				strings.Contains(strings.ToLower(string(c.Arguments)), `\ufffd`)
			t.mu.Lock()
			t.runs[c.ID] = execution{Tool: name, Changed: changed}
			t.mu.Unlock()
			return map[string]any{"tool": name, "ok": true}, nil
		})
		if err != nil {
			t.close()
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.close()
		return nil, fmt.Errorf("chaos: %w", err)
	}
	big := []byte(`{"report":"` + strings.Repeat("r", BigAnswerSize-len(`{"report":""}`)) + `"}`)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.big++
		t.runs[r.Header.Get(streams.HeaderCallID)] = execution{Tool: BigAnswerTool}
		t.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(big)
	})
	t.http = &http.Server{Handler: mux}
	go func() { _ = t.http.Serve(l) }()
	if err := applyBigAnswerTool(ctx, js, "http://"+l.Addr().String()+"/big"); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// applyBigAnswerTool adds the HTTP tool beside examples/tools.yaml's.
func applyBigAnswerTool(ctx context.Context, js jetstream.JetStream, url string) error {
	yaml := fmt.Sprintf(`
tools:
  - name: %s
    description: Answers 6 MB (served by the hostile soak on 127.0.0.1).
    input_schema:
      type: object
      properties: {q: {type: string}}
      required: [q]
      additionalProperties: false
    policy: {risk: read}
    executor: {type: http, url: %q, timeout: 10s}
`, BigAnswerTool, url)
	defs, err := tool.Load("hostile-tools.yaml", []byte(yaml))
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	_, err = registry.Apply(ctx, kv, "hostile-tools.yaml", defs, false)
	return err
}

func (t *hostileTools) received(callID string) (execution, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.runs[callID]
	return e, ok
}

// close stops serving; a soak that ends has no use for their errors.
func (t *hostileTools) close() {
	if t.srv != nil {
		_ = t.srv.Stop()
	}
	if t.http != nil {
		_ = t.http.Close()
	}
}
