// Command mytool serves one tool, convert_currency, to toolgate: the
// walkthrough "Your own tool in five minutes" in docs/tools.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/toolserver"
)

func main() {
	// toolgate tools apply made this tool's executor group and its user.
	const group, user = "convert-currency", "executor-convert-currency"
	pw, err := os.ReadFile(filepath.Join(os.Getenv("TOOLGATE_SECRETS"), "nats-"+user+".password"))
	check(err)
	nc, err := nats.Connect(os.Getenv("TOOLGATE_NATS_URL"),
		nats.UserInfo(user, strings.TrimSpace(string(pw))), nats.CustomInboxPrefix("_INBOX_"+user))
	check(err)
	defer nc.Drain()
	srv, err := toolserver.New(nc, group, "1.0.0") // verifies toolgate's signature on every call
	check(err)
	rates := map[string]float64{"EUR": 0.92, "GBP": 0.79, "JPY": 151.2}
	check(srv.Handle("convert_currency", func(ctx context.Context, c toolserver.Call) (any, error) {
		var args struct {
			Amount float64 `json:"amount"`
			To     string  `json:"to"`
		}
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			return nil, err
		}
		return map[string]any{"amount": math.Round(args.Amount*rates[args.To]*100) / 100, "currency": args.To}, nil
	}))
	check(nc.Flush())
	fmt.Println("mytool: serving convert_currency")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mytool:", err)
		os.Exit(1)
	}
}
