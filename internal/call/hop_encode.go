package call

import (
	"encoding/json"
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
		b = str(b, 7, q.Identity)
		return str(b, 8, q.Priority)
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
