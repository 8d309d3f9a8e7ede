package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/wirejson"
	"github.com/toolgate/toolgate/internal/worker"
)

// What every result, dead letter, status record and audit event is cut to,
// so that it fits what NATS can store: the connection's max payload (Emitter
// MaxPayload, from nc.MaxPayload()) and worker.MaxHeaderBytes of headers. A
// part over its limit is replaced by its beginning, its size and its sha256,
// with a note that says so (result.Cut, result.CutText).
const (
	// DefaultMaxPayload is nats-server's default max_payload, used when no
	// connection said otherwise (Emitter.MaxPayload unset).
	DefaultMaxPayload int64 = 1 << 20
	// HeaderValueMax bounds a name echoed in a header (Toolgate-Tool,
	// Toolgate-Provider).
	HeaderValueMax = 256
	// InputHeaderMax bounds each producer header kept on a raw dead letter,
	// and is the most a Toolgate-* input header may hold (see gates).
	InputHeaderMax = 1 << 10
	// ErrorHeaderMax bounds Toolgate-Error on a raw dead letter.
	ErrorHeaderMax = 1 << 10
	// TextMax bounds one error or reason in a result, status record, audit
	// event or batch mark.
	TextMax = 4 << 10
	// ErrorsMax is how many errors a record keeps; the rest are counted.
	ErrorsMax = 100
	// ExcerptMax bounds the excerpt of a cut part.
	ExcerptMax = result.ExcerptMax
	// headerRoom is what a payload leaves for the headers of its message.
	headerRoom = 16 << 10
)

// bodyBudget is how many bytes a message body may take.
func (em *Emitter) bodyBudget() int { return int(em.maxPayload()) - headerRoom }

// CutText bounds one error or reason to TextMax (result.CutText).
func CutText(s string) string { return result.CutText(s, TextMax) }

// CutHeaderValue bounds a name echoed in a header to HeaderValueMax.
func CutHeaderValue(s string) string { return result.CutText(s, HeaderValueMax) }

// FitErrors bounds errors: each to TextMax, at most ErrorsMax of them (the
// rest counted in a last entry). errs itself is not changed.
func FitErrors(errs []string) []string {
	if len(errs) == 0 {
		return errs
	}
	n := min(len(errs), ErrorsMax)
	out := make([]string, 0, n+1)
	for _, e := range errs[:n] {
		out = append(out, CutText(e))
	}
	if len(errs) > n {
		out = append(out, fmt.Sprintf("... and %d more errors, cut by toolgate", len(errs)-n))
	}
	return out
}

// fitHeaders makes h fit worker.MaxHeaderBytes, in place: every value over
// limit is cut; if that is not enough, each header but own is folded into
// one value of at most HeaderValueMax; and as a last resort the headers but
// own are replaced by Toolgate-Input-Headers naming their count, size and
// sha256.
func fitHeaders(h nats.Header, msgID string, limit int, own ...string) {
	for k, vs := range h {
		for i, v := range vs {
			vs[i] = result.CutText(v, limit)
		}
		h[k] = vs
	}
	if worker.HeaderBytes(h, msgID) <= worker.MaxHeaderBytes {
		return
	}
	for k, vs := range h {
		if !slices.Contains(own, k) && (len(vs) > 1 || len(vs[0]) > HeaderValueMax) {
			h[k] = []string{result.CutText(strings.Join(vs, ", "), HeaderValueMax)}
		}
	}
	if worker.HeaderBytes(h, msgID) <= worker.MaxHeaderBytes {
		return
	}
	foldHeaders(h, own...)
}

// foldHeaders replaces every header of h but own by one
// HeaderInputHeaders line with their count, size and sha256: the last resort
// when even folded headers leave no room.
func foldHeaders(h nats.Header, own ...string) {
	keys := slices.Sorted(maps.Keys(h))
	sum := sha256.New()
	n, size := 0, 0
	for _, k := range keys {
		if slices.Contains(own, k) {
			continue
		}
		for _, v := range h[k] {
			line := k + ": " + v + "\r\n"
			sum.Write([]byte(line))
			n, size = n+1, size+len(line)
		}
		delete(h, k)
	}
	h.Set(HeaderInputHeaders, fmt.Sprintf("cut by toolgate: %d headers, %d bytes as kept, sha256 %s", n, size, hex.EncodeToString(sum.Sum(nil))))
}

// HeaderInputHeaders stands for a raw dead letter's producer headers when
// even folded they would not fit.
const HeaderInputHeaders = "Toolgate-Input-Headers"

// fitEnvelope returns the body of e for a dead letter: e as it is when it
// fits, else e with every large part cut (raw arguments, arguments, result,
// texts, repair evidence), and as a last resort its cut form.
func (em *Emitter) fitEnvelope(e call.Envelope, body []byte) []byte {
	budget := em.bodyBudget()
	if len(body) <= budget {
		return body
	}
	e.RawArguments = result.CutText(e.RawArguments, ExcerptMax)
	e.Arguments = result.Cut(e.Arguments, ExcerptMax, ExcerptMax)
	e.Result = result.Cut(e.Result, ExcerptMax, ExcerptMax)
	e.Text = result.CutText(e.Text, ExcerptMax)
	e.ToolName = CutText(e.ToolName)
	e.Errors = FitErrors(e.Errors)
	e.ValidTools = FitErrors(e.ValidTools)
	e.Repairs = append([]call.Repair(nil), e.Repairs...)
	for i := range e.Repairs {
		e.Repairs[i].RawArguments = result.CutText(e.Repairs[i].RawArguments, ExcerptMax)
		e.Repairs[i].Answer = result.CutText(e.Repairs[i].Answer, ExcerptMax)
		e.Repairs[i].Errors = FitErrors(e.Repairs[i].Errors)
	}
	e.Note(fmt.Sprintf("cut by toolgate: the envelope was %d bytes, over the %d bytes a dead letter may hold; its large parts hold excerpts, sizes and sha256", len(body), budget))
	return em.fitJSON(e, e.CallID, e.ResponseID)
}

// fitJSON encodes v; when that is over the body budget (or v cannot be
// encoded), it returns the cut form of the encoding, naming the call.
func (em *Emitter) fitJSON(v any, callID, responseID string) []byte {
	data, err := wirejson.Marshal(v)
	if err == nil && len(data) <= em.bodyBudget() {
		return data
	}
	return em.cutForm(data, err, callID, responseID)
}

// cutForm stands for a record that cannot fit even with its parts cut:
// which call it was, its size and sha256, and an excerpt.
func (em *Emitter) cutForm(data []byte, err error, callID, responseID string) []byte {
	return em.cutFormWith(data, err, callID, responseID, ExcerptMax)
}

// cutFormWith is cutForm with an excerpt of at most excerpt bytes.
func (em *Emitter) cutFormWith(data []byte, err error, callID, responseID string, excerpt int) []byte {
	sum := sha256.Sum256(data)
	note := fmt.Sprintf("cut by toolgate: this record is %d bytes, over the %d bytes a message may hold", len(data), em.bodyBudget())
	if err != nil {
		note = "toolgate could not encode this record: " + err.Error()
	}
	out, _ := json.Marshal(map[string]any{
		"call_id": callID, "response_id": responseID, result.CutKey: true,
		"bytes": len(data), "sha256": hex.EncodeToString(sum[:]),
		"excerpt": result.CutText(string(data), excerpt), "note": note,
	})
	return out
}
