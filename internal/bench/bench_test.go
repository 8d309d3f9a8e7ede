package bench

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestStats_percentiles(t *testing.T) {
	s := Stats{Count: 100, Elapsed: 2 * time.Second}
	for i := 1; i <= 100; i++ {
		s.Latencies = append(s.Latencies, time.Duration(i)*time.Millisecond)
	}
	if s.Rate() != 50 {
		t.Fatalf("rate %v, want 50", s.Rate())
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := s.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
}

func TestCeiling_every_message_crosses_every_hop_once(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	st, err := Ceiling(context.Background(), nc, js, 300, 1024, jetstream.FileStorage)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 300 || len(st.Latencies) != 300 || st.Rate() <= 0 {
		t.Fatalf("ceiling stats %v", st)
	}
}
