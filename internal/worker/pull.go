package worker

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Pull requests expire after pullExpiry, and the server sends a heartbeat
// every pullHeartbeat while one waits. The client notices a pull request the
// server no longer holds only when two heartbeats are missing: with nats.go's
// defaults (30 s, heartbeat 15 s) a stage whose request was lost under load
// stood still for 30 s with thousands of messages pending and none in
// flight (bench: one run in six, the parse consumer at 11,332 pending and 0
// ack-pending until "no heartbeat received"). With these it resumes within
// about 4 s; an idle stage renews its request every 10 s. The request is
// "lost" by a race in nats.go's Messages iterator (v1.55.0), not by the
// server: Next skips issuing a pull request while the previous one is
// still being published (fetchInProgress), and when the stage drains its
// last buffered message in that moment nothing wakes Next again until the
// heartbeats are missed (README, Benchmarks, "Limits";
// internal/natsrepro reproduces it). next works around it.
const (
	pullExpiry    = 10 * time.Second
	pullHeartbeat = 2 * time.Second
	// pullNudge bounds a stand-still from that race: Next waits at most
	// this long before it is called again, then twice as long each time up
	// to pullNudgeMax, and each call issues the pull request a racing one
	// skipped once the publish it raced has returned.
	pullNudge    = 20 * time.Millisecond
	pullNudgeMax = 640 * time.Millisecond
)

func pullOptions(batch int) []jetstream.PullMessagesOpt {
	return []jetstream.PullMessagesOpt{
		jetstream.PullMaxMessages(batch),
		jetstream.PullExpiry(pullExpiry),
		jetstream.PullHeartbeat(pullHeartbeat),
	}
}

// next returns the iterator's next message. It first waits at most
// pullNudge, then twice as long each time up to pullNudgeMax (1.26 s in
// all): if the iterator parked behind a pull request whose publish had not
// yet returned, the next call issues it, so a stage stands still about as
// long as that publish took, doubled. Then it waits without a bound, so
// the iterator's heartbeat monitor (restarted by every call) still notices
// a pull request the server no longer holds, 2 x pullHeartbeat later. A
// busy stage's Next returns at once (a timer per input); an idle one wakes
// six times per idle spell.
func next(iter jetstream.MessagesContext) (jetstream.Msg, error) {
	for d := pullNudge; d <= pullNudgeMax; d *= 2 {
		m, err := iter.Next(jetstream.NextMaxWait(d))
		if !errors.Is(err, nats.ErrTimeout) {
			return m, err
		}
	}
	return iter.Next()
}
