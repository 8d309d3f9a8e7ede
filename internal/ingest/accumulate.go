package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/identity"
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
	MaxBody int // bytes, of a whole body or of a stream's events together; default streams.InMaxBody (8 MiB)
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
	// OptionalGrace: how long a stream that has all its response needs
	// waits for an optional last event (Bedrock's metadata after
	// messageStop) before it settles without it. Default
	// DefaultOptionalGrace.
	OptionalGrace time.Duration
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
	// Identity verifies the producer's Toolgate-Token; with it tenant,
	// principal and roles come only from the token and a message without a
	// valid one is refused (identity_invalid). Nil: dev mode, the
	// Toolgate-Tenant and -Principal headers are taken on trust, roles are
	// granted none, and every call says identity unverified.
	Identity *identity.Verifier
	// AssertUsers are the NATS users whose identity headers count without
	// an issuer, on their own subject (wire.InAsResponse): a gateway that
	// authenticated its callers itself. Their calls say identity asserted.
	AssertUsers []string
	// ClaimTTL is how long a response id stays claimed
	// (streams.Settings.ResponseIDTTL): the response-ids bucket of before
	// the claimed subjects is read while it holds a claim younger.
	// Default DefaultClaimTTL.
	ClaimTTL time.Duration
	// Partitions is P (streams.Fair.Partitions): where a claimed id is
	// looked for first (claimed_partitions.go). 0: 1.
	Partitions int

	js   jsHandles
	kvl  kvLive
	lay  layoutCache
	prog progressCache
	asm  assemblyCache
}

// Handle implements worker.Handler for toolgate.in.> : whole responses on
// toolgate.in.response and a tenant's subjects (its claimed subjects
// toolgate.in.t.<tenant>.response.<response-id> in TOOLGATE_RESPONSES, with
// accumulate's own claim messages, claimed.go), stream events on
// toolgate.in.stream.<response-id> and toolgate.in.t.<tenant>.stream.<response-id>.
func (a *Accumulate) Handle(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
	if ref, ok := streamOf(m.Subject); ok {
		return a.handleEvent(ctx, m, ref)
	}
	rid := responseID(m)
	prov := m.Header.Get(streams.HeaderProvider)
	subject := m.Subject
	if base, k, parted, ok := streams.SplitInPartition(subject); ok { // a tenant's batch response, with P > 1 stored in a partition (in_partitions.go)
		tok, _, _ := wire.SplitInTenant(base)
		why, err := a.inMisplaced(ctx, subject, inPlaceOf(k, parted), func(p int) streams.Place { return streams.BatchPlaceFor(tok, p) })
		if err != nil {
			return nil, err
		}
		if why != "" {
			return a.misplacedInput(m, rid, why)
		}
		subject = base
	}
	_, rest, onTenant := wire.SplitInTenant(subject)
	batch := onTenant && rest == wire.InTenantBatchRest
	claimedID, claimed := claimedRID(m.Subject)
	if claimed { // the subject's id is the one its message claimed (claimed.go)
		rid = claimedID
		if isClaimMessage(m.Header) {
			return a.handleClaimMessage(m, rid)
		}
		why, err := a.misplaced(ctx, m) // a whole response where the server's mapping does not put it (claimed_partitions.go)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return a.reject(m, rid, prov, "", CodeBadSubject, why)
		}
	}
	if onTenant && rest != "response" && !batch && !claimed {
		return a.reject(m, rid, prov, "", CodeBadSubject, fmt.Sprintf("subject %s is no ingest subject: a tenant publishes on %s, %s, %s and %s",
			shortValue(m.Subject, 128), wire.InTenantPrefix+"<tenant>.response.<response-id>", wire.InTenantPrefix+"<tenant>.response", wire.InTenantPrefix+"<tenant>.batch", wire.InTenantPrefix+"<tenant>.stream.<response-id>"))
	}
	s := a.senderOn(m.Subject, m.Header, a.Now())
	if s.err != nil {
		return a.refuseIdentity(m, rid, prov, s.err)
	}
	tenant := s.req.Tenant
	if batch {
		// The tenant's batch subject: its calls are batch whatever the
		// header asks (at most batch), and it takes whole responses only.
		s.req.Priority = wire.PriorityBatch
		if h := streamHeader(m.Header); h != "" {
			return a.conflict(m, rid, prov, tenant, call.Rejected, CodeBadSubject, fmt.Sprint(m.StreamSeq),
				fmt.Sprintf("header %s on %s: a tenant's batch subject takes whole responses only; nothing of this message runs; publish a stream's events on %s",
					h, shortValue(m.Subject, 128), wire.InTenantPrefix+"<tenant>.stream.<response-id>"))
		}
	}
	if name, n := oversizeHeader(m.Header); name != "" {
		return a.reject(m, rid, prov, tenant, CodeHeaderTooLarge, fmt.Sprintf("header %s is %d bytes, over the %d-byte limit of a toolgate header: send it shorter", name, n, pipeline.InputHeaderMax))
	}
	maxBody := a.maxBody()
	switch {
	case !provider.Known(prov):
		return a.reject(m, rid, prov, tenant, "unknown_provider", fmt.Sprintf("header %s is %q; use one of %s", streams.HeaderProvider, prov, strings.Join(provider.Names(), ", ")))
	case len(m.Data) > maxBody:
		return a.reject(m, rid, prov, tenant, "too_large", fmt.Sprintf("response body is %d bytes, over the %d-byte limit", len(m.Data), maxBody))
	}
	resp, err := provider.ParseResponse(prov, m.Data, maxTokens(m.Header)...)
	if err != nil {
		return a.reject(m, rid, prov, tenant, "undecodable_response", err.Error())
	}
	return a.emit(ctx, m, rid, resp, s, claimWhole(s, m.Data))
}

// emit turns a complete normalized response sent by s into envelopes for
// parse, once rid is claimed with c (claim.go): a response id used before
// with other content ends response_id_conflict and nothing runs.
func (a *Accumulate) emit(ctx context.Context, m worker.Msg, rid string, resp provider.Response, s sender, c claim) ([]worker.Output, error) {
	req := s.req
	req.Tolerant = req.Tolerant || slices.Contains(a.TolerantProviders, resp.Provider)
	if perr := a.Limits.CheckCalls(len(resp.Calls)); perr != nil {
		return a.reject(m, rid, resp.Provider, req.Tenant, "too_many_calls", perr.Error())
	}
	model := m.Header.Get(streams.HeaderModel)
	if model == "" {
		model = resp.Model
	}
	var envs []call.Envelope
	for _, pc := range resp.Calls {
		envs = append(envs, a.envelope(m.Header, rid, resp, pc, req))
	}
	if len(envs) == 0 && req.Tolerant && (resp.Error == nil || !resp.Error.Withheld) {
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
			e.TruncatedHint = CapHint(resp)
			e.Batch.Atomic = atomicHeader(m.Header)
			envs = append(envs, e)
		}
	}
	if len(envs) == 0 {
		if resp.Error != nil {
			return a.reject(m, rid, resp.Provider, req.Tenant, "provider_error", fmt.Sprintf("provider error %s: %s", resp.Error.Type, resp.Error.Message))
		}
		return a.responseOutcome(rid, req.Tenant, resp.Provider, call.NoToolCalls, "the response proposed no tool call (finish reason "+string(resp.Finish)+")")
	}
	key, old, err := a.claimID(ctx, m, req.Tenant, rid, c)
	if errors.Is(err, errCopyOfClaimed) {
		return nil, nil // its first copy runs (claimed_partitions.go)
	}
	if err != nil {
		return nil, err // retried: the claim decides before anything runs
	}
	if old != nil {
		return a.conflict(m, rid, resp.Provider, req.Tenant, call.ResponseIDConflict, CodeResponseIDConflict, c.Hash, conflictWhy(rid, old, c))
	}
	withheldNote(envs, s.withheld)
	var outs []worker.Output
	for _, e := range envs {
		keyed(&e, key)
		o, err := a.Emit.Outputs(streams.Accumulate, e)
		if err != nil {
			return nil, worker.Permanent("encode", err)
		}
		outs = append(outs, o...)
	}
	return outs, nil
}

// withheldNote records, in each call's history, the roles its sender's
// headers claimed and it was not granted (unverified identity).
func withheldNote(envs []call.Envelope, withheld []string) {
	if len(withheld) == 0 {
		return
	}
	note := "roles not granted (identity unverified): " + pipeline.CutText(strings.Join(withheld, ","))
	for i := range envs {
		envs[i].Note(note)
	}
}

// keyed gives e, a call of the response keyed key (claimID), its call id
// and batch: made of the key, not of the bare response id, so two tenants'
// calls under one response id never share an id.
func keyed(e *call.Envelope, key string) {
	if e.Carrier {
		e.CallID = key + "-text"
	} else {
		e.CallID = call.ID(key, e.Batch.Index)
	}
	e.Batch.ID = key
}

// envelope is call c of resp, made under req, as a Received envelope.
func (a *Accumulate) envelope(h nats.Header, rid string, resp provider.Response, c provider.Call, req call.Request) call.Envelope {
	model := h.Get(streams.HeaderModel)
	if model == "" {
		model = resp.Model
	}
	e := call.New(rid, c.Index, a.Now())
	e.Provider, e.Model, e.Request = resp.Provider, model, req
	e.ProviderCallID, e.ToolName, e.RawArguments = c.ID, c.Name, c.Arguments
	e.ProviderKind = c.Kind
	e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
	e.Batch = call.Batch{ID: rid, Index: c.Index, Size: len(resp.Calls), Atomic: atomicHeader(h)}
	if c.Truncated {
		e.TruncatedHint = c.TruncatedWhy
	}
	return e
}

// reject records bad input: a response-level result on tenant's results
// saying why, and the input itself in the dead-letter stream.
func (a *Accumulate) reject(m worker.Msg, rid, prov, tenant, code, why string) ([]worker.Output, error) {
	outs, err := a.responseOutcome(rid, tenant, prov, call.Rejected, code+": "+why)
	if err != nil {
		return nil, err
	}
	return append(outs, a.raw(code, m, fmt.Errorf("%s", why))), nil
}

// refuseIdentity records a message whose identity was refused (err, a
// refusal or the issuer's error): a rejected result under the tenant of
// the tenant subject it came on, which only that tenant's producer may
// publish on, else under no tenant (a claimed one would let anyone write
// into that tenant's results), and a dead letter. Its message id is the
// input's, so it never stands in for the result of a genuine response with
// the same id.
func (a *Accumulate) refuseIdentity(m worker.Msg, rid, prov string, err error) ([]worker.Output, error) {
	r := refusalOf(err)
	return a.conflict(m, rid, prov, r.lane, call.Rejected, r.code, fmt.Sprint(m.StreamSeq),
		r.why+": nothing of this response runs; "+r.hint)
}

// CodeBadSubject rejects input on a tenant's ingest subject that is none of
// its response, batch and stream subjects, and a stream's event
// (Toolgate-Seq or Toolgate-End) on its batch subject.
const CodeBadSubject = "bad_subject"

// streamHeader is the name of the stream event header h carries
// (Toolgate-Seq, Toolgate-End), "" for none.
func streamHeader(h nats.Header) string {
	for _, k := range []string{streams.HeaderSeq, streams.HeaderEnd} {
		if _, ok := h[k]; ok {
			return k
		}
	}
	return ""
}

// conflict records a refused arrival: a response-level result with status
// st on tenant's results, with a message id of its own (key), and the input
// in the dead letters under code.
func (a *Accumulate) conflict(m worker.Msg, rid, prov, tenant string, st call.Status, code, key, why string) ([]worker.Output, error) {
	outs, err := a.responseOutcome(rid, tenant, prov, st, code+": "+why)
	if err != nil {
		return nil, err
	}
	outs[0].MsgID = call.Key(tenant, rid) + ":" + code + ":" + key
	return append(outs, a.raw(code, m, errors.New(why))), nil
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
	// The message id is the response's key, not its id: the results stream
	// deduplicates ids across every subject, and another tenant's outcome
	// under the same response id must never stand in for this one.
	return []worker.Output{{Subject: a.Emit.ResultsSubject(tenant, rid), MsgID: call.Key(tenant, rid) + ":response", Header: h, Data: data}}, nil
}

// CodeHeaderTooLarge rejects a whole response whose Toolgate-* header is over
// pipeline.InputHeaderMax bytes.
const CodeHeaderTooLarge = "header_too_large"

// oversizeHeader names the first Toolgate-* header over
// pipeline.InputHeaderMax bytes, and its size; "" when there is none.
func oversizeHeader(h nats.Header) (string, int) {
	for k, vs := range h {
		// The token has its own bound (identity.Config.MaxToken).
		if !strings.HasPrefix(strings.ToLower(k), "toolgate-") || strings.EqualFold(k, wire.HeaderToken) {
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
func responseID(m worker.Msg) string { return ResponseIDOf(m.Header, m.StreamSeq) }

// ResponseIDOf is the response id accumulate gives an input with headers h
// stored at stream sequence seq (the what-if reads inputs back with it).
func ResponseIDOf(h nats.Header, seq uint64) string {
	id := h.Get(streams.HeaderResponseID)
	if id == "" {
		id = h.Get(nats.MsgIdHdr)
	}
	if id == "" {
		return fmt.Sprintf("seq%d", seq)
	}
	return call.SafeResponseID(id)
}

// RequestOf is the request context headers h claim: tenant, principal,
// roles and the flags. Who sent them decides what of it counts
// (identity.go); this is only what they say.
func RequestOf(h nats.Header) call.Request {
	r := call.Request{
		Tenant:       h.Get(streams.HeaderTenant),
		Principal:    h.Get(streams.HeaderPrincipal),
		Conversation: h.Get(streams.HeaderConversation),
		Tolerant:     strings.EqualFold(h.Get(streams.HeaderTolerant), "true"),
		DryRun:       strings.EqualFold(h.Get(streams.HeaderDryRun), "true"),
		Priority:     priority(h),
	}
	for _, role := range strings.Split(h.Get(streams.HeaderRoles), ",") {
		if role = strings.TrimSpace(role); role != "" {
			r.Roles = append(r.Roles, role)
		}
	}
	return r
}

// priority is the producer's Toolgate-Priority when it is one; any other
// value is dropped, and the call gets its tenant's default.
func priority(h nats.Header) string {
	switch p := strings.ToLower(strings.TrimSpace(h.Get(streams.HeaderPriority))); p {
	case streams.PriorityInteractive, streams.PriorityBatch:
		return p
	}
	return ""
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

// CapHint says why the text of resp counts as cut off — the provider's own
// length limit, or output tokens that reached the requested cap — so the
// calls recovered from it end truncated like native ones; "" otherwise.
func CapHint(resp provider.Response) string {
	switch {
	case resp.Finish == provider.ReasonLength:
		return "provider finish reason " + resp.ProviderFinish + ": output token cap reached"
	case resp.MaxTokens > 0 && resp.OutputTokens >= resp.MaxTokens:
		return fmt.Sprintf("output tokens (%d) reached the requested max tokens (%d)", resp.OutputTokens, resp.MaxTokens)
	}
	return ""
}
