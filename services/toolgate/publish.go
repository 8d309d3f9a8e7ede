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

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/streams"
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
	maxTokens := fs.Int("max-tokens", 0, "Toolgate-Max-Tokens: the request's output token cap")
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
	if *maxTokens > 0 {
		hdr.Set(streams.HeaderMaxTokens, strconv.Itoa(*maxTokens))
	}
	ctx, cancel := timeout()
	defer cancel()
	if provider.IsTranscript(data) {
		events, err := provider.SplitTranscript(data)
		if err != nil {
			return err
		}
		// A recording may hold several responses back to back (an agent
		// loop): each becomes its own response id, as a producer would send it.
		for r, group := range splitResponses(*prov, events) {
			id := *rid
			if r > 0 {
				id = fmt.Sprintf("%s-r%d", *rid, r+1)
				if sub != nil {
					s2, err := nc.ChanSubscribe(streams.Results(id), results)
					if err != nil {
						return err
					}
					defer s2.Unsubscribe()
				}
			}
			h := clone(hdr)
			h.Set(streams.HeaderResponseID, id)
			for i, ev := range group {
				m := &nats.Msg{Subject: streams.InStream(id), Data: ev, Header: clone(h)}
				m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
				m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d", id, i+1))
				if _, err := js.PublishMsg(ctx, m); err != nil {
					return fmt.Errorf("publish event %d: %w", i+1, err)
				}
			}
			fmt.Printf("published %s: %d stream events on %s\n", id, len(group), streams.InStream(id))
		}
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

// splitResponses cuts a transcript's events into responses: a new one
// starts where the provider's accumulator says the previous one ended.
func splitResponses(prov string, events [][]byte) [][][]byte {
	var groups [][][]byte
	var cur [][]byte
	acc, err := provider.NewAccumulator(prov)
	if err != nil {
		return [][][]byte{events}
	}
	for _, ev := range events {
		if err := acc.Add(ev); errors.Is(err, provider.ErrAfterTerminal) && len(cur) > 0 && !isTrailer(ev) {
			groups = append(groups, cur)
			cur = nil
			acc, _ = provider.NewAccumulator(prov)
			_ = acc.Add(ev)
		}
		cur = append(cur, ev)
	}
	return append(groups, cur)
}

// isTrailer reports the events that may follow a terminal one in the same
// response ([DONE], a usage-only chunk).
func isTrailer(ev []byte) bool {
	t := strings.TrimSpace(string(ev))
	return t == "[DONE]" || strings.Contains(t, `"choices":[]`)
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
