package call

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

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
		case 8:
			q.Priority = sub.str()
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
