package httpingest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// ingest is an HTTP ingest over a real pipeline.
type ingest struct {
	pipe *pipetest.Pipe
	url  string
}

// startIngest runs the pipeline with the tenants' producer users, a
// counting example executor, and the HTTP ingest with one source per
// tenant ("" first), each connected as that tenant's producer user.
func startIngest(t *testing.T, issuer *pipetest.Issuer, tenants []string, adjust func(*Config)) *ingest {
	t.Helper()
	var idc identity.Config
	if issuer != nil {
		idc = issuer.Config
	}
	p := pipetest.Start(t, pipetest.Options{Tenants: tenants, Identity: idc})
	p.Serve(t, func(tool string, c toolserver.Call) (any, error) {
		return map[string]any{"done": tool, "call": c.ID}, nil
	})
	cfg := Config{Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), Credentials: credentials(append([]string{""}, tenants...)...)}
	for _, tn := range append([]string{""}, tenants...) {
		_, js := p.Connect(t, authz.ProducerUser(tn))
		cfg.Sources = append(cfg.Sources, Source{Tenants: []string{tn}, JS: js})
	}
	if issuer != nil {
		v, err := identity.New(context.Background(), issuer.Config)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Verifier = v
	}
	if adjust != nil {
		adjust(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &ingest{pipe: p, url: hs.URL}
}

// token is the rig's bearer token of tenant's producer.
func token(tenant string) string { return "test-bearer-" + tenant + "-0123456789abcdef" }

// credentials are the rig's credentials, one per tenant ("" the
// tenant-less producer), each acting for its tenant only.
func credentials(tenants ...string) []Credential {
	var out []Credential
	for _, tn := range tenants {
		out = append(out, Credential{Name: "producer-" + tn, Token: token(tn), Tenants: []string{tn}})
	}
	return out
}

// as is hdr with tenant's producer's bearer token.
func as(tenant string, hdr map[string]string) map[string]string {
	out := map[string]string{"Authorization": "Bearer " + token(tenant)}
	for k, v := range hdr {
		out[k] = v
	}
	return out
}

// do sends one request and decodes its JSON answer into out (if not nil).
func do(t *testing.T, method, url string, hdr map[string]string, body []byte, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %s", method, url, ct, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return resp.StatusCode
}

func example(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pipetest.Root(), "examples", "responses", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// result is the part of an outcome the tests read.
type result struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
}

func results(t *testing.T, o Outcomes) []result {
	t.Helper()
	var out []result
	for _, raw := range o.Outcomes {
		var r result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
