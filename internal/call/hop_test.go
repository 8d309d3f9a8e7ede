package call

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// fullEnvelope sets every field, with values JSON cannot carry as they are.
func fullEnvelope() Envelope {
	e := benchEnvelope()
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("", 5*3600+30*60))
	e.ProviderKind, e.Failure, e.Replays, e.RepairAttempts = "custom_tool_call", InvalidJSON, 2, 1
	e.RawArguments = "{\"a\":\xff\x00}"
	e.Text = "text \xfe with \u2028 <b>&amp;</b>"
	e.Errors = []string{"", "second", strings.Repeat("long ", 100)}
	e.ValidTools = []string{"a", "b"}
	e.Review = []string{"rule"}
	e.TruncatedHint, e.Carrier, e.ProviderFinish = "length", true, "length"
	e.Result = json.RawMessage(`{"id": 1 , "big": 123456789012345678901234567890}`)
	e.Batch = Batch{ID: "r", Index: 3, Size: 8, Atomic: true}
	e.Request = Request{Tenant: "t", Principal: "p", Roles: []string{"a", "b"}, Conversation: "c", Tolerant: true, DryRun: true, Identity: IdentityVerified, Priority: "batch"}
	e.CreatedAt = at
	e.Repairs = []Repair{{Attempt: 1, Failure: SchemaInvalid, RawArguments: "{\xfe", Errors: []string{"x", "y"}, Answer: "ans", At: at}, {Attempt: -2}}
	e.Approval = &Decision{By: "op", Hash: "h", At: at}
	e.History = append(e.History, Step{Stage: "repair", Status: Parsed, At: at, Note: "note"})
	e.Seals[0].Approval = "approved-by-op"
	e.ToolRevision = 1<<64 - 1
	return e
}

func TestHop_round_trip_keeps_every_field_and_byte(t *testing.T) {
	for _, e := range []Envelope{benchEnvelope(), fullEnvelope(), {CallID: "c", ResponseID: "r", Status: Received}} {
		got, err := Unmarshal(e.MarshalHop())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(got), normal(e)) {
			t.Fatalf("round trip changed the envelope:\n got %+v\nwant %+v", got, e)
		}
	}
	e := fullEnvelope()
	got, _ := Unmarshal(e.MarshalHop())
	if got.RawArguments != e.RawArguments || got.Text != e.Text || !bytes.Equal(got.Result, e.Result) || got.CreatedAt.Nanosecond() != 123456789 {
		t.Fatalf("exact bytes lost: %q %q %s %v", got.RawArguments, got.Text, got.Result, got.CreatedAt)
	}
	if _, off := got.CreatedAt.Zone(); off != 5*3600+30*60 {
		t.Fatalf("zone offset lost: %v", got.CreatedAt)
	}
}

// What the JSON codec reads, the hop encoding carries unchanged: a gate
// that writes hops gives the next gate the envelope JSON would have.
func TestHop_carries_what_json_carries(t *testing.T) {
	for _, e := range []Envelope{benchEnvelope(), fullEnvelope()} {
		js, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, err := Unmarshal(js)
		if err != nil {
			t.Fatal(err)
		}
		viaHop, err := Unmarshal(viaJSON.MarshalHop())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(viaHop), normal(viaJSON)) {
			t.Fatalf("hop and JSON disagree:\n hop %+v\njson %+v", viaHop, viaJSON)
		}
	}
}

// The hop encoding is smaller than JSON: no names, no escapes.
func TestHop_is_smaller_than_json(t *testing.T) {
	e := benchEnvelope()
	js, _ := e.Marshal()
	if hop := e.MarshalHop(); len(hop) >= len(js)*3/4 {
		t.Fatalf("hop %d bytes, JSON %d", len(hop), len(js))
	}
}

func TestHop_hostile_bytes_are_errors_not_panics(t *testing.T) {
	full := fullEnvelope()
	good := full.MarshalHop()
	tag := func(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }
	for name, data := range map[string][]byte{
		"truncated":           good[:len(good)/2],
		"magic only":          []byte(hopMagic),
		"huge length":         append(append([]byte(hopMagic), tag(fCallID, protowire.BytesType)...), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"wrong wire type":     append(append([]byte(hopMagic), tag(fCallID, protowire.VarintType)...), 1),
		"varint as bytes":     append(append([]byte(hopMagic), tag(fReplays, protowire.BytesType)...), 1, 'x'),
		"bad time":            append(append([]byte(hopMagic), tag(fCreatedAt, protowire.BytesType)...), 2, 9, 9),
		"bad nested":          append(append([]byte(hopMagic), tag(fSeals, protowire.BytesType)...), 2, 0x08, 0xff),
		"overlong varint":     append(append([]byte(hopMagic), tag(fReplays, protowire.VarintType)...), bytes.Repeat([]byte{0xff}, 11)...),
		"field number zero":   append([]byte(hopMagic), 0x00, 0x01),
		"lacks a call id":     append(append([]byte(hopMagic), tag(fStatus, protowire.BytesType)...), 1, 'x'),
		"end group no start":  append([]byte(hopMagic), tag(40, protowire.EndGroupType)...),
		"group of unknown":    append(append([]byte(hopMagic), tag(40, protowire.StartGroupType)...), 0x08),
		"nested wrong type":   append(append([]byte(hopMagic), tag(fBatch, protowire.BytesType)...), 2, 0x0a, 0x00),
		"repeated bad repair": append(append([]byte(hopMagic), tag(fRepairs, protowire.BytesType)...), 3, 0x32, 1, 0),
	} {
		if _, err := Unmarshal(data); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// A newer writer's field (a number this version does not know) is skipped.
func TestHop_skips_fields_it_does_not_know(t *testing.T) {
	e := benchEnvelope()
	data := e.MarshalHop()
	data = protowire.AppendString(protowire.AppendTag(data, 99, protowire.BytesType), "future")
	data = protowire.AppendVarint(protowire.AppendTag(data, 100, protowire.VarintType), 7)
	got, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normal(got), normal(e)) {
		t.Fatalf("unknown fields changed the envelope: %+v", got)
	}
}

func FuzzUnmarshal_hop(f *testing.F) {
	be, fe := benchEnvelope(), fullEnvelope()
	f.Add(be.MarshalHop())
	f.Add(fe.MarshalHop())
	f.Add([]byte(hopMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isHop(data) {
			data = append([]byte(hopMagic), data...)
		}
		e, err := Unmarshal(data)
		if err != nil {
			return
		}
		again, err := Unmarshal(e.MarshalHop())
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v", err)
		}
		if !reflect.DeepEqual(normal(again), normal(e)) {
			t.Fatalf("re-encoding changed the envelope:\n%+v\n%+v", again, e)
		}
	})
}

// normal makes empty slices nil and times the same instant built one way,
// the differences a reader cannot see in either encoding.
func normal(e Envelope) Envelope {
	e.Arguments, e.Result = nilIfEmpty(e.Arguments), nilIfEmpty(e.Result)
	e.Errors, e.ValidTools, e.Review, e.Request.Roles = nilStrs(e.Errors), nilStrs(e.ValidTools), nilStrs(e.Review), nilStrs(e.Request.Roles)
	e.CreatedAt = instant(e.CreatedAt)
	var hist []Step
	for _, s := range e.History {
		s.At = instant(s.At)
		hist = append(hist, s)
	}
	e.History = hist
	var reps []Repair
	for _, r := range e.Repairs {
		r.At, r.Errors = instant(r.At), nilStrs(r.Errors)
		reps = append(reps, r)
	}
	e.Repairs = reps
	if len(e.Seals) == 0 {
		e.Seals = nil
	}
	if e.Approval != nil {
		d := *e.Approval
		d.At = instant(d.At)
		e.Approval = &d
	}
	return e
}

func nilIfEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

func nilStrs(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func instant(t time.Time) time.Time { return time.Unix(t.Unix(), int64(t.Nanosecond())).UTC() }
