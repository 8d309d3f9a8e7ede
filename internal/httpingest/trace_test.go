package httpingest

import (
	"net/http"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// storedBy returns the headers of every message st holds, by response id.
func storedBy(t *testing.T, st jetstream.Stream) map[string][]nats.Header {
	t.Helper()
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]nats.Header{}
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		rid := m.Header.Get("Toolgate-Response-Id")
		out[rid] = append(out[rid], m.Header)
	}
	return out
}

// An HTTP producer's trace continues into the NATS messages published for
// it, under the lowercase W3C keys (a NATS reader looks for traceparent,
// not the Traceparent an http.Header spells); a malformed traceparent is
// dropped, never forwarded, and the POST is still accepted. Before, no
// trace context crossed the HTTP ingest.
func TestIngest_carries_a_valid_traceparent_and_drops_a_malformed_one(t *testing.T) {
	url, st := bare(t, nil)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	body := []byte(`{"id":"x","object":"chat.completion","choices":[]}`)
	transcript := []byte("data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	for _, c := range []struct {
		rid, traceparent, tracestate string
		body                         []byte
	}{
		{"tp-ok", tp, "rojo=1", body},
		{"tp-stream", tp, "", transcript},
		{"tp-bad", tp + "-evil", "rojo=1", body},
		{"tp-junk", "<script>alert(1)</script>", "", body},
		{"tp-zero", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", body},
		{"tp-badstate", tp, "not a=tracestate", body},
	} {
		hdr := map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": c.rid, "traceparent": c.traceparent}
		if c.tracestate != "" {
			hdr["tracestate"] = c.tracestate
		}
		var a Accepted
		if code := do(t, http.MethodPost, url+RouteResponses, as("", hdr), c.body, &a); code != http.StatusAccepted {
			t.Fatalf("%s: status %d (%+v), want 202: a bad trace context is dropped, not refused", c.rid, code, a)
		}
	}
	got := storedBy(t, st)
	for rid, want := range map[string][2]string{"tp-ok": {tp, "rojo=1"}, "tp-stream": {tp, ""}, "tp-bad": {}, "tp-junk": {}, "tp-zero": {}, "tp-badstate": {tp, ""}} {
		if len(got[rid]) == 0 {
			t.Fatalf("%s: nothing stored", rid)
		}
		for _, h := range got[rid] {
			if h.Get("Traceparent") != "" || h.Get("Tracestate") != "" {
				t.Errorf("%s: canonical-case trace keys %v", rid, h)
			}
			if tps := h["traceparent"]; want[0] == "" && len(tps) != 0 || want[0] != "" && (len(tps) != 1 || tps[0] != want[0]) {
				t.Errorf("%s: traceparent %q, want %q", rid, tps, want[0])
			}
			if tss := h["tracestate"]; want[1] == "" && len(tss) != 0 || want[1] != "" && (len(tss) != 1 || tss[0] != want[1]) {
				t.Errorf("%s: tracestate %q, want %q", rid, tss, want[1])
			}
		}
	}
}
