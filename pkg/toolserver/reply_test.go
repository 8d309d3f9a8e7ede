package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// The replies' JSON is the contract with the execute gate and with older
// toolgates: the bytes are pinned, not just their meaning.
func TestReplies_keep_their_exact_JSON(t *testing.T) {
	ok := func(v any) Func { return func(context.Context, Call) (any, error) { return v, nil } }
	cases := []struct {
		name string
		f    Func
		want string
	}{
		{"ok", ok(map[string]any{"charged": 5}), `{"ok":true,"result":{"charged":5}}`},
		{"ok without a result", ok(nil), `{"ok":true,"result":null}`},
		{"ok with a raw result", ok(json.RawMessage(`{"b":1,"a":2}`)), `{"ok":true,"result":{"b":1,"a":2}}`},
		{"error", func(context.Context, Call) (any, error) { return nil, errors.New("card declined") }, `{"error":"card declined","ok":false}`},
		{"panic", func(context.Context, Call) (any, error) { panic("boom") }, `{"error":"tool panicked: boom","ok":false}`},
		{"result not JSON", ok(make(chan int)), `{"error":"result is not JSON: json: unsupported type: chan int","ok":false}`},
	}
	for _, c := range cases {
		if got := string(run(c.f, Call{})); got != c.want {
			t.Errorf("%s: reply %s, want %s", c.name, got, c.want)
		}
	}

	kv := replayBucket(t, replayConn(t, testenv.RunJetStream(t)))
	s := &Server{replay: &replayBuckets{fixed: kv}}
	for key, f := range map[string]Func{"k-ok": ok(map[string]any{"charged": 5}), "k-err": func(context.Context, Call) (any, error) { return nil, errors.New("card declined") }} {
		c := Call{ID: key, IdempotencyKey: key}
		_, rev, taken, err := take(kv, "charge", c)
		if err != nil || !taken {
			t.Fatalf("take %s: %v %v", key, taken, err)
		}
		if err := complete(kv, "charge", c, rev, run(f, c)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, taken, err := take(kv, "charge", Call{ID: "k-run", IdempotencyKey: "k-run"}); err != nil || !taken {
		t.Fatalf("take k-run: %v %v", taken, err)
	}
	status := []struct{ query, key, want string }{
		{"status", "k-ok", `{"known":true,"ok":true,"result":{"charged":5}}`},
		{"status", "k-err", `{"known":true,"error":"card declined"}`},
		{"status", "k-run", `{"known":false}`},
		{"status", "never-seen", `{"known":false}`},
		{"history", "k-ok", `{"error":"unknown Toolgate-Query history (known: status)","ok":false}`},
	}
	for _, c := range status {
		if got := string(s.status("charge", c.query, c.key, 0)); got != c.want {
			t.Errorf("query %s for %q: reply %s, want %s", c.query, c.key, got, c.want)
		}
	}
}
