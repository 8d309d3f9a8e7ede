package execute

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/tracehdr"
	"github.com/toolgate/toolgate/pkg/wire"
)

// HTTP executes by POSTing the validated arguments to URL.
//
// Request: Content-Type application/json, headers Idempotency-Key and
// Toolgate-Idempotency-Key (the call's key), Toolgate-Call-Id, and
// Toolgate-Signature (wire.SignExec) when Signer is set. The deadline is the
// context's (the gate sets the tool's executor.timeout). The connection is
// dialled only where Allow permits (Destinations); a refused destination is
// ErrNotRun wrapping ErrDestination, and nothing is sent.
//
// Answer, by what is known about the effect:
//   - 2xx: the call happened. A JSON object with an "ok" field is a Reply;
//     any other JSON is the result of an ok call; text that is not JSON is
//     kept as a JSON string; an empty body is ok with no result.
//   - 408, 425, 429, and 503 with Retry-After: the server says it did not
//     process the request: ErrNotRun (retry, after Retry-After if given).
//   - 401 with header Toolgate-Signature-Refused: the tool refused the
//     request's signature and did not run it: ErrNotRun wrapping ErrRefused.
//   - any other 3xx or 4xx: a failed call (Reply{OK: false}) with the
//     status and an excerpt of the body. Redirects are not followed: a POST
//     must not turn into a GET somewhere else.
//   - any other 5xx, a timeout or a broken connection after the request was
//     written, a body that cannot be read: ErrUnknown (it may have run).
//   - a failure before the request was written (DNS, connection refused,
//     TLS handshake, a deadline hit while connecting): ErrNotRun.
//
// An answer over MaxResult bytes is read to its end for its size and sha256
// but kept only as result.Cut's cut form (the note names the limit): what a
// result message can store.
type HTTP struct {
	URL       string
	StatusURL string        // optional: GET StatusURL?idempotency_key=K answers StatusReply
	Signer    *Signer       // signs every request; nil: unsigned
	Allow     *Destinations // where it may connect; nil: nowhere
	Client    *http.Client  // nil: Allow.Client(); a Client given bypasses Allow
	MaxResult int           // bytes of an answer kept whole; 0: DefaultMaxResult
}

// HeaderIdempotencyKey is the conventional HTTP idempotency header.
const HeaderIdempotencyKey = "Idempotency-Key"

// excerptMax bounds the body excerpt in a failed call's error.
const excerptMax = 512

func (h *HTTP) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return h.Allow.Client()
}

// sent classifies a failed Do: a refused destination or a failure before
// the request was written is ErrNotRun, anything later ErrUnknown.
func sent(method, u string, wrote bool, err error) error {
	switch {
	case errors.Is(err, ErrDestination):
		return fmt.Errorf("%w: %s %s: %w", ErrNotRun, method, u, unwrapURL(err))
	case !wrote:
		return fmt.Errorf("%w: %s %s: %v", ErrNotRun, method, u, err)
	}
	return fmt.Errorf("%w: %s %s: sent, then %v", ErrUnknown, method, u, err)
}

// unwrapURL drops url.Error's and net.OpError's wording around a refusal.
func unwrapURL(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if errors.Is(e, ErrDestination) && !isWrapper(e) {
			return e
		}
	}
	return err
}

func isWrapper(e error) bool {
	switch e.(type) {
	case *url.Error, *net.OpError:
		return true
	}
	return false
}

// refusedBySignature reports a tool's answer that it refused the request's
// signature (wire.HeaderSignatureRefused on a 401).
func refusedBySignature(resp *http.Response) (string, bool) {
	r := resp.Header.Get(wire.HeaderSignatureRefused)
	return r, resp.StatusCode == http.StatusUnauthorized && r != ""
}

// Execute implements Executor.
func (h *HTTP) Execute(ctx context.Context, req Request) (Reply, error) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }}
	hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, h.URL, bytes.NewReader(req.Arguments))
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %s: %v", ErrNotRun, h.URL, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set(HeaderIdempotencyKey, req.IdempotencyKey)
	hr.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	hr.Header.Set(wire.HeaderCallID, req.CallID)
	tracehdr.InjectHTTP(ctx, hr.Header)
	sig, err := h.Signer.header(req, "", req.Arguments, 0)
	if err != nil {
		return Reply{}, err
	}
	if sig != "" {
		hr.Header.Set(wire.HeaderSignature, sig)
	}
	resp, err := h.client().Do(hr)
	if err != nil {
		return Reply{}, sent("POST", h.URL, wrote.Load(), err)
	}
	defer resp.Body.Close()
	limit := h.maxResult()
	body, total, sum, rerr := readBody(resp.Body, limit)
	code := resp.StatusCode
	if reason, ok := refusedBySignature(resp); ok {
		return Reply{}, refused(fmt.Sprintf("POST %s", h.URL), reason, excerpt(body))
	}
	switch {
	case code >= 200 && code < 300:
		if rerr != nil {
			return Reply{}, fmt.Errorf("%w: POST %s: HTTP %d, then the answer could not be read: %v", ErrUnknown, h.URL, code, rerr)
		}
		if total > int64(limit) {
			return Reply{OK: true, Result: result.CutSum(body, total, sum, limit, result.ExcerptMax)}, nil
		}
		return replyOf(body), nil
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests,
		code == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		return Reply{}, &notRunAfter{after: retryAfter(resp.Header.Get("Retry-After")),
			msg: fmt.Sprintf("%v: POST %s: HTTP %d (not processed): %s", ErrNotRun, h.URL, code, excerpt(body))}
	case code >= 500:
		return Reply{}, fmt.Errorf("%w: POST %s: HTTP %d: %s", ErrUnknown, h.URL, code, excerpt(body))
	}
	return Reply{OK: false, Error: fmt.Sprintf("HTTP %d %s: %s", code, http.StatusText(code), excerpt(body))}, nil
}

// Status implements StatusQuerier when StatusURL is set.
func (h *HTTP) Status(ctx context.Context, req Request) (StatusReply, error) {
	if h.StatusURL == "" {
		return StatusReply{}, fmt.Errorf("%w: no executor.status_url", ErrNoStatus)
	}
	u, err := url.Parse(h.StatusURL)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: status_url: %v", ErrNoStatus, err)
	}
	q := u.Query()
	q.Set("idempotency_key", req.IdempotencyKey)
	u.RawQuery = q.Encode()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set(HeaderIdempotencyKey, req.IdempotencyKey)
	hr.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	hr.Header.Set(wire.HeaderCallID, req.CallID)
	hr.Header.Set(HeaderQuery, QueryStatus)
	sig, err := h.Signer.header(req, QueryStatus, nil, 0)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	if sig != "" {
		hr.Header.Set(wire.HeaderSignature, sig)
	}
	resp, err := h.client().Do(hr)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %w", ErrNoStatus, sent("GET", h.StatusURL, false, err))
	}
	defer resp.Body.Close()
	body, _, _, err := readBody(resp.Body, h.maxResult())
	reason, refusedSig := refusedBySignature(resp)
	switch {
	case refusedSig:
		return StatusReply{}, fmt.Errorf("%w: %w", ErrNoStatus, refused("GET "+h.StatusURL, reason, excerpt(body)))
	case err != nil:
		return StatusReply{}, fmt.Errorf("%w: GET %s: %v", ErrNoStatus, h.StatusURL, err)
	case resp.StatusCode == http.StatusNotFound:
		return StatusReply{Known: false}, nil
	case resp.StatusCode != http.StatusOK:
		return StatusReply{}, fmt.Errorf("%w: GET %s: HTTP %d: %s", ErrNoStatus, h.StatusURL, resp.StatusCode, excerpt(body))
	}
	return decodeStatus(body)
}

func (h *HTTP) maxResult() int {
	if h.MaxResult > 0 {
		return h.MaxResult
	}
	return DefaultMaxResult
}

// readBody reads up to limit bytes of r and keeps them; the rest is only
// counted and hashed, so an answer of any size costs limit bytes of memory.
// total and sum (hex sha256) describe the whole answer.
func readBody(r io.Reader, limit int) (head []byte, total int64, sum string, err error) {
	hash := sha256.New()
	head, err = io.ReadAll(io.LimitReader(io.TeeReader(r, hash), int64(limit)))
	total = int64(len(head))
	if err == nil {
		var n int64
		n, err = io.Copy(hash, r)
		total += n
	}
	return head, total, hex.EncodeToString(hash.Sum(nil)), err
}

// replyOf reads a 2xx body.
func replyOf(body []byte) Reply {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return Reply{OK: true}
	}
	if !json.Valid(body) {
		s, _ := json.Marshal(string(body))
		return Reply{OK: true, Result: s}
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) == nil {
		if _, ok := probe["ok"]; ok {
			var r Reply
			if err := json.Unmarshal(body, &r); err == nil {
				return r
			}
		}
	}
	return Reply{OK: true, Result: json.RawMessage(body)}
}

func excerpt(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > excerptMax {
		s = s[:excerptMax] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// retryAfter reads a Retry-After header: seconds or an HTTP date; capped at
// five minutes.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), 5*time.Minute)
}

var _ StatusQuerier = (*HTTP)(nil)
