package modelclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/internal/model"
)

// maxResponse bounds the response body read; a repair answer is one tool
// call, far smaller.
const maxResponse = 4 << 20

// Client sends requests to one configured model endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg   model.Config
	hc    *http.Client
	url   string
	sleep func(context.Context, time.Duration) error
	now   func() time.Time
	rand  func() float64
}

// Option adjusts a Client; used by tests to replace waiting and time.
type Option func(*Client) error

// WithSleep replaces the wait between retries. f must return ctx.Err() when
// ctx ends before d has passed.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) error {
		if f == nil {
			return errors.New("model: WithSleep: nil function")
		}
		c.sleep = f
		return nil
	}
}

// WithClock replaces the clock used to read Retry-After dates.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return errors.New("model: WithClock: nil function")
		}
		c.now = now
		return nil
	}
}

// NewClient validates cfg (filling defaults) and returns a Client that sends
// through hc; a nil hc means a new http.Client. Config.Timeout is applied
// per request through the context, so hc may be shared.
func NewClient(cfg model.Config, hc *http.Client, opts ...Option) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hc == nil {
		hc = &http.Client{}
	}
	u := model.EndpointURL(cfg)
	if cfg.AzureOpenAI() {
		var err error
		if u, err = model.AzureURL(cfg); err != nil {
			return nil, err
		}
	}
	c := &Client{cfg: cfg, hc: hc, url: u, sleep: sleepCtx, now: time.Now, rand: rand.Float64}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Config returns the validated configuration, defaults filled in.
func (c *Client) Config() model.Config { return c.cfg }

// String describes the client without its API key.
func (c *Client) String() string { return "model.Client" + c.cfg.String() }

// Format prints the client through String for every verb, so the key held
// in its unexported fields is never printed by reflection.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// Complete sends req and returns the raw 2xx response body, to be read with
// the provider normalizer named by Config.Protocol ("openai-chat" or
// "anthropic"), and the number of HTTP requests made.
//
// Retryable failures (408, 429, 5xx, network errors, a request that exceeded
// Config.Timeout) are retried up to Config.MaxRetries times, waiting the
// server's Retry-After when given, else an exponential backoff with jitter
// capped at Config.MaxBackoff. A Retry-After longer than MaxBackoff is not
// waited for: that HTTPError is returned at once. When every request failed,
// the error wraps ErrExhausted and the last failure. A permanent failure
// (another 4xx) returns after one request as an *HTTPError. A cancelled ctx
// stops at once, also while waiting, and the error wraps ctx.Err().
func (c *Client) Complete(ctx context.Context, req model.Request) (body []byte, requests int, err error) {
	payload, err := model.Encode(c.cfg, req)
	if err != nil {
		return nil, 0, err
	}
	limit := c.cfg.MaxRetries + 1
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, n - 1, fmt.Errorf("model: stopped: %w", err)
		}
		b, err := c.once(ctx, payload)
		if err == nil {
			return b, n, nil
		}
		if ctx.Err() != nil {
			return nil, n, fmt.Errorf("model: stopped: %w", ctx.Err())
		}
		if !model.Retryable(err) {
			return nil, n, err
		}
		if n >= limit {
			return nil, n, fmt.Errorf("%w after %d requests: %w", model.ErrExhausted, n, err)
		}
		wait := backoff(n, c.cfg.MaxBackoff, c.rand())
		var he *model.HTTPError
		if errors.As(err, &he) && he.HasRetryAfter {
			if he.RetryAfter > c.cfg.MaxBackoff {
				return nil, n, err
			}
			wait = he.RetryAfter
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, n, fmt.Errorf("model: stopped while waiting to retry: %w (last failure: %w)", serr, err)
		}
	}
}

// once makes one HTTP request and classifies its failure.
func (c *Client) once(ctx context.Context, payload []byte) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("model: build request: %w", err)
	}
	setHeaders(hr.Header, c.cfg)
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, c.transportError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, c.transportError(ctx, rctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		he := &model.HTTPError{Protocol: c.cfg.Protocol, Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), Body: cut(redact(string(b), c.cfg.APIKey), maxErrorBody)}
		he.RetryAfter, he.HasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		return nil, he
	}
	if len(b) > maxResponse {
		return nil, fmt.Errorf("model: %s: response larger than %d bytes; lower max tokens", c.cfg.Protocol, maxResponse)
	}
	return b, nil
}

// transportError turns a failed Do or body read into ErrTimeout when the
// per-request deadline passed, the parent's error when it was cancelled, and
// a retryable model.TransportError otherwise.
func (c *Client) transportError(parent, rctx context.Context, err error) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	var ne net.Error
	if errors.Is(rctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: no complete answer from %s within %s", model.ErrTimeout, c.url, c.cfg.Timeout)
	}
	return &model.TransportError{Err: err}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cut keeps the first n bytes of s without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
