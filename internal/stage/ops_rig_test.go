package stage

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// ops is startPipeline with what an operator looks at: the process's
// metrics, its log, the tool definitions, and executions per call id.
type ops struct {
	*pipe
	metrics *metrics.Metrics
	log     *syncBuffer
	seals   *seal.Keyring // the stages' seal keys: tests seal letters they bury with them
	toolsKV jetstream.KeyValue

	mu   sync.Mutex
	runs map[string]int // executor runs per call id
}

// syncBuffer is a log sink the stages write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startOps runs every stage with examples/tools.yaml and executors for
// create_invoice and get_weather; get_weather in "Atlantis" fails.
func startOps(t *testing.T) *ops { t.Helper(); return startOpsWith(t, nil) }

// startOpsWith is startOps with configure applied to the stages' Config
// too (nil: none).
func startOpsWith(t *testing.T, configure func(*Config)) *ops {
	t.Helper()
	o := &ops{metrics: metrics.New(), log: &syncBuffer{}, runs: map[string]int{}, seals: sealtest.Keys(t)}
	o.pipe = startRig(t, rig{
		exec: func(name string, c toolserver.Call) (any, error) {
			o.mu.Lock()
			o.runs[c.ID]++
			o.mu.Unlock()
			if strings.Contains(string(c.Arguments), "Atlantis") {
				return nil, errors.New("no weather station in Atlantis")
			}
			return map[string]any{"done": name, "call": c.ID}, nil
		},
		configure: func(c *Config) {
			c.Metrics, c.Log, c.Seals = o.metrics, zerolog.New(o.log).Level(zerolog.InfoLevel), o.seals
			if configure != nil {
				configure(c)
			}
		},
	})
	var err error
	if o.toolsKV, err = o.js.KeyValue(o.ctx, streams.BucketTools); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *ops) apply(defs []tool.Definition) {
	o.t.Helper()
	if _, err := registry.Apply(o.ctx, o.toolsKV, "tools.yaml", defs, false); err != nil {
		o.t.Fatal(err)
	}
}

func (o *ops) runsOf(callID string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs[callID]
}

// scrape reads /metrics in process.
func (o *ops) scrape() string {
	o.t.Helper()
	srv := httptest.NewServer(o.metrics.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		o.t.Fatal(err)
	}
	return string(b)
}

// streamText is every message body and header stored in stream on subjects
// matching filter, joined, for "does it contain" checks.
func (o *ops) streamText(stream, filter string) string {
	o.t.Helper()
	st, err := o.js.Stream(o.ctx, stream)
	if err != nil {
		o.t.Fatal(err)
	}
	info, err := st.Info(o.ctx)
	if err != nil {
		o.t.Fatal(err)
	}
	var b strings.Builder
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(o.ctx, seq)
		if err != nil || (filter != "" && !strings.HasPrefix(m.Subject, filter)) {
			continue
		}
		b.WriteString(m.Subject + " " + string(m.Data) + " ")
		for k, v := range m.Header {
			b.WriteString(k + ":" + strings.Join(v, ",") + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}
