package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// publish sends a whole response, or an SSE / NDJSON transcript event by
// event, as a producer would; with --wait it prints each outcome.
func publish(args []string) error {
	fs := flag.NewFlagSet("publish", flag.ExitOnError)
	url := natsFlag(fs)
	prov := fs.String("provider", provider.OpenAIChat, strings.Join(provider.Names(), ", "))
	rid := fs.String("response-id", "", "Toolgate-Response-Id (default: derived from the file name and time)")
	wait := fs.Duration("wait", 0, "wait this long for outcomes and print them")
	tolerant := fs.Bool("tolerant", false, "recover tool calls written as text (Toolgate-Tolerant: true)")
	principal := fs.String("principal", "", "Toolgate-Principal (ignored where toolgate verifies identity: the token's is used)")
	roles := fs.String("roles", "", "Toolgate-Roles, comma separated (ignored where toolgate verifies identity)")
	tenant := fs.String("tenant", os.Getenv("TOOLGATE_TENANT"), "Toolgate-Tenant, and the tenant whose results --wait reads (TOOLGATE_TENANT); where toolgate verifies identity, give the token's tenant")
	token := fs.String("token", os.Getenv("TOOLGATE_TOKEN"), "identity token, a JWT of the deployment's issuer, sent as Toolgate-Token (TOOLGATE_TOKEN)")
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
	p := producer.New(js).ForTenant(*tenant)
	// Watch before publishing: a fast pipeline's outcomes come before the
	// last publish returns.
	var w *producer.Watch
	if *wait > 0 {
		if w, err = p.Watch(*rid); err != nil {
			return err
		}
		defer w.Stop()
	}
	meta := producer.Meta{Provider: *prov, ResponseID: *rid, Tenant: *tenant, Principal: *principal, Roles: *roles, Token: *token,
		Tolerant: *tolerant, DryRun: *dryRun, MaxTokens: *maxTokens}
	ctx, cancel := timeout()
	defer cancel()
	sent, dups := 0, 0
	if provider.IsTranscript(data) {
		events, cut, err := transcriptEvents(data)
		if err != nil {
			return err
		}
		// A recording may hold several responses back to back (an agent
		// loop): each becomes its own response id, as a producer would send it.
		groups := splitResponses(*prov, events)
		for r, group := range groups {
			m := meta
			if r > 0 {
				m.ResponseID = fmt.Sprintf("%s-r%d", *rid, r+1)
				if w != nil {
					if err := w.Add(m.ResponseID); err != nil {
						return err
					}
				}
			}
			end := ""
			if r == len(groups)-1 {
				end = cut // the last response ends where the recording was cut
			}
			err := p.PublishStream(ctx, m, group, end)
			if errors.Is(err, producer.ErrDuplicate) {
				dups++
				fmt.Println(duplicateLine(m.ResponseID))
				continue
			}
			if err != nil {
				return err
			}
			sent++
			fmt.Printf("published %s: %d stream events on %s\n", m.ResponseID, len(group), wire.InStream(m.ResponseID))
			if end != "" {
				fmt.Printf("  then %s: %s\n", wire.HeaderEnd, end)
			}
		}
	} else {
		err := p.PublishResponse(ctx, meta, data)
		if errors.Is(err, producer.ErrDuplicate) {
			dups++
			fmt.Println(duplicateLine(*rid))
		} else if err != nil {
			return err
		} else {
			sent++
			fmt.Printf("published %s: one %s response (%d bytes)\n", *rid, *prov, len(data))
		}
	}
	if sent == 0 && dups > 0 {
		return nil // its outcomes came when it first arrived: see toolgate status
	}
	if *wait > 0 {
		return printResults(ctx, w, *wait)
	}
	return nil
}

// printResults prints outcomes until none has come for a second after the
// first, or wait has passed.
func printResults(ctx context.Context, w *producer.Watch, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var idle time.Time // zero until the first outcome
	n := 0
	for {
		until := deadline
		if !idle.IsZero() && idle.Before(until) {
			until = idle
		}
		c, cancel := context.WithDeadline(ctx, until)
		o, err := w.Next(c)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if n == 0 && !time.Now().Before(deadline) {
				return fmt.Errorf("no outcome within %v (is `toolgate up` running?)", wait)
			}
			return nil
		}
		n++
		printOutcome(o.Data)
		if err := producer.Refused(o.Response); err != nil {
			return fmt.Errorf("conflict: response id %s was used before with other content or by another producer: nothing of this one ran; publish it again with a new --response-id", o.Response.ResponseID)
		}
		idle = time.Now().Add(time.Second)
	}
}

// printOutcome prints one result message: the call (or "(response)"), its
// tool and status, its errors and result.
func printOutcome(data []byte) {
	var r struct {
		CallID  string   `json:"call_id"`
		Tool    string   `json:"tool"`
		Status  string   `json:"status"`
		Failure string   `json:"failure"`
		Errors  []string `json:"errors"`
		Result  any      `json:"result"`
		Text    string   `json:"text"`
	}
	_ = json.Unmarshal(data, &r)
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

// duplicateLine says that JetStream already held exactly this message.
func duplicateLine(rid string) string {
	return "duplicate: response id " + rid + " was already published; nothing new was sent"
}
