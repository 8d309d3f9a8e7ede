package deploy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// TestCluster_stream_leader_lost_under_load_every_accepted_call_has_one_outcome
// runs the pipeline on a three-node cluster with R3 streams and buckets,
// shuts the leader of the gates stream down mid-load, and checks that every
// call JetStream accepted ends in exactly one outcome.
func TestCluster_stream_leader_lost_under_load_every_accepted_call_has_one_outcome(t *testing.T) {
	servers := testenv.RunJetStreamCluster(t)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	url := strings.Join(urls, ",")
	conn := func() *nats.Conn {
		nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	admin := conn()
	js, _ := jetstream.New(admin)
	settings := streams.DefaultSettings()
	settings.Replicas = 3
	settings.AckWait = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	testenv.Eventually(t, 30*time.Second, 200*time.Millisecond, func() error { return streams.Ensure(ctx, js, settings) })
	k := trustKeys(t)
	r := newRig(t, admin, conn(), k)
	runStages(t, url, streams.Names(), true, settings, k, func(string) []nats.Option {
		return []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}
	})

	var (
		mu       sync.Mutex
		accepted []string
		refused  int
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 400 {
			rid := fmt.Sprintf("r3-%d", i)
			ok := r.publish(rid)
			mu.Lock()
			if ok {
				accepted = append(accepted, rid)
			} else {
				refused++
			}
			mu.Unlock()
		}
	}()
	testenv.Eventually(t, 30*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(accepted) < 100 {
			return fmt.Errorf("%d accepted", len(accepted))
		}
		return nil
	})
	st, err := js.Stream(ctx, streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream %s: replicas %d, cluster %+v, want R3", streams.StreamGates, info.Config.Replicas, info.Cluster)
	}
	leader := info.Cluster.Leader
	for _, s := range servers {
		if s.Name() == leader {
			t.Logf("shutting down %s, leader of %s, with %d calls accepted", leader, streams.StreamGates, len(accepted))
			s.Shutdown()
		}
	}
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		ictx, icancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer icancel()
		info, err := st.Info(ictx)
		if err != nil {
			return err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" || info.Cluster.Leader == leader {
			return fmt.Errorf("no new leader yet")
		}
		return nil
	})
	<-done
	mu.Lock()
	all := append([]string(nil), accepted...)
	mu.Unlock()
	t.Logf("%d calls accepted, %d refused during the failover", len(all), refused)
	if len(all) < 300 {
		t.Fatalf("only %d of 400 calls accepted: the cluster did not keep taking work", len(all))
	}
	r.exactlyOnce(all, 60*time.Second)
}
