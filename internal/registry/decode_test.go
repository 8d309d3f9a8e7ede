package registry_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

func TestRegistry_garbage_put_into_the_bucket_is_told_and_the_others_are_served(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", []byte(weatherV1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(ctx, kv, "tools.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	put := func(key, data string) {
		t.Helper()
		if _, err := js.Publish(ctx, "$KV."+streams.BucketTools+"."+key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	// A definition stored under another tool's name: on the previous main it
	// was served as get_forecast, with delete_account's policy and schema.
	put("get_forecast", `{"name":"delete_account","input_schema":{"type":"object"},"policy":{"risk":"read"}}`)
	put("junk", `not json at all`)
	put("twice", `{"name":"twice","input_schema":{"type":"object"}} {"name":"other"}`)
	var mu sync.Mutex
	told := map[string]bool{}
	reg, err := registry.Open(ctx, kv, zerolog.Nop(), registry.OnMalformed(func(key string, _ error) {
		mu.Lock()
		told[key] = true
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.Names(), ","); got != "get_weather" {
		t.Fatalf("serving %q, want only get_weather", got)
	}
	// The watch goes on after garbage: a later garbage put and a later good
	// definition are both seen.
	put("junk2", `[`)
	if _, err := registry.Apply(ctx, kv, "more.yaml", []tool.Definition{{Name: "get_time", InputSchema: []byte(`{"type":"object"}`)}}, false); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if _, ok := reg.Lookup("get_time"); !ok {
			return fmt.Errorf("get_time not seen after garbage")
		}
		mu.Lock()
		defer mu.Unlock()
		var keys []string
		for k := range told {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if got := strings.Join(keys, ","); got != "get_forecast,junk,junk2,twice" {
			return fmt.Errorf("told %q", got)
		}
		return nil
	})
	if _, _, err := registry.Get(ctx, kv, "get_forecast"); err == nil || !strings.Contains(err.Error(), "delete_account") {
		t.Fatalf("Get of a misnamed definition: %v, want it refused naming the other tool", err)
	}
}

// FuzzDecode: a definition Decode accepts is named as its key.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"t","input_schema":{"type":"object"}}`, `{"name":"u"}`, `junk`, `{} {}`, `{"name":"t","rules":[{"expr":"args.x >"}]}`} {
		f.Add("t", []byte(s))
	}
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		d, err := registry.Decode(key, data)
		if err != nil {
			return
		}
		if d.Name != key {
			t.Fatalf("accepted %q under key %q", d.Name, key)
		}
	})
}
