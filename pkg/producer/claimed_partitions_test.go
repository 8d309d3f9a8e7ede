package producer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 the server stores a tenant's claimed response in its
// partition, on the subject with ".<k>": a retry after the duplicate
// window is refused there (10077) and the producer, which does not know
// P, finds the stored copy by searching the partitions: ErrDuplicate, not
// ErrConflict; other content is ErrConflict.
func TestPublishResponse_finds_its_claimed_copy_in_a_partition(t *testing.T) {
	srv := testenv.RunJetStream(t)
	if err := embedded.Apply(srv, 3); err != nil {
		t.Fatal(err)
	}
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := streams.DefaultSettings()
	s.Storage, s.DedupWindow, s.Fair.Partitions = jetstream.MemoryStorage, 100*time.Millisecond, 3
	if err := streams.Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	p := New(js)
	// An id the mapping puts in a partition other than 0, so the
	// unsuffixed subject in TOOLGATE_RESPONSES holds nothing.
	rid := ""
	for i := range 100 {
		if streams.ResponsePartition("acme", fmt.Sprint("r-", i), 3) == 2 {
			rid = fmt.Sprint("r-", i)
			break
		}
	}
	m := Meta{Provider: "openai-chat", ResponseID: rid, Tenant: "acme"}
	body := []byte(`{"id":"x"}`)
	if err := p.PublishResponse(ctx, m, body); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, streams.ResponsesStream(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, wire.ClaimedPartitionSubject(wire.InTenantClaimed("acme", rid), 2)); err != nil {
		t.Fatalf("not stored in partition 2: %v", err)
	}
	testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error { // past the duplicate window: refused by the per-subject limit
		err := p.PublishResponse(ctx, m, body)
		if !errors.Is(err, ErrDuplicate) {
			t.Fatalf("the same response again: %v, want ErrDuplicate", err)
		}
		if !strings.Contains(err.Error(), "stored at") {
			return fmt.Errorf("still in the duplicate window: %v", err)
		}
		return nil
	})
	if err := p.PublishResponse(ctx, m, []byte(`{"id":"y"}`)); !errors.Is(err, ErrConflict) {
		t.Fatalf("other content under the id: %v, want ErrConflict", err)
	}
}
