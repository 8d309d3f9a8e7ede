package idem

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// On a real three-node cluster every script runs: its KEYS share one slot
// (the {idem} hash tag), else Redis refuses it with CROSSSLOT.
func TestRedis_cluster_scripts_run_with_keys_in_one_slot(t *testing.T) {
	addrs := testenv.RunCluster(t)
	s := dialT(t, "redis-cluster://"+strings.Join(addrs, ","))
	ctx := context.Background()
	for _, key := range []string{"a", "b", "c", "d", "e", "f"} {
		if _, claimed, err := s.Claim(ctx, claimRec(key, "o"), time.Hour); err != nil || !claimed {
			t.Fatalf("claim %s: claimed=%v err=%v", key, claimed, err)
		}
		other := claimRec(key+"x", "o")
		other.CallID = "call-" + key
		if _, _, err := s.Claim(ctx, other, time.Hour); !errors.Is(err, ErrConflict) {
			t.Fatalf("same call id, other arguments: err=%v, want ErrConflict", err)
		}
		if err := s.Complete(ctx, key, "o", true, []byte(`{"n":1}`), "", time.Hour); err != nil {
			t.Fatalf("complete %s: %v", key, err)
		}
		got, found, err := s.Get(ctx, key)
		if err != nil || !found || got.State != Completed || string(got.Result) != `{"n":1}` {
			t.Fatalf("get %s: %+v found=%v err=%v", key, got, found, err)
		}
		if _, claimed, err := s.Claim(ctx, claimRec(key+"r", "o"), time.Hour); err != nil || !claimed {
			t.Fatalf("claim %sr: %v %v", key, claimed, err)
		}
		if err := s.Release(ctx, key+"r", "o"); err != nil {
			t.Fatalf("release: %v", err)
		}
	}
	for _, k := range s.scriptKeys("any", "call") {
		if !strings.HasPrefix(k, clusterPrefix) {
			t.Fatalf("cluster key %q lacks the hash tag", k)
		}
	}
}
