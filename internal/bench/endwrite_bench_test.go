package bench

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// BenchmarkEndWrite is issue 30's cost check for "one write for the end of
// a call" (docs/design/layout.md, "Records"): the end of a call as two
// client writes (a result, then an audit event in its own stream) against
// one write whose audit copy the server makes (the audit stream sources
// the results stream through a subject transform: no client round trip),
// and one stored message alone (the audit fields in it, no copy: the floor).
// Each op is one call's end; cpu-µs/op is this process's CPU (client and
// embedded server) per call, until every audit copy is stored.
//
//	go test -run '^$' -bench BenchmarkEndWrite -benchtime 20000x ./internal/bench/
func BenchmarkEndWrite(b *testing.B) {
	result := bytes.Repeat([]byte("r"), 900) // about a valid call's result
	audit := bytes.Repeat([]byte("a"), 600)  // and its audit event
	for _, mode := range []string{"two-writes", "one-write-sourced-audit", "one-write"} {
		sourced, alone := mode == "one-write-sourced-audit", mode == "one-write"
		b.Run(mode, func(b *testing.B) {
			s := testenv.RunJetStream(b)
			_, js := testenv.Connect(b, s)
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EW_RESULTS", Subjects: []string{"ew.results.>"}, Storage: jetstream.FileStorage}); err != nil {
				b.Fatal(err)
			}
			ac := jetstream.StreamConfig{Name: "EW_AUDIT", Storage: jetstream.FileStorage}
			if alone {
				ac = jetstream.StreamConfig{Name: "EW_AUDIT", Subjects: []string{"ew.unused"}, Storage: jetstream.FileStorage}
			} else if sourced {
				ac.Sources = []*jetstream.StreamSource{{Name: "EW_RESULTS", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "ew.results.>", Destination: "ew.audit.>"}}}}
			} else {
				ac.Subjects = []string{"ew.audit.>"}
			}
			auditStream, err := js.CreateStream(ctx, ac)
			if err != nil {
				b.Fatal(err)
			}
			if alone {
				auditStream, _ = js.Stream(ctx, "EW_RESULTS") // what must be stored: the results
			}
			n := max(b.N, 100)
			body := result
			if sourced || alone {
				body = append(append([]byte{}, result...), audit...) // the result carries the audit fields
			}
			b.ResetTimer()
			start, t0 := Self().CPU, time.Now()
			for i := range n {
				if i%500 == 0 { // a window, as the worker's batches: no stall on outstanding acks
					<-js.PublishAsyncComplete()
				}
				if _, err := js.PublishAsync(fmt.Sprintf("ew.results.t.r%d", i), body); err != nil {
					b.Fatal(err)
				}
				if mode == "two-writes" {
					if _, err := js.PublishAsync("ew.audit.executed", audit); err != nil {
						b.Fatal(err)
					}
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				b.Fatal("publish acks did not come")
			}
			for {
				info, err := auditStream.Info(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if info.State.Msgs >= uint64(n) {
					break
				}
				if time.Since(t0) > 2*time.Minute {
					b.Fatalf("%d of %d audit copies stored", info.State.Msgs, n)
				}
				time.Sleep(time.Millisecond)
			}
			cpu, wall := Self().CPU-start, time.Since(t0)
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/op")
			b.ReportMetric(float64(n)/wall.Seconds(), "calls/s")
		})
	}
}
