// Command toolgate is the one operator binary: up (every stage in one
// process over an embedded NATS server), tools, publish, status, streams and
// probe. Configuration by flags and TOOLGATE_* environment variables.
package main

import (
	"fmt"
	"os"
)

const usage = `toolgate — tool calls as untrusted proposals

Usage:
  toolgate up [--listen 127.0.0.1:4222] [--data DIR] [--tools FILE] [--http :8080]
  toolgate tools apply -f tools.yaml [--prune]
  toolgate tools ls
  toolgate tools show NAME
  toolgate publish --provider P [--response-id ID] [--wait 5s] FILE
  toolgate status CALL-ID
  toolgate calls ls [--response ID] [--status S] [--tool T] [--since 1h]
  toolgate dlq ls|show SEQ|replay|purge [--stage S --failure F --tool T --since 2h --until 1h]
  toolgate approvals ls [--all] | approvals show CALL-ID
  toolgate approve CALL-ID --by NAME [--reason TEXT] [--hash HASH]
  toolgate deny CALL-ID --by NAME [--reason TEXT]
  toolgate streams apply
  toolgate authz render          (least-privilege NATS users; up --least-privilege runs them)
  toolgate probe URL
  toolgate chaos [--n 5000] [--rate 100] [--kill-every 2s] [--keep]
  toolgate chaos --hostile [--duration 10s] [--rate 50] [--mem-cap 4GiB] [--inputs a,b] [--keep]

Environment: TOOLGATE_NATS_URL (default nats://127.0.0.1:4222), TOOLGATE_REDIS_URL
(idempotency keys; empty: a JetStream key-value bucket), TOOLGATE_HTTP_ADDR,
TOOLGATE_LOG_LEVEL, TOOLGATE_DATA.
`

// commands maps a command name to its implementation; each command's file
// registers itself in init, so commands live one per file.
var commands = map[string]func(args []string) error{}

func register(name string, f func(args []string) error) { commands[name] = f }

func init() {
	register("up", up)
	register("tools", tools)
	register("publish", publish)
	register("status", status)
	register("streams", streamsCmd)
	register("probe", probe)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Print(usage)
		return
	}
	f, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(os.Stderr, "toolgate: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err := f(args); err != nil {
		fmt.Fprintln(os.Stderr, "toolgate:", err)
		os.Exit(1)
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
