package call

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// hopMagic starts an envelope in the hop encoding: a byte no JSON text
// starts with, "TG" and the encoding's version.
const hopMagic = "\x00TG\x01"

// MarshalHop encodes the envelope for the hop to the next gate: the
// protobuf wire format (field numbers in hop_fields.go), so no field name
// is written, no string escaped, and RawArguments, Text and Arguments keep
// their bytes as they are. Unmarshal reads it and JSON alike; records that
// people or other programs read (dead letters, approval records) stay JSON
// (Marshal). `protoc --decode_raw` shows one after its first four bytes.
func (e *Envelope) MarshalHop() []byte {
	b := make([]byte, 0, 512+len(e.RawArguments)+len(e.Arguments)+len(e.Text)+len(e.Result)+96*len(e.History)+256*len(e.Seals))
	b = append(b, hopMagic...)
	b = str(b, fCallID, e.CallID)
	b = str(b, fResponseID, e.ResponseID)
	b = str(b, fProviderCallID, e.ProviderCallID)
	b = str(b, fProviderKind, e.ProviderKind)
	b = str(b, fProvider, e.Provider)
	b = str(b, fModel, e.Model)
	b = str(b, fSource, e.Source)
	b = str(b, fToolName, e.ToolName)
	b = str(b, fRawArguments, e.RawArguments)
	b = str(b, fFinishReason, e.FinishReason)
	b = str(b, fProviderFinish, e.ProviderFinish)
	b = str(b, fStatus, string(e.Status))
	b = str(b, fFailure, string(e.Failure))
	b = raw(b, fArguments, e.Arguments)
	b = strs(b, fErrors, e.Errors)
	b = sint(b, fRepairAttempts, e.RepairAttempts)
	b = sint(b, fReplays, e.Replays)
	for _, r := range e.Repairs {
		b = msg(b, fRepairs, func(b []byte) []byte {
			b = sint(b, 1, r.Attempt)
			b = str(b, 2, string(r.Failure))
			b = str(b, 3, r.RawArguments)
			b = strs(b, 4, r.Errors)
			b = str(b, 5, r.Answer)
			return at(b, 6, r.At)
		})
	}
	b = uint(b, fToolRevision, e.ToolRevision)
	b = strs(b, fValidTools, e.ValidTools)
	b = str(b, fTruncatedHint, e.TruncatedHint)
	b = strs(b, fReview, e.Review)
	b = flag(b, fCarrier, e.Carrier)
	b = str(b, fText, e.Text)
	b = str(b, fIdempotencyKey, e.IdempotencyKey)
	b = raw(b, fResult, e.Result)
	b = msg(b, fBatch, func(b []byte) []byte {
		b = str(b, 1, e.Batch.ID)
		b = sint(b, 2, e.Batch.Index)
		b = sint(b, 3, e.Batch.Size)
		return flag(b, 4, e.Batch.Atomic)
	})
	q := e.Request
	b = msg(b, fRequest, func(b []byte) []byte {
		b = str(b, 1, q.Tenant)
		b = str(b, 2, q.Principal)
		b = strs(b, 3, q.Roles)
		b = str(b, 4, q.Conversation)
		b = flag(b, 5, q.Tolerant)
		b = flag(b, 6, q.DryRun)
		return str(b, 7, q.Identity)
	})
	b = at(b, fCreatedAt, e.CreatedAt)
	for _, s := range e.History {
		b = msg(b, fHistory, func(b []byte) []byte {
			b = str(b, 1, s.Stage)
			b = str(b, 2, string(s.Status))
			b = at(b, 3, s.At)
			return str(b, 4, s.Note)
		})
	}
	if d := e.Approval; d != nil {
		b = msg(b, fApproval, func(b []byte) []byte {
			b = str(b, 1, d.By)
			b = str(b, 2, d.Hash)
			return at(b, 3, d.At)
		})
	}
	for _, s := range e.Seals {
		b = msg(b, fSeals, func(b []byte) []byte {
			b = str(b, 1, s.Stage)
			b = str(b, 2, string(s.Status))
			b = str(b, 3, s.Call)
			b = str(b, 4, s.Tool)
			b = str(b, 5, s.Raw)
			b = str(b, 6, s.Args)
			b = uint(b, 7, s.Rev)
			b = str(b, 8, s.Approval)
			b = str(b, 9, s.Key)
			return str(b, 10, s.MAC)
		})
	}
	return b
}

// Empty values are not written, as JSON's omitempty leaves them out.
func str(b []byte, n protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, n, protowire.BytesType), s)
}

func raw(b []byte, n protowire.Number, v json.RawMessage) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v)
}

func strs(b []byte, n protowire.Number, ss []string) []byte {
	for _, s := range ss {
		b = protowire.AppendString(protowire.AppendTag(b, n, protowire.BytesType), s)
	}
	return b
}

func sint(b []byte, n protowire.Number, v int) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), protowire.EncodeZigZag(int64(v)))
}

func uint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
}

func flag(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), 1)
}

// at writes t in time.Time's own binary form (instant and zone offset).
func at(b []byte, n protowire.Number, t time.Time) []byte {
	tb, err := t.MarshalBinary()
	if err != nil { // an offset that is not whole minutes: keep the instant
		tb, _ = t.UTC().MarshalBinary()
	}
	return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), tb)
}

// msg writes a nested message: its fields, then its length before them.
func msg(b []byte, n protowire.Number, fields func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	// Reserve one length byte; most nested messages are under 128 bytes.
	start := len(b) + 1
	b = fields(append(b, 0))
	size := len(b) - start
	if size < 0x80 {
		b[start-1] = byte(size)
		return b
	}
	lenBytes := protowire.AppendVarint(nil, uint64(size))
	b = append(b, lenBytes[1:]...) // room for the longer length
	copy(b[start-1+len(lenBytes):], b[start:start+size])
	copy(b[start-1:], lenBytes)
	return b
}

// isHop reports whether data is in the hop encoding.
func isHop(data []byte) bool { return bytes.HasPrefix(data, []byte(hopMagic)) }

// errHop wraps every failure to read the hop encoding.
var errHop = errors.New("call: hop envelope")

// hopIter walks the fields of one message of the hop encoding. Every string
// it returns is a piece of base, the whole envelope made a string once, so
// reading a field allocates nothing.
type hopIter struct {
	b    []byte // the fields not read yet
	off  int    // where b starts in base
	base string
	err  error
	// the field just read
	n    protowire.Number
	v    []byte // a length-delimited field's bytes
	voff int    // where v starts in base
	x    uint64 // a varint field's value
}

// next reads the next field of a known number (types), skipping the
// others; false at the end or on an error (it.err).
func (it *hopIter) next(types wireTypes) bool {
	for it.err == nil && len(it.b) > 0 {
		n, t, k := protowire.ConsumeTag(it.b)
		if k < 0 {
			it.err = fmt.Errorf("%w: %w", errHop, protowire.ParseError(k))
			return false
		}
		it.advance(k)
		want, known := types(n)
		if !known {
			if k = protowire.ConsumeFieldValue(n, t, it.b); k < 0 {
				it.err = fmt.Errorf("%w: field %d: %w", errHop, n, protowire.ParseError(k))
				return false
			}
			it.advance(k)
			continue
		}
		if t != want {
			it.err = fmt.Errorf("%w: field %d has wire type %d, want %d", errHop, n, t, want)
			return false
		}
		it.n, it.v, it.x = n, nil, 0
		if t == protowire.BytesType {
			it.v, k = protowire.ConsumeBytes(it.b)
			it.voff = it.off + k - len(it.v)
		} else {
			it.x, k = protowire.ConsumeVarint(it.b)
		}
		if k < 0 {
			it.err = fmt.Errorf("%w: field %d: %w", errHop, n, protowire.ParseError(k))
			return false
		}
		it.advance(k)
		return true
	}
	return false
}

func (it *hopIter) advance(k int) { it.b, it.off = it.b[k:], it.off+k }

// str is the field's bytes as a string, without a copy.
func (it *hopIter) str() string { return it.base[it.voff : it.voff+len(it.v)] }

func (it *hopIter) int() int { return int(protowire.DecodeZigZag(it.x)) }

func (it *hopIter) time(t *time.Time) {
	if err := t.UnmarshalBinary(it.v); err != nil && it.err == nil {
		it.err = fmt.Errorf("%w: field %d: %w", errHop, it.n, err)
	}
}

// sub walks the nested message the field holds.
func (it *hopIter) sub() hopIter { return hopIter{b: it.v, off: it.voff, base: it.base} }

// fail records the error of a nested message.
func (it *hopIter) fail(sub *hopIter) {
	if sub.err != nil && it.err == nil {
		it.err = fmt.Errorf("%w (in field %d)", sub.err, it.n)
	}
}

// decodeHop reads what MarshalHop wrote. Unknown fields are skipped (a
// newer writer's), a field of a known number with another wire type is an
// error, and a field met twice: the last wins, or is one more element.
func (e *Envelope) decodeHop(data []byte) error {
	*e = Envelope{}
	base := string(data)
	it := hopIter{b: data[len(hopMagic):], off: len(hopMagic), base: base}
	for it.next(envelopeTypes) {
		switch it.n {
		case fCallID:
			e.CallID = it.str()
		case fResponseID:
			e.ResponseID = it.str()
		case fProviderCallID:
			e.ProviderCallID = it.str()
		case fProviderKind:
			e.ProviderKind = it.str()
		case fProvider:
			e.Provider = it.str()
		case fModel:
			e.Model = it.str()
		case fSource:
			e.Source = it.str()
		case fToolName:
			e.ToolName = it.str()
		case fRawArguments:
			e.RawArguments = it.str()
		case fFinishReason:
			e.FinishReason = it.str()
		case fProviderFinish:
			e.ProviderFinish = it.str()
		case fStatus:
			e.Status = Status(it.str())
		case fFailure:
			e.Failure = Status(it.str())
		case fArguments:
			e.Arguments = bytes.Clone(it.v)
		case fErrors:
			e.Errors = append(e.Errors, it.str())
		case fRepairAttempts:
			e.RepairAttempts = it.int()
		case fReplays:
			e.Replays = it.int()
		case fRepairs:
			e.Repairs = append(e.Repairs, it.repair())
		case fToolRevision:
			e.ToolRevision = it.x
		case fValidTools:
			e.ValidTools = append(e.ValidTools, it.str())
		case fTruncatedHint:
			e.TruncatedHint = it.str()
		case fReview:
			e.Review = append(e.Review, it.str())
		case fCarrier:
			e.Carrier = it.x != 0
		case fText:
			e.Text = it.str()
		case fIdempotencyKey:
			e.IdempotencyKey = it.str()
		case fResult:
			e.Result = bytes.Clone(it.v)
		case fBatch:
			it.batch(&e.Batch)
		case fRequest:
			it.request(&e.Request)
		case fCreatedAt:
			it.time(&e.CreatedAt)
		case fHistory:
			if e.History == nil {
				e.History = make([]Step, 0, 8)
			}
			e.History = append(e.History, it.step())
		case fApproval:
			e.Approval = it.decision()
		case fSeals:
			if e.Seals == nil {
				e.Seals = make([]Seal, 0, 5)
			}
			e.Seals = append(e.Seals, it.seal())
		}
	}
	return it.err
}

func (it *hopIter) repair() (r Repair) {
	sub := it.sub()
	for sub.next(repairTypes) {
		switch sub.n {
		case 1:
			r.Attempt = sub.int()
		case 2:
			r.Failure = Status(sub.str())
		case 3:
			r.RawArguments = sub.str()
		case 4:
			r.Errors = append(r.Errors, sub.str())
		case 5:
			r.Answer = sub.str()
		case 6:
			sub.time(&r.At)
		}
	}
	it.fail(&sub)
	return r
}

func (it *hopIter) batch(b *Batch) {
	sub := it.sub()
	for sub.next(batchTypes) {
		switch sub.n {
		case 1:
			b.ID = sub.str()
		case 2:
			b.Index = sub.int()
		case 3:
			b.Size = sub.int()
		case 4:
			b.Atomic = sub.x != 0
		}
	}
	it.fail(&sub)
}

func (it *hopIter) request(q *Request) {
	sub := it.sub()
	for sub.next(requestTypes) {
		switch sub.n {
		case 1:
			q.Tenant = sub.str()
		case 2:
			q.Principal = sub.str()
		case 3:
			q.Roles = append(q.Roles, sub.str())
		case 4:
			q.Conversation = sub.str()
		case 5:
			q.Tolerant = sub.x != 0
		case 6:
			q.DryRun = sub.x != 0
		case 7:
			q.Identity = sub.str()
		}
	}
	it.fail(&sub)
}

func (it *hopIter) step() (s Step) {
	sub := it.sub()
	for sub.next(stepTypes) {
		switch sub.n {
		case 1:
			s.Stage = sub.str()
		case 2:
			s.Status = Status(sub.str())
		case 3:
			sub.time(&s.At)
		case 4:
			s.Note = sub.str()
		}
	}
	it.fail(&sub)
	return s
}

func (it *hopIter) decision() *Decision {
	d := &Decision{}
	sub := it.sub()
	for sub.next(decisionTypes) {
		switch sub.n {
		case 1:
			d.By = sub.str()
		case 2:
			d.Hash = sub.str()
		case 3:
			sub.time(&d.At)
		}
	}
	it.fail(&sub)
	return d
}

func (it *hopIter) seal() (s Seal) {
	sub := it.sub()
	for sub.next(sealTypes) {
		switch sub.n {
		case 1:
			s.Stage = sub.str()
		case 2:
			s.Status = Status(sub.str())
		case 3:
			s.Call = sub.str()
		case 4:
			s.Tool = sub.str()
		case 5:
			s.Raw = sub.str()
		case 6:
			s.Args = sub.str()
		case 7:
			s.Rev = sub.x
		case 8:
			s.Approval = sub.str()
		case 9:
			s.Key = sub.str()
		case 10:
			s.MAC = sub.str()
		}
	}
	it.fail(&sub)
	return s
}
