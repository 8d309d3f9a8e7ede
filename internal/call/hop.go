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

// decodeHop reads what MarshalHop wrote. Unknown fields are skipped (a
// newer writer's), a field of a known number with another wire type is an
// error, and a field met twice: the last wins, or is one more element.
func (e *Envelope) decodeHop(data []byte) error {
	*e = Envelope{}
	return fields(data[len(hopMagic):], func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
		switch n {
		case fCallID:
			e.CallID = string(v)
		case fResponseID:
			e.ResponseID = string(v)
		case fProviderCallID:
			e.ProviderCallID = string(v)
		case fProviderKind:
			e.ProviderKind = string(v)
		case fProvider:
			e.Provider = string(v)
		case fModel:
			e.Model = string(v)
		case fSource:
			e.Source = string(v)
		case fToolName:
			e.ToolName = string(v)
		case fRawArguments:
			e.RawArguments = string(v)
		case fFinishReason:
			e.FinishReason = string(v)
		case fProviderFinish:
			e.ProviderFinish = string(v)
		case fStatus:
			e.Status = Status(v)
		case fFailure:
			e.Failure = Status(v)
		case fArguments:
			e.Arguments = bytes.Clone(v)
		case fErrors:
			e.Errors = append(e.Errors, string(v))
		case fRepairAttempts:
			e.RepairAttempts = int(protowire.DecodeZigZag(x))
		case fReplays:
			e.Replays = int(protowire.DecodeZigZag(x))
		case fRepairs:
			var r Repair
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					r.Attempt = int(protowire.DecodeZigZag(x))
				case 2:
					r.Failure = Status(v)
				case 3:
					r.RawArguments = string(v)
				case 4:
					r.Errors = append(r.Errors, string(v))
				case 5:
					r.Answer = string(v)
				case 6:
					return r.At.UnmarshalBinary(v)
				}
				return nil
			}, repairTypes); err != nil {
				return err
			}
			e.Repairs = append(e.Repairs, r)
		case fToolRevision:
			e.ToolRevision = x
		case fValidTools:
			e.ValidTools = append(e.ValidTools, string(v))
		case fTruncatedHint:
			e.TruncatedHint = string(v)
		case fReview:
			e.Review = append(e.Review, string(v))
		case fCarrier:
			e.Carrier = x != 0
		case fText:
			e.Text = string(v)
		case fIdempotencyKey:
			e.IdempotencyKey = string(v)
		case fResult:
			e.Result = bytes.Clone(v)
		case fBatch:
			return fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					e.Batch.ID = string(v)
				case 2:
					e.Batch.Index = int(protowire.DecodeZigZag(x))
				case 3:
					e.Batch.Size = int(protowire.DecodeZigZag(x))
				case 4:
					e.Batch.Atomic = x != 0
				}
				return nil
			}, batchTypes)
		case fRequest:
			q := &e.Request
			return fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					q.Tenant = string(v)
				case 2:
					q.Principal = string(v)
				case 3:
					q.Roles = append(q.Roles, string(v))
				case 4:
					q.Conversation = string(v)
				case 5:
					q.Tolerant = x != 0
				case 6:
					q.DryRun = x != 0
				case 7:
					q.Identity = string(v)
				}
				return nil
			}, requestTypes)
		case fCreatedAt:
			return e.CreatedAt.UnmarshalBinary(v)
		case fHistory:
			var s Step
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					s.Stage = string(v)
				case 2:
					s.Status = Status(v)
				case 3:
					return s.At.UnmarshalBinary(v)
				case 4:
					s.Note = string(v)
				}
				return nil
			}, stepTypes); err != nil {
				return err
			}
			e.History = append(e.History, s)
		case fApproval:
			d := &Decision{}
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					d.By = string(v)
				case 2:
					d.Hash = string(v)
				case 3:
					return d.At.UnmarshalBinary(v)
				}
				return nil
			}, decisionTypes); err != nil {
				return err
			}
			e.Approval = d
		case fSeals:
			var s Seal
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch n {
				case 1:
					s.Stage = string(v)
				case 2:
					s.Status = Status(v)
				case 3:
					s.Call = string(v)
				case 4:
					s.Tool = string(v)
				case 5:
					s.Raw = string(v)
				case 6:
					s.Args = string(v)
				case 7:
					s.Rev = x
				case 8:
					s.Approval = string(v)
				case 9:
					s.Key = string(v)
				case 10:
					s.MAC = string(v)
				}
				return nil
			}, sealTypes); err != nil {
				return err
			}
			e.Seals = append(e.Seals, s)
		}
		return nil
	}, envelopeTypes)
}

// fields calls field for each field of a message: v is a length-delimited
// field's bytes, x a varint field's value. types gives the wire type of
// each known field number; a field of another number is skipped.
func fields(b []byte, field func(n protowire.Number, t protowire.Type, v []byte, x uint64) error, types wireTypes) error {
	for len(b) > 0 {
		n, t, k := protowire.ConsumeTag(b)
		if k < 0 {
			return fmt.Errorf("%w: %w", errHop, protowire.ParseError(k))
		}
		b = b[k:]
		want, known := types(n)
		if !known {
			k = protowire.ConsumeFieldValue(n, t, b)
			if k < 0 {
				return fmt.Errorf("%w: field %d: %w", errHop, n, protowire.ParseError(k))
			}
			b = b[k:]
			continue
		}
		if t != want {
			return fmt.Errorf("%w: field %d has wire type %d, want %d", errHop, n, t, want)
		}
		var v []byte
		var x uint64
		switch t {
		case protowire.BytesType:
			v, k = protowire.ConsumeBytes(b)
		default:
			x, k = protowire.ConsumeVarint(b)
		}
		if k < 0 {
			return fmt.Errorf("%w: field %d: %w", errHop, n, protowire.ParseError(k))
		}
		b = b[k:]
		if err := field(n, t, v, x); err != nil {
			return fmt.Errorf("%w: field %d: %w", errHop, n, err)
		}
	}
	return nil
}
