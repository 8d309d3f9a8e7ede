package gates

import (
	"sync"

	"github.com/toolgate/toolgate/internal/execute"
)

// memory is what one execute process knows of the keys it claimed, kept
// beside the idempotency store: a delivery of a key this process is running
// waits, and one it already ran gets the answer it got, even when the store
// lost the record (a Redis restarted without persistence, a failover).
// Bounded: the oldest keys are forgotten first.
type memory struct {
	mu   sync.Mutex
	m    map[string]memo
	keys []string
	max  int
}

type memoState int

const (
	memoRunning memoState = iota + 1 // claimed, the executor may be running
	memoDone                         // the executor answered: reply
	memoUnknown                      // sent, and no answer: outcome unknown
)

type memo struct {
	state memoState
	reply execute.Reply
}

func (m *memory) get(key string) (memo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[key]
	return v, ok
}

func (m *memory) put(key string, v memo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]memo{}
		if m.max == 0 {
			m.max = 100_000
		}
	}
	if _, ok := m.m[key]; !ok {
		m.keys = append(m.keys, key)
		if len(m.keys) > m.max {
			delete(m.m, m.keys[0])
			m.keys = m.keys[1:]
		}
	}
	m.m[key] = v
}

func (m *memory) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, key) // its place in keys is dropped when it comes up
}
