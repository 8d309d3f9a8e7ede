package httpingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Accepted is the answer to a POST: the response id to read outcomes under.
type Accepted struct {
	ResponseID string `json:"response_id"`
	Provider   string `json:"provider"`
	Kind       string `json:"kind"`             // "response" or "stream"
	Events     int    `json:"events,omitempty"` // stream events published
	End        string `json:"end,omitempty"`    // the Toolgate-End reason sent after them
	// Duplicate: JetStream already held exactly this; nothing new was sent
	// and its outcomes came when it first arrived.
	Duplicate bool   `json:"duplicate"`
	Outcomes  string `json:"outcomes"` // the path to GET them
}

// post publishes one response body, or a transcript event by event.
func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	c, ok := s.who(w, r)
	if !ok {
		return
	}
	p, ok := s.producerFor(c.tenant)
	if !ok {
		s.tenantNotServed(w, c.tenant)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("body over %d bytes (the NATS max payload): send a stream's events as a transcript, or raise the server's max_payload", s.cfg.MaxBody))
		return
	case err != nil:
		fail(w, http.StatusBadRequest, CodeBadRequest, "reading the body: "+err.Error())
		return
	case len(strings.TrimSpace(string(body))) == 0:
		fail(w, http.StatusBadRequest, CodeBadRequest, "empty body: POST a provider response (JSON) or a transcript (SSE or NDJSON)")
		return
	}
	m, end, err := metaOf(r.Header, c, body)
	if err != nil {
		fail(w, http.StatusBadRequest, CodeBadRequest, err.Error())
		return
	}
	transcript, err := isTranscript(r.Header.Get("Content-Type"), body)
	if err != nil {
		fail(w, http.StatusBadRequest, CodeBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.PublishWait)
	defer cancel()
	a := Accepted{ResponseID: m.ResponseID, Provider: m.Provider, Kind: "response", Outcomes: strings.Replace(RouteOutcomes, "{id}", m.ResponseID, 1)}
	if transcript {
		events, err := provider.SplitTranscript(body)
		switch {
		case errors.Is(err, provider.ErrCutTranscript) && len(events) > 0:
			if end == "" {
				end = err.Error() // settle at once as unfinished: nothing of it runs
			}
		case err != nil:
			fail(w, http.StatusBadRequest, CodeBadRequest, "transcript: "+err.Error())
			return
		}
		a.Kind, a.Events, a.End = "stream", len(events), end
		err = p.PublishStream(ctx, m, events, end)
		s.published(w, c, a, err)
		return
	}
	if end != "" {
		fail(w, http.StatusBadRequest, CodeBadRequest, "Toolgate-End is for a transcript cut short; this body is one whole response")
		return
	}
	err = p.PublishResponse(ctx, m, body)
	if bad := malformed(body); bad != "" && (err == nil || errors.Is(err, producer.ErrDuplicate)) {
		// A cut response: the caller hears at once that it cannot be
		// read, and toolgate still records it as the rejected response
		// it is (its outcome, its dead letter), as from NATS: nothing lost.
		s.cache.mark(wire.Results(c.tenant, a.ResponseID))
		writeJSON(w, http.StatusBadRequest, problem{Code: CodeBadRequest, ResponseID: a.ResponseID, Outcomes: a.Outcomes,
			Error: fmt.Sprintf("the body is %s; it is recorded as a rejected response, its outcome at %s", bad, a.Outcomes)})
		return
	}
	s.published(w, c, a, err)
}

// published answers a POST once its publish returned; the response is
// known to GET outcomes from then on.
func (s *Server) published(w http.ResponseWriter, c caller, a Accepted, err error) {
	if err == nil || errors.Is(err, producer.ErrDuplicate) {
		s.cache.mark(wire.Results(c.tenant, a.ResponseID))
	}
	switch {
	case errors.Is(err, producer.ErrDuplicate):
		a.Duplicate = true
		writeJSON(w, http.StatusOK, a)
	case errors.Is(err, producer.ErrTooLarge):
		// Refused by TOOLGATE_IN for its size: for good, a retry is refused too.
		fail(w, http.StatusRequestEntityTooLarge, CodeTooLarge, err.Error())
	case errors.Is(err, producer.ErrConflict):
		// Refused at publish: the id holds other content (its claimed
		// subject, pkg/producer); nothing was stored, a retry is refused too.
		fail(w, http.StatusConflict, CodeConflict, err.Error())
	case err != nil:
		s.cfg.Log.Warn().Err(err).Str("response_id", a.ResponseID).Str("credential", c.name).Msg("http ingest: publish failed")
		fail(w, http.StatusServiceUnavailable, CodeUnavailable, err.Error()+"; nothing may have been stored: retry the same request (a retry is stored once)")
	default:
		writeJSON(w, http.StatusAccepted, a)
	}
}

// isTranscript tells a transcript from one response body: by Content-Type
// when it says (text/event-stream, application/x-ndjson, application/jsonl;
// application/json is one body), else by shape (provider.IsTranscript).
func isTranscript(contentType string, body []byte) (bool, error) {
	if contentType == "" {
		return provider.IsTranscript(body), nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false, fmt.Errorf("Content-Type %s: %v", clip(contentType), err)
	}
	switch mt {
	case "text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines":
		return true, nil
	case "application/json":
		return false, nil
	default:
		return provider.IsTranscript(body), nil
	}
}
