package idem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

// stores runs the same contract against every implementation.
func stores(t *testing.T) map[string]func(t *testing.T) Store {
	return map[string]func(t *testing.T) Store{
		"redis": func(t *testing.T) Store {
			r := testenv.RunRedis(t)
			c := redis.NewClient(&redis.Options{Addr: r.Addr})
			t.Cleanup(func() { c.Close() })
			return NewRedis(c)
		},
		"kv": func(t *testing.T) Store {
			s := testenv.RunJetStream(t)
			_, js := testenv.Connect(t, s)
			kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "idem", TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			return NewKV(kv)
		},
	}
}

func record(callID, args, owner string, lease time.Duration) Record {
	return Record{
		Key: Key(callID, "create_invoice", []byte(args)), CallID: callID, Tool: "create_invoice",
		Fingerprint: Fingerprint("create_invoice", []byte(args)), Owner: owner,
		LeaseUntil: time.Now().Add(lease), ClaimedAt: time.Now(),
	}
}

func TestStore_contract(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			t.Run("first_claim_wins_and_second_sees_pending", func(t *testing.T) {
				a := record("r1-0", `{"a":1}`, "owner-a", time.Minute)
				if _, claimed, err := s.Claim(ctx, a, time.Hour); err != nil || !claimed {
					t.Fatalf("first claim: claimed=%v err=%v", claimed, err)
				}
				b := a
				b.Owner = "owner-b"
				got, claimed, err := s.Claim(ctx, b, time.Hour)
				if err != nil || claimed {
					t.Fatalf("second claim: claimed=%v err=%v", claimed, err)
				}
				if got.State != Pending || got.Owner != "owner-a" || !got.LeaseLive(time.Now()) {
					t.Fatalf("second claim saw %+v, want owner-a's live pending record", got)
				}
			})
			t.Run("completed_returns_stored_result", func(t *testing.T) {
				a := record("r2-0", `{"a":1}`, "owner-a", time.Minute)
				if _, claimed, err := s.Claim(ctx, a, time.Hour); err != nil || !claimed {
					t.Fatalf("claim: %v %v", claimed, err)
				}
				if err := s.Complete(ctx, a.Key, "owner-a", true, json.RawMessage(`{"invoice_id":"inv_1"}`), "", time.Hour); err != nil {
					t.Fatal(err)
				}
				got, claimed, err := s.Claim(ctx, record("r2-0", `{"a":1}`, "owner-c", time.Minute), time.Hour)
				if err != nil || claimed {
					t.Fatalf("claim after completion: claimed=%v err=%v", claimed, err)
				}
				if got.State != Completed || !got.OK || string(got.Result) != `{"invoice_id":"inv_1"}` {
					t.Fatalf("got %+v, want the stored result", got)
				}
			})
			t.Run("result_bytes_kept_exactly", func(t *testing.T) {
				a := record("r8-0", `{"a":1}`, "owner-a", time.Minute)
				if _, claimed, err := s.Claim(ctx, a, time.Hour); err != nil || !claimed {
					t.Fatalf("claim: %v %v", claimed, err)
				}
				res := `{"n":12345678901234567890,"s":"\"state\":\"pending\"","f":1.50}`
				if err := s.Complete(ctx, a.Key, "owner-a", true, json.RawMessage(res), "", time.Hour); err != nil {
					t.Fatal(err)
				}
				got, found, err := s.Get(ctx, a.Key)
				if err != nil || !found || got.State != Completed || string(got.Result) != res || got.CompletedAt.IsZero() {
					t.Fatalf("got %+v %v %v, want completed with result %s byte for byte", got, found, err, res)
				}
			})
			t.Run("expired_lease_stays_visible", func(t *testing.T) {
				a := record("r3-0", `{}`, "owner-a", -time.Second)
				if _, claimed, err := s.Claim(ctx, a, time.Hour); err != nil || !claimed {
					t.Fatalf("claim: %v %v", claimed, err)
				}
				got, claimed, err := s.Claim(ctx, record("r3-0", `{}`, "owner-b", time.Minute), time.Hour)
				if err != nil || claimed {
					t.Fatalf("claim over expired lease: claimed=%v err=%v (must not re-run blindly)", claimed, err)
				}
				if got.State != Pending || got.LeaseLive(time.Now()) {
					t.Fatalf("got %+v, want pending with expired lease", got)
				}
			})
			t.Run("same_call_other_arguments_conflicts", func(t *testing.T) {
				if _, _, err := s.Claim(ctx, record("r4-0", `{"amount":1}`, "o", time.Minute), time.Hour); err != nil {
					t.Fatal(err)
				}
				_, claimed, err := s.Claim(ctx, record("r4-0", `{"amount":1000}`, "o", time.Minute), time.Hour)
				if !errors.Is(err, ErrConflict) || claimed {
					t.Fatalf("claimed=%v err=%v, want ErrConflict", claimed, err)
				}
			})
			t.Run("only_owner_completes_or_releases", func(t *testing.T) {
				a := record("r5-0", `{}`, "owner-a", time.Minute)
				if _, _, err := s.Claim(ctx, a, time.Hour); err != nil {
					t.Fatal(err)
				}
				if err := s.Complete(ctx, a.Key, "owner-b", true, nil, "", time.Hour); !errors.Is(err, ErrNotOwner) {
					t.Fatalf("complete by stranger: %v, want ErrNotOwner", err)
				}
				if err := s.Release(ctx, a.Key, "owner-b"); !errors.Is(err, ErrNotOwner) {
					t.Fatalf("release by stranger: %v, want ErrNotOwner", err)
				}
				if err := s.Release(ctx, a.Key, "owner-a"); err != nil {
					t.Fatal(err)
				}
				if _, claimed, err := s.Claim(ctx, record("r5-0", `{}`, "owner-b", time.Minute), time.Hour); err != nil || !claimed {
					t.Fatalf("claim after release: claimed=%v err=%v", claimed, err)
				}
			})
			t.Run("completed_cannot_complete_again", func(t *testing.T) {
				a := record("r6-0", `{}`, "owner-a", time.Minute)
				if _, _, err := s.Claim(ctx, a, time.Hour); err != nil {
					t.Fatal(err)
				}
				if err := s.Complete(ctx, a.Key, "owner-a", false, nil, "card declined", time.Hour); err != nil {
					t.Fatal(err)
				}
				if err := s.Complete(ctx, a.Key, "owner-a", true, nil, "", time.Hour); !errors.Is(err, ErrNotOwner) {
					t.Fatalf("second complete: %v, want ErrNotOwner", err)
				}
				got, found, err := s.Get(ctx, a.Key)
				if err != nil || !found || got.OK || got.Error != "card declined" {
					t.Fatalf("get: %+v %v %v", got, found, err)
				}
			})
			t.Run("concurrent_claims_one_winner", func(t *testing.T) {
				var wg sync.WaitGroup
				var mu sync.Mutex
				winners := 0
				for i := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, claimed, err := s.Claim(ctx, record("r7-0", `{"x":1}`, fmt.Sprint("owner-", i), time.Minute), time.Hour)
						if err != nil {
							t.Error(err)
						}
						if claimed {
							mu.Lock()
							winners++
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				if winners != 1 {
					t.Fatalf("%d claims won, want exactly 1", winners)
				}
			})
		})
	}
}
