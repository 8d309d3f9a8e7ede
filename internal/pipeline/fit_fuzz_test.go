package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// FuzzRaw: whatever headers and body arrive (each within what NATS
// delivered), the raw dead letter fits what NATS can store.
func FuzzRaw(f *testing.F) {
	f.Add("Toolgate-Provider", 40<<10, 3, []byte(`{"x":1}`), 1<<10)
	f.Add("X", 10, 200, []byte("body"), 60<<10)
	f.Fuzz(func(t *testing.T, key string, size, count int, data []byte, errSize int) {
		if key == "" || strings.ContainsAny(key, ":\r\n ") || size < 0 || count < 0 || errSize < 0 {
			return
		}
		size, count, errSize = size%(64<<10), count%300, errSize%(8<<20)
		h := nats.Header{}
		for i := range count {
			h.Add(key, strings.Repeat("v", size/(i+1)))
		}
		m := worker.Msg{Subject: streams.SubjectInResponse, Header: h, Data: data, StreamSeq: 1}
		o := (&Emitter{MaxPayload: 64 << 10}).Raw(streams.Accumulate, "bad", m, errors.New(strings.Repeat("e", errSize)))
		if err := worker.Fits(o, 64<<10); err != nil {
			t.Fatal(err)
		}
	})
}
