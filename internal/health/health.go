// Package health serves /healthz (the process is alive) and /readyz (it is
// connected and consuming) for Kubernetes probes.
package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Check returns nil when the process is ready.
type Check func() error

// Handler returns the probe endpoints; extra handlers (such as /metrics) are
// mounted beside them.
func Handler(ready Check, extra map[string]http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	for path, h := range extra {
		mux.Handle(path, h)
	}
	return mux
}

// Listen binds addr for Serve. A process calls it before anything else, so
// that an address it cannot have stops it at start with a clear error
// instead of leaving it running without probes or metrics.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		cause := err
		var se *os.SyscallError
		if errors.As(err, &se) {
			cause = se.Err // "address already in use", "permission denied"
		}
		return nil, fmt.Errorf("health: %s: %w", addr, cause)
	}
	return l, nil
}

// Serve listens on addr until ctx is done. An empty addr serves nothing.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	if addr == "" {
		<-ctx.Done()
		return nil
	}
	l, err := Listen(addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, l, h)
}

// ServeListener serves h on l until ctx is done, then shuts down (closing
// l). A nil l serves nothing.
func ServeListener(ctx context.Context, l net.Listener, h http.Handler) error {
	if l == nil {
		<-ctx.Done()
		return nil
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	// Stopping: Shutdown, or the owner closing l first, is no error.
	if err == nil || errors.Is(err, http.ErrServerClosed) || (ctx.Err() != nil && errors.Is(err, net.ErrClosed)) {
		return nil
	}
	return err
}
