package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/call"
	"github.com/toolgate/toolgate/pkg/provider"
	"github.com/toolgate/toolgate/streams"
)

// publish sends a whole response, or an SSE / NDJSON transcript event by
// event, as a producer would; with --wait it prints each outcome.
func publish(args []string) error {
	fs := flag.NewFlagSet("publish", flag.ExitOnError)
	url := natsFlag(fs)
	prov := fs.String("provider", "openai-chat", "openai-chat, openai-responses, anthropic, gemini, ollama")
	rid := fs.String("response-id", "", "Toolgate-Response-Id (default: derived from the file name and time)")
	wait := fs.Duration("wait", 0, "wait this long for outcomes and print them")
	tolerant := fs.Bool("tolerant", false, "recover tool calls written as text (Toolgate-Tolerant: true)")
	principal := fs.String("principal", "", "Toolgate-Principal")
	roles := fs.String("roles", "", "Toolgate-Roles, comma separated")
	dryRun := fs.Bool("dry-run", false, "Toolgate-Dry-Run: true")
	fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("publish: want one file (a response body or an SSE/NDJSON transcript)")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	if *rid == "" {
		base := strings.TrimSuffix(filepath.Base(fs.Arg(0)), filepath.Ext(fs.Arg(0)))
		*rid = call.SafeResponseID(fmt.Sprintf("%s-%d", strings.NewReplacer(".", "-", " ", "-").Replace(base), time.Now().UnixMilli()))
	}
	if !call.ValidResponseID(*rid) {
		return fmt.Errorf("publish: --response-id %q: use letters, digits, '-' and '_' (it is a subject token)", *rid)
	}
	nc, js, err := connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	var sub *nats.Subscription
	results := make(chan *nats.Msg, 64)
	if *wait > 0 {
		if sub, err = nc.ChanSubscribe(streams.Results(*rid), results); err != nil {
			return err
		}
		defer sub.Unsubscribe()
	}
	hdr := nats.Header{}
	hdr.Set(streams.HeaderProvider, *prov)
	hdr.Set(streams.HeaderResponseID, *rid)
	setIf(hdr, streams.HeaderPrincipal, *principal)
	setIf(hdr, streams.HeaderRoles, *roles)
	if *tolerant {
		hdr.Set(streams.HeaderTolerant, "true")
	}
	if *dryRun {
		hdr.Set(streams.HeaderDryRun, "true")
	}
	ctx, cancel := timeout()
	defer cancel()
	if provider.IsTranscript(data) {
		events, err := provider.SplitTranscript(data)
		if err != nil {
			return err
		}
		for i, ev := range events {
			m := &nats.Msg{Subject: streams.InStream(*rid), Data: ev, Header: clone(hdr)}
			m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
			m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d", *rid, i+1))
			if _, err := js.PublishMsg(ctx, m); err != nil {
				return fmt.Errorf("publish event %d: %w", i+1, err)
			}
		}
		fmt.Printf("published %s: %d stream events on %s\n", *rid, len(events), streams.InStream(*rid))
	} else {
		m := &nats.Msg{Subject: streams.SubjectInResponse, Data: data, Header: clone(hdr)}
		m.Header.Set(nats.MsgIdHdr, *rid)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		fmt.Printf("published %s: one %s response (%d bytes)\n", *rid, *prov, len(data))
	}
	if *wait > 0 {
		return printResults(ctx, results, *wait)
	}
	return nil
}

// printResults prints outcomes until none has come for a second after the
// first, or wait has passed.
func printResults(ctx context.Context, results <-chan *nats.Msg, wait time.Duration) error {
	deadline := time.After(wait)
	var idle <-chan time.Time
	n := 0
	for {
		select {
		case m := <-results:
			n++
			var r struct {
				CallID  string   `json:"call_id"`
				Tool    string   `json:"tool"`
				Status  string   `json:"status"`
				Failure string   `json:"failure"`
				Errors  []string `json:"errors"`
				Result  any      `json:"result"`
				Text    string   `json:"text"`
			}
			_ = json.Unmarshal(m.Data, &r)
			st := r.Status
			if r.Failure != "" {
				st += " (" + r.Failure + ")"
			}
			id := r.CallID
			if id == "" {
				id = "(response)"
			}
			fmt.Printf("  %-28s %-16s %s\n", id, r.Tool, st)
			for _, e := range r.Errors {
				fmt.Printf("      - %s\n", e)
			}
			if r.Result != nil {
				out, _ := json.Marshal(r.Result)
				fmt.Printf("      result: %s\n", out)
			}
			idle = time.After(time.Second)
		case <-idle:
			return nil
		case <-deadline:
			if n == 0 {
				return fmt.Errorf("no outcome within %v (is `toolgate up` running?)", wait)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func setIf(h nats.Header, k, v string) {
	if v != "" {
		h.Set(k, v)
	}
}

func clone(h nats.Header) nats.Header {
	c := nats.Header{}
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}
