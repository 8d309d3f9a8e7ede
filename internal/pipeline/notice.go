package pipeline

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// notifyWaiting tells e's producer, on its response's progress subject
// (the one subject of toolgate's a producer reads besides its results),
// that e waits for w. Nothing without a Notify hook or a wait.
func (em *Emitter) notifyWaiting(e, pub call.Envelope, w *Wait) {
	if em == nil || em.Notify == nil || w == nil {
		return
	}
	data, err := json.Marshal(WaitingNotice(pub, *w))
	if err != nil {
		return
	}
	em.Notify(streams.Progress(e.Request.Tenant, e.ResponseID), data)
}

// WaitingNotice is the notice of a call (pub: as records show it) waiting
// for w: which call, what for, since and until when. It carries neither the
// arguments nor the wait's detail, which may quote them.
func WaitingNotice(pub call.Envelope, w Wait) wire.Waiting {
	return wire.Waiting{
		Kind: wire.NoticeWaiting, ResponseID: pub.ResponseID, CallID: pub.CallID, Tool: pub.ToolName,
		For: w.For, Since: w.Since.UTC(), Until: w.Until.UTC(),
	}
}
