package idem

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestStore_malformed_stored_record_is_a_stand_in_never_a_claim_or_an_answer(t *testing.T) {
	ctx := context.Background()
	rds := testenv.RunRedis(t)
	c := redis.NewClient(&redis.Options{Addr: rds.Addr})
	t.Cleanup(func() { c.Close() })
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "idem", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rs, ks := NewRedis(c), NewKV(kv)
	for name, tc := range map[string]struct {
		s   Store
		put func(key, data string) error
	}{
		"redis": {rs, func(key, data string) error { return c.Set(ctx, rs.recKey(key), data, 0).Err() }},
		"kv":    {ks, func(key, data string) error { _, err := kv.Put(ctx, key, []byte(data)); return err }},
	} {
		t.Run(name, func(t *testing.T) {
			for i, data := range []string{`garbage`, `{"state":"completed","ok":true,"result":1}`, `{"key":"%s","call_id":"other-0","fingerprint":"%s","state":"completed","ok":true}`} {
				a := record("rm"+string(rune('0'+i))+"-0", `{"a":1}`, "owner-a", time.Minute)
				if strings.Contains(data, "%s") {
					data = strings.Replace(strings.Replace(data, "%s", a.Key, 1), "%s", a.Fingerprint, 1)
				}
				if err := tc.put(a.Key, data); err != nil {
					t.Fatal(err)
				}
				got, claimed, err := tc.s.Claim(ctx, a, time.Hour)
				if err != nil || claimed || got.Malformed == "" || got.State != Pending || got.LeaseLive(time.Now()) || got.Key != a.Key {
					t.Fatalf("claim over %q: %+v claimed=%v %v, want a malformed stand-in", data, got, claimed, err)
				}
				// Only a claim knows which call the key is for; Get checks the rest.
				if rec, found, err := tc.s.Get(ctx, a.Key); err != nil || !found || (i < 2 && rec.Malformed == "") {
					t.Fatalf("get of %q: %+v %v %v", data, rec, found, err)
				}
				if err := tc.s.Complete(ctx, a.Key, "", true, json.RawMessage(`1`), "", time.Hour); err == nil {
					t.Fatalf("completed a malformed record %q", data)
				}
			}
		})
	}
}

// FuzzDecode: any stored bytes give either a record that keeps the
// invariants or a stand-in that can neither be taken for a claim in
// progress nor for an answer.
func FuzzDecode(f *testing.F) {
	r := record("f-0", `{"a":1}`, "owner", time.Minute)
	r.State = Pending
	good, _ := json.Marshal(r)
	r.State, r.OK, r.Result = Completed, true, json.RawMessage(`{"x":1}`)
	done, _ := json.Marshal(r)
	for _, s := range [][]byte{good, done, []byte(`garbage`), []byte(`{}`), []byte(`{"state":"completed"}`), []byte(`null`)} {
		f.Add(r.Key, s)
	}
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		rec := Decode(key, data)
		if rec.Malformed != "" {
			if rec.State != Pending || rec.Key != key || rec.Owner != "" || rec.LeaseLive(time.Now()) || rec.OK || rec.Result != nil {
				t.Fatalf("stand-in %+v", rec)
			}
			return
		}
		if err := rec.check(key); err != nil {
			t.Fatalf("accepted %+v: %v", rec, err)
		}
	})
}
