package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Accumulate is the accumulate gate: it turns what a producer published into
// call envelopes. Bad input (an unknown provider, a body that is not the
// provider's format, one over the size limit) gets a response-level result
// and a dead letter holding the input as it arrived.
//
// Streamed input (toolgate.in.stream.<response-id>) is assembled from what
// TOOLGATE_IN holds once the provider's terminal event arrives; see
// "Streamed responses" in the README. It needs JS, and HandleTimer running on the accumulate_timer
// consumer.
type Accumulate struct {
	Limits  parse.Limits
	MaxBody int // bytes, of a whole body or of a stream's events together; default 8 MiB
	Now     func() time.Time
	// JS reads stored stream events, the responses bucket, and publishes
	// progress. Without it streamed input is dead-lettered.
	JS jetstream.JetStream
	// IdleTimeout: a stream with no terminal event and no new event for this
	// long is transport_incomplete. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// GapRecheck: how soon a stream whose terminal event arrived before an
	// earlier event is looked at again. Default DefaultGapRecheck.
	GapRecheck time.Duration
	// TolerantProviders are providers whose responses always get text
	// recovery, as if every producer sent Toolgate-Tolerant: true — for the
	// local servers (Ollama, llama.cpp) whose models often write calls as text.
	TolerantProviders []string
	// MaxStreamEvents bounds a streamed response: Toolgate-Seq must be 1..N
	// (an event outside is dead-lettered and left out) and a stream storing
	// more than N events is rejected. Default DefaultMaxStreamEvents.
	MaxStreamEvents int
	// ProgressBudget bounds the event bytes held for progress across all
	// open streams. Default DefaultProgressBudget.
	ProgressBudget int
	// Emit turns the envelopes and rejected inputs into messages and tells
	// the process of each transition; nil: no hooks, the default max payload.
	Emit *pipeline.Emitter

	js   jsHandles
	prog progressCache
	asm  assemblyCache
}

// Handle implements worker.Handler for toolgate.in.> : whole responses on
// toolgate.in.response, stream events on toolgate.in.stream.<response-id>.
func (a *Accumulate) Handle(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
	if strings.HasPrefix(m.Subject, streams.InStreamPrefix) {
		return a.handleEvent(ctx, m)
	}
	rid := responseID(m)
	prov := m.Header.Get(streams.HeaderProvider)
	if name, n := oversizeHeader(m.Header); name != "" {
		return a.reject(m, rid, prov, CodeHeaderTooLarge, fmt.Sprintf("header %s is %d bytes, over the %d-byte limit of a toolgate header: send it shorter", name, n, pipeline.InputHeaderMax))
	}
	maxBody := a.MaxBody
	if maxBody <= 0 {
		maxBody = 8 << 20
	}
	switch {
	case !provider.Known(prov):
		return a.reject(m, rid, prov, "unknown_provider", fmt.Sprintf("header %s is %q; use one of %s", streams.HeaderProvider, prov, strings.Join(provider.Names(), ", ")))
	case len(m.Data) > maxBody:
		return a.reject(m, rid, prov, "too_large", fmt.Sprintf("response body is %d bytes, over the %d-byte limit", len(m.Data), maxBody))
	}
	resp, err := provider.ParseResponse(prov, m.Data, maxTokens(m.Header)...)
	if err != nil {
		return a.reject(m, rid, prov, "undecodable_response", err.Error())
	}
	return a.emit(m, rid, resp)
}

// emit turns a complete normalized response into envelopes for parse.
func (a *Accumulate) emit(m worker.Msg, rid string, resp provider.Response) ([]worker.Output, error) {
	req := request(m.Header)
	req.Tolerant = req.Tolerant || slices.Contains(a.TolerantProviders, resp.Provider)
	if perr := a.Limits.CheckCalls(len(resp.Calls)); perr != nil {
		return a.reject(m, rid, resp.Provider, "too_many_calls", perr.Error())
	}
	model := m.Header.Get(streams.HeaderModel)
	if model == "" {
		model = resp.Model
	}
	var envs []call.Envelope
	for _, c := range resp.Calls {
		envs = append(envs, a.envelope(m.Header, rid, resp, c))
	}
	if len(envs) == 0 && req.Tolerant {
		text := resp.Text
		if resp.Error != nil && resp.Error.FailedGeneration != "" {
			text = resp.Error.FailedGeneration // the model's own output, refused by the provider
		}
		if strings.TrimSpace(text) != "" {
			e := call.New(rid, 0, a.Now())
			e.CallID = rid + "-text"
			e.Provider, e.Model, e.Request = resp.Provider, model, req
			e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
			e.Carrier, e.Text, e.Source = true, text, call.SourceTextJSON
			e.Batch.Atomic = atomicHeader(m.Header)
			envs = append(envs, e)
		}
	}
	if len(envs) == 0 {
		if resp.Error != nil {
			return a.reject(m, rid, resp.Provider, "provider_error", fmt.Sprintf("provider error %s: %s", resp.Error.Type, resp.Error.Message))
		}
		return a.responseOutcome(rid, req.Tenant, resp.Provider, call.NoToolCalls, "the response proposed no tool call (finish reason "+string(resp.Finish)+")")
	}
	var outs []worker.Output
	for _, e := range envs {
		o, err := a.Emit.Outputs(streams.Accumulate, e)
		if err != nil {
			return nil, worker.Permanent("encode", err)
		}
		outs = append(outs, o...)
	}
	return outs, nil
}

// envelope is call c of resp as a Received envelope.
func (a *Accumulate) envelope(h nats.Header, rid string, resp provider.Response, c provider.Call) call.Envelope {
	model := h.Get(streams.HeaderModel)
	if model == "" {
		model = resp.Model
	}
	e := call.New(rid, c.Index, a.Now())
	e.Provider, e.Model, e.Request = resp.Provider, model, request(h)
	e.ProviderCallID, e.ToolName, e.RawArguments = c.ID, c.Name, c.Arguments
	e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
	e.Batch = call.Batch{ID: rid, Index: c.Index, Size: len(resp.Calls), Atomic: atomicHeader(h)}
	if c.Truncated {
		e.TruncatedHint = c.TruncatedWhy
	}
	return e
}

// reject records bad input: a response-level result saying why, and the
// input itself in the dead-letter stream.
func (a *Accumulate) reject(m worker.Msg, rid, prov, code, why string) ([]worker.Output, error) {
	outs, err := a.responseOutcome(rid, request(m.Header).Tenant, prov, call.Rejected, code+": "+why)
	if err != nil {
		return nil, err
	}
	return append(outs, a.Emit.Raw(streams.Accumulate, code, m, fmt.Errorf("%s", why))), nil
}

// responseOutcome is the response-level result, its provider and reason cut
// to fit (an 8 MB provider error is quoted by its beginning, size and sha256).
func (a *Accumulate) responseOutcome(rid, tenant, prov string, st call.Status, why string) ([]worker.Output, error) {
	why = pipeline.CutText(why)
	r := wire.ResponseResult{ResponseID: rid, Provider: pipeline.CutHeaderValue(prov), Status: st, OK: st.OK(), Text: why}
	if !st.OK() {
		r.Errors = []string{why}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, worker.Permanent("encode", err)
	}
	h := nats.Header{}
	h.Set(streams.HeaderResponseID, rid)
	h.Set(streams.HeaderStatus, string(st))
	return []worker.Output{{Subject: streams.Results(tenant, rid), MsgID: rid + ":response", Header: h, Data: data}}, nil
}

// CodeHeaderTooLarge rejects a whole response whose Toolgate-* header is over
// pipeline.InputHeaderMax bytes.
const CodeHeaderTooLarge = "header_too_large"

// oversizeHeader names the first Toolgate-* header over
// pipeline.InputHeaderMax bytes, and its size; "" when there is none.
func oversizeHeader(h nats.Header) (string, int) {
	for k, vs := range h {
		if !strings.HasPrefix(strings.ToLower(k), "toolgate-") {
			continue
		}
		for _, v := range vs {
			if len(v) > pipeline.InputHeaderMax {
				return pipeline.CutHeaderValue(k), len(v)
			}
		}
	}
	return "", 0
}

// responseID is the producer's id made safe for subjects, or one derived
// from the stream sequence when the producer sent none.
func responseID(m worker.Msg) string {
	id := m.Header.Get(streams.HeaderResponseID)
	if id == "" {
		id = m.Header.Get(nats.MsgIdHdr)
	}
	if id == "" {
		return fmt.Sprintf("seq%d", m.StreamSeq)
	}
	return call.SafeResponseID(id)
}

func request(h nats.Header) call.Request {
	r := call.Request{
		Tenant:       h.Get(streams.HeaderTenant),
		Principal:    h.Get(streams.HeaderPrincipal),
		Conversation: h.Get(streams.HeaderConversation),
		Tolerant:     strings.EqualFold(h.Get(streams.HeaderTolerant), "true"),
		DryRun:       strings.EqualFold(h.Get(streams.HeaderDryRun), "true"),
	}
	for _, role := range strings.Split(h.Get(streams.HeaderRoles), ",") {
		if role = strings.TrimSpace(role); role != "" {
			r.Roles = append(r.Roles, role)
		}
	}
	return r
}

func atomicHeader(h nats.Header) bool { return strings.EqualFold(h.Get(streams.HeaderAtomic), "true") }

// maxTokens passes the producer's Toolgate-Max-Tokens (the request's output
// cap) to the normalizer, so a response whose output reached the cap marks
// its calls truncated even when the provider said tool_calls.
func maxTokens(h nats.Header) []provider.Option {
	n, err := strconv.Atoi(h.Get(streams.HeaderMaxTokens))
	if err != nil || n <= 0 {
		return nil
	}
	return []provider.Option{provider.WithMaxTokens(n)}
}
