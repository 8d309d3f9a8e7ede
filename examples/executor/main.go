// Command executor is an example tool executor: it serves the example tools
// on toolgate.exec.<tool> over NATS request/reply, as a tool author would.
// Run it beside `toolgate up`, from the same directory:
//
//	go run ./examples/executor
//
// It connects as the example executor group's NATS user (executor-example,
// allowed only these tools' subjects), with TOOLGATE_NATS_USER and
// TOOLGATE_NATS_PASSWORD when set, else the password `toolgate up`
// generated in its secrets directory (TOOLGATE_SECRETS, default
// .toolgate/secrets), else without credentials (`toolgate up --insecure`).
// Its micro service is named after the group, the only service name whose
// discovery subjects the user may serve. Each request runs at most once:
// pkg/toolserver records it in the toolgate_exec_replay bucket, or the
// partition's toolgate_exec_replay_<k> the request names (which the group's
// user may write for its own tools), before the tool runs, so a
// captured request sent again, even after a restart, gets the first answer.
// A subscription the server refuses (a tool not in the group) ends the
// program with exit status 1 and the server's reason.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/toolserver"
)

func main() {
	url := flag.String("nats", envOr("TOOLGATE_NATS_URL", nats.DefaultURL), "NATS server URL")
	flag.Parse()
	opts, from := credentials(os.Getenv)
	nc, err := nats.Connect(*url, append(opts, nats.MaxReconnects(-1))...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "executor: connect to %s (%s): %v\n", *url, from, err)
		os.Exit(1)
	}
	defer nc.Drain()
	srv, err := toolserver.New(nc, group, "1.0.0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(1)
	}
	invoices := 0
	must(srv.Handle("create_invoice", func(ctx context.Context, c toolserver.Call) (any, error) {
		var args struct {
			CustomerID string `json:"customer_id"`
			LineItems  []struct {
				Quantity   int `json:"quantity"`
				PriceCents int `json:"price_cents"`
			} `json:"line_items"`
		}
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			return nil, err
		}
		invoices++
		total := 0
		for _, li := range args.LineItems {
			total += li.Quantity * li.PriceCents
		}
		id := fmt.Sprintf("inv_%04d", invoices)
		fmt.Printf("executor: create_invoice %s for %s, total %d cents (idempotency key %s)\n", id, args.CustomerID, total, c.IdempotencyKey[:12])
		return map[string]any{"invoice_id": id, "total_cents": total, "preview_url": "https://billing.invalid/" + id}, nil
	}))
	must(srv.Handle("get_weather", func(ctx context.Context, c toolserver.Call) (any, error) {
		var args struct {
			City string `json:"city"`
		}
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			return nil, err
		}
		fmt.Printf("executor: get_weather %s\n", args.City)
		return map[string]any{"city": args.City, "temperature_c": 21, "conditions": "clear"}, nil
	}))
	must(srv.Handle("delete_customer_account", func(ctx context.Context, c toolserver.Call) (any, error) {
		fmt.Printf("executor: delete_customer_account %s\n", c.Arguments)
		return map[string]any{"deleted": true}, nil
	}))
	fmt.Println("executor: serving create_invoice, get_weather, delete_customer_account on", *url)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// The example executor group (internal/authz: ExampleGroup): its NATS user
// executor-<group>, the file toolgate up keeps its password in, and the
// inbox prefix the user may read, _INBOX_<user>. A tool author's program
// links only pkg/, so they are written out here.
const (
	group      = "example"
	user       = "executor-" + group
	secretsDir = ".toolgate/secrets"
)

// credentials are the connection's options, and where its user and
// password came from.
func credentials(getenv func(string) string) ([]nats.Option, string) {
	if u := getenv("TOOLGATE_NATS_USER"); u != "" {
		return []nats.Option{nats.UserInfo(u, getenv("TOOLGATE_NATS_PASSWORD")), nats.CustomInboxPrefix("_INBOX_" + u)}, "as " + u + " from TOOLGATE_NATS_USER"
	}
	dir := getenv("TOOLGATE_SECRETS")
	if dir == "" {
		dir = secretsDir
	}
	file := filepath.Join(dir, "nats-"+user+".password")
	if b, err := os.ReadFile(file); err == nil {
		return []nats.Option{nats.UserInfo(user, strings.TrimSpace(string(b))), nats.CustomInboxPrefix("_INBOX_" + user)}, "as " + user + " from " + file
	}
	return nil, "without credentials: no " + file + "; set TOOLGATE_SECRETS to the secrets directory of toolgate up"
}
