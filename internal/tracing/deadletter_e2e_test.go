package tracing_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tracing/tracetest"
	"github.com/toolgate/toolgate/streams"
)

// A call whose executor never answers fails at the execute gate: each
// failed delivery writes a waiting status record (the worker's Retrying),
// and at MaxDeliver the call is dead-lettered (max_deliver) with its
// failed result and record. Every one of those messages is built outside
// the gate's handler; each must carry the producer's trace, and the trace
// must hold the gate span's failure class and a dead_letter span. Before,
// none of them had a traceparent.
func TestTracing_dead_letter_and_retry_records_carry_the_producer_trace(t *testing.T) {
	rcv := tracetest.Start(t)
	exportTo(t, rcv)

	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	settings := streams.DefaultSettings()
	settings.MaxDeliver = 3
	if err := streams.Ensure(ctx, js, settings); err != nil {
		t.Fatal(err)
	}
	applyTool(t, js) // no executor listens on toolgate.exec.get_weather

	var mu sync.Mutex
	var records, letters []*nats.Msg
	for subj, into := range map[string]*[]*nats.Msg{"$KV." + streams.BucketCalls + ".>": &records, "toolgate.dlq.>": &letters} {
		sub, err := nc.Subscribe(subj, func(m *nats.Msg) {
			mu.Lock()
			*into = append(*into, m)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := seal.Ensure(dir, streams.Names()); err != nil {
		t.Fatal(err)
	}
	runStage(t, stage.Config{NATSURL: srv.ClientURL(), RedisURL: rds.URL(), IdemStore: stage.IdemRedis, Stages: streams.Names(), SealKeys: dir, SkipEnsure: true,
		Settings: settings, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)})

	publishTraced(t, js, "resp-dlq", "")

	var letter *nats.Msg
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range letters {
			if l.Subject == streams.DLQ(streams.Execute, "max_deliver") {
				letter = l
				return nil
			}
		}
		return fmt.Errorf("no dead letter yet (%d letters)", len(letters))
	})
	if tp := letter.Header["traceparent"]; len(tp) != 1 || !strings.HasPrefix(tp[0], "00-"+producerTrace+"-") {
		t.Errorf("dead letter traceparent %q (headers %v), want one of the producer's trace %s", tp, letter.Header, producerTrace)
	}
	callID := letter.Header.Get(streams.HeaderCallID)
	mu.Lock()
	waiting := 0
	for _, r := range records {
		if r.Subject != streams.CallStatus(callID) {
			continue
		}
		if bytes.Contains(r.Data, []byte(`"waiting":`)) {
			waiting++
		}
		if tp := r.Header["traceparent"]; len(tp) != 1 || !strings.HasPrefix(tp[0], "00-"+producerTrace+"-") {
			t.Errorf("status record %.120s: traceparent %q, want one of the producer's trace", r.Data, tp)
		}
	}
	mu.Unlock()
	if waiting == 0 {
		t.Fatalf("no waiting status record of %s: the retries were not recorded", callID)
	}

	testenv.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		spans := rcv.ByName()
		dl, ok := spans["toolgate.execute.dead_letter"]
		if !ok {
			return fmt.Errorf("no dead_letter span yet (have %d)", len(spans))
		}
		gate := spans["toolgate.execute"]
		if dl.TraceID != producerTrace || dl.Attrs["toolgate.failure"] != "max_deliver" || dl.Attrs["toolgate.call.id"] != callID {
			t.Fatalf("dead_letter span %+v, want trace %s, failure max_deliver, call %s", dl, producerTrace, callID)
		}
		if gate.TraceID != producerTrace || gate.Attrs["toolgate.failure"] == "" {
			t.Fatalf("execute gate span %+v, want the producer's trace and the failure class", gate)
		}
		return nil
	})
}
