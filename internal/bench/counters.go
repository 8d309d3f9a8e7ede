package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ErrNoCounters marks a server whose message counters the bench cannot
// read: the figures made of them are printed as unavailable, with the
// reason, never as a number.
var ErrNoCounters = errors.New("the NATS server's message counters are unavailable")

// Counters reads the NATS server's counters (Varz), of which the bench's
// message and byte figures are differences. The same Varz whichever way it
// is read, so a figure means the same against an embedded server and an
// external one.
type Counters interface {
	Varz(ctx context.Context) (*server.Varz, error)
}

// Embedded reads the counters of the server running in this process.
type Embedded struct{ S *server.Server }

func (e Embedded) Varz(context.Context) (*server.Varz, error) {
	if e.S == nil {
		return nil, errors.New("bench: counters: no server")
	}
	return e.S.Varz(&server.VarzOptions{})
}

// NoCounters is a server whose counters cannot be read, and why.
type NoCounters struct{ Why string }

func (n NoCounters) Varz(context.Context) (*server.Varz, error) {
	return nil, fmt.Errorf("%w: %s", ErrNoCounters, n.Why)
}

// Monitor reads /varz of a server's monitoring port (http://HOST:8222): no
// client message of its own, so it adds nothing to what it reads.
type Monitor struct{ URL string }

func (m Monitor) Varz(ctx context.Context) (*server.Varz, error) {
	var v server.Varz
	if err := getJSON(ctx, strings.TrimSuffix(m.URL, "/")+"/varz", &v); err != nil {
		return nil, fmt.Errorf("bench: counters: %w", err)
	}
	return &v, nil
}

// getJSON decodes what GET url answers into v, within 10 s.
func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return fmt.Errorf("GET %s: %s %s", req.URL, resp.Status, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", req.URL, err)
	}
	return nil
}

// System reads the counters over a connection of the system account
// ($SYS.REQ.SERVER.PING.VARZ). Each read is one request and one reply,
// which the next read counts: two messages per step, against the
// thousands of a step's calls.
type System struct{ NC *nats.Conn }

func (s System) Varz(ctx context.Context) (*server.Varz, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := s.NC.RequestWithContext(ctx, "$SYS.REQ.SERVER.PING.VARZ", []byte("{}"))
	if err != nil {
		return nil, fmt.Errorf("bench: counters: $SYS.REQ.SERVER.PING.VARZ (a user of the system account?): %w", err)
	}
	var resp struct {
		Data  *server.Varz     `json:"data"`
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return nil, fmt.Errorf("bench: counters: $SYS.REQ.SERVER.PING.VARZ: %w", err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("bench: counters: $SYS.REQ.SERVER.PING.VARZ: %s", resp.Error.Description)
	}
	if resp.Data == nil {
		return nil, errors.New("bench: counters: $SYS.REQ.SERVER.PING.VARZ: no data")
	}
	return resp.Data, nil
}

// OpenCounters reads the counters of an external server from where:
// http(s)://… its monitoring port, nats://… a user of its system account;
// empty: unavailable, saying what to give. It reads them once, and a
// server with routes or leaf nodes is unavailable too: one server's
// counters then hold other servers' traffic, and miss what went through
// them. done closes the system connection, if any.
func OpenCounters(ctx context.Context, where string) (c Counters, done func(), err error) {
	done = func() {}
	u, err := url.Parse(where)
	switch {
	case where == "":
		return NoCounters{Why: "the server is external and no --nats-monitor was given (its monitoring port http://HOST:8222, or nats://USER:PASSWORD@HOST:PORT of its system account)"}, done, nil
	case err != nil:
		return nil, done, fmt.Errorf("bench: --nats-monitor %q: %w", where, err)
	case u.Scheme == "http" || u.Scheme == "https":
		c = Monitor{URL: where}
	case u.Scheme == "nats" || u.Scheme == "tls":
		nc, err := nats.Connect(where, nats.Name("toolgate bench counters"), nats.Timeout(5*time.Second))
		if err != nil {
			return nil, done, fmt.Errorf("bench: --nats-monitor: connect to the system account: %w", err)
		}
		c, done = System{NC: nc}, nc.Close
	default:
		return nil, done, fmt.Errorf("bench: --nats-monitor %q: want http(s):// (the monitoring port) or nats:// (a system account user)", where)
	}
	v, err := c.Varz(ctx)
	if err != nil {
		done()
		return nil, func() {}, err
	}
	if v.Routes > 0 || v.Leafs > 0 || v.Remotes > 0 {
		done()
		return NoCounters{Why: fmt.Sprintf("server %s has %d routes and %d leaf nodes: one server's counters are not the bench's traffic", v.Name, v.Routes, v.Leafs)}, func() {}, nil
	}
	return c, done, nil
}
