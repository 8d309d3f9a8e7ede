package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// withMaxPayload is the emitter of a pipeline whose connection allows max.
func withMaxPayload(max int64) *Emitter { return &Emitter{MaxPayload: max} }

func terminal(t *testing.T, tool string, to call.Status, res []byte, errs ...string) call.Envelope {
	t.Helper()
	e := call.New("r1", 0, time.Unix(0, 0))
	e.Provider, e.ProviderCallID, e.ToolName, e.RawArguments = "openai-chat", "c1", tool, `{"a":1}`
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved} {
		if err := e.Move("test", st, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	e.Result = res
	if err := e.Move(streams.Execute, to, time.Unix(0, 0), errs...); err != nil {
		t.Fatal(err)
	}
	return e
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// checkFits fails unless every output can be stored under max.
func checkFits(t *testing.T, outs []worker.Output, max int64) {
	t.Helper()
	for _, o := range outs {
		if err := worker.Fits(o, max); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOutputs_fit_what_nats_can_store(t *testing.T) {
	big := []byte(`{"rows":"` + strings.Repeat("x", 6<<20) + `"}`)
	mid := []byte(`{"rows":"` + strings.Repeat("y", 2<<20) + `"}`)
	for _, test := range []struct {
		name  string
		max   int64
		env   func(t *testing.T) call.Envelope
		check func(t *testing.T, outs []worker.Output)
	}{
		{"a 6 MB tool result is carried once, cut, with its size and sha256", 16 << 20,
			func(t *testing.T) call.Envelope { return terminal(t, "get_weather", call.Executed, big) },
			func(t *testing.T, outs []worker.Output) {
				r := resultOut(t, outs)
				c, cut := result.IsCut(r.Result)
				if !cut || c.Bytes != int64(len(big)) || c.SHA256 != sha(big) {
					t.Fatalf("result %.200s: want the cut form with size %d and sha256", r.Result, len(big))
				}
				if strings.Contains(r.Text, c.Excerpt[:100]) || strings.Contains(string(r.Message), c.Excerpt[:100]) {
					t.Fatal("text or message repeat the excerpt: the result must be carried once")
				}
				if !strings.Contains(r.Text, c.SHA256) || !strings.Contains(string(r.Message), c.SHA256) {
					t.Fatalf("text %q: want it to name the cut", r.Text)
				}
			}},
		{"a 2 MB result that fits three times is kept whole", 16 << 20,
			func(t *testing.T) call.Envelope { return terminal(t, "get_weather", call.Executed, mid) },
			func(t *testing.T, outs []worker.Output) {
				if r := resultOut(t, outs); string(r.Result) != string(mid) {
					t.Fatalf("result of %d bytes changed", len(mid))
				}
			}},
		{"a 2 MB result whose three copies do not fit 4 MiB is carried once", 4 << 20,
			func(t *testing.T) call.Envelope { return terminal(t, "get_weather", call.Executed, mid) },
			func(t *testing.T, outs []worker.Output) {
				r := resultOut(t, outs)
				if _, cut := result.IsCut(r.Result); !cut {
					t.Fatalf("result of %d bytes not cut", len(r.Result))
				}
			}},
		{"an 8 MB error is cut in every record", 16 << 20,
			func(t *testing.T) call.Envelope {
				return terminal(t, "get_weather", call.ExecutionFailed, nil, strings.Repeat("e", 8<<20))
			},
			func(t *testing.T, outs []worker.Output) {
				for _, o := range outs {
					if len(o.Data) > 64<<10 && !strings.HasPrefix(o.Subject, "toolgate.dlq.") {
						t.Fatalf("%s is %d bytes: the error was not cut", o.Subject, len(o.Data))
					}
				}
				if r := resultOut(t, outs); !strings.Contains(r.Errors[0], "cut by toolgate: 8388608 bytes") {
					t.Fatalf("error %.100s...: want the cut named", r.Errors[0])
				}
			}},
		{"a 70 KB tool name is cut in every header", 16 << 20,
			func(t *testing.T) call.Envelope {
				return terminal(t, strings.Repeat("n", 70<<10), call.ExecutionFailed, nil, "no")
			},
			func(t *testing.T, outs []worker.Output) {
				for _, o := range outs {
					if v := o.Header.Get(streams.HeaderTool); len(v) > HeaderValueMax {
						t.Fatalf("%s: Toolgate-Tool is %d bytes", o.Subject, len(v))
					}
				}
			}},
		{"a dead letter over the max payload keeps its raw arguments as excerpt and sha256", 1 << 20,
			func(t *testing.T) call.Envelope {
				e := terminal(t, "get_weather", call.ExecutionFailed, nil, "no")
				e.RawArguments = `{"blob":"` + strings.Repeat("z", 2<<20) + `"}`
				return e
			},
			func(t *testing.T, outs []worker.Output) {
				for _, o := range outs {
					if !strings.HasPrefix(o.Subject, "toolgate.dlq.") {
						continue
					}
					e, err := call.Unmarshal(o.Data)
					if err != nil {
						t.Fatalf("dead letter is no longer an envelope: %v", err)
					}
					if !strings.Contains(e.RawArguments, "sha256") || !strings.Contains(e.RawArguments, "2097163 bytes") {
						t.Fatalf("raw arguments %.100s: want excerpt, size and sha256", e.RawArguments)
					}
					return
				}
				t.Fatal("no dead letter")
			}},
	} {
		t.Run(test.name, func(t *testing.T) {
			outs, err := withMaxPayload(test.max).Outputs(streams.Execute, test.env(t))
			if err != nil {
				t.Fatal(err)
			}
			checkFits(t, outs, test.max)
			test.check(t, outs)
		})
	}
}

func resultOut(t *testing.T, outs []worker.Output) Result {
	t.Helper()
	for _, o := range outs {
		if strings.HasPrefix(o.Subject, "toolgate.results.") {
			var r Result
			if err := json.Unmarshal(o.Data, &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatal("no result")
	return Result{}
}

func TestRaw_cuts_headers_and_keeps_the_input(t *testing.T) {
	em := withMaxPayload(16 << 20)
	prov := strings.Repeat("p", 40<<10)
	h := nats.Header{}
	h.Set(streams.HeaderProvider, prov)
	h.Set(streams.HeaderResponseID, "r1")
	m := worker.Msg{Subject: streams.SubjectInResponse, Header: h, Data: []byte(`{"x":1}`), StreamSeq: 7}
	o := em.Raw(streams.Accumulate, "header_too_large", m, errors.New(strings.Repeat("why ", 2<<20)))
	checkFits(t, []worker.Output{o}, 16<<20)
	if string(o.Data) != `{"x":1}` {
		t.Fatalf("input changed: %s", o.Data)
	}
	got := o.Header.Get(streams.HeaderProvider)
	if len(got) > InputHeaderMax || !strings.Contains(got, "40960 bytes") || !strings.Contains(got, sha([]byte(prov))) {
		t.Fatalf("provider header %q: want at most %d bytes naming size and sha256", got, InputHeaderMax)
	}
	if h.Get(streams.HeaderProvider) != prov {
		t.Fatal("Raw changed the input's own headers")
	}
	if o.Header.Get(streams.HeaderResponseID) != "r1" {
		t.Fatal("a small header was changed")
	}
}

func TestRaw_input_that_cannot_fit_beside_its_headers_is_kept_as_its_cut_form(t *testing.T) {
	em := withMaxPayload(64 << 10)
	data := []byte(strings.Repeat("d", 64<<10-10))
	o := em.Raw(streams.Accumulate, "too_large", worker.Msg{Subject: streams.SubjectInResponse, Data: data}, errors.New("no"))
	checkFits(t, []worker.Output{o}, 64<<10)
	if !strings.Contains(string(o.Data), sha(data)) {
		t.Fatalf("body %.200s: want its sha256", o.Data)
	}
}

func TestCutText_is_bounded_and_keeps_runes_whole(t *testing.T) {
	for _, test := range []struct {
		in    string
		limit int
	}{
		{strings.Repeat("é", 1000), 200},
		{strings.Repeat("a", 300), 256},
		{strings.Repeat("日本", 5000), TextMax},
		{strings.Repeat("x", 50), 10}, // below the note's own size: the note alone
	} {
		got := result.CutText(test.in, test.limit)
		if !utf8.ValidString(got) || !strings.Contains(got, sha([]byte(test.in))) {
			t.Fatalf("CutText(%d bytes, %d) = %q: want valid UTF-8 naming the sha256", len(test.in), test.limit, got)
		}
		if test.limit > 100 && len(got) > test.limit {
			t.Fatalf("CutText(%d bytes, %d) is %d bytes", len(test.in), test.limit, len(got))
		}
	}
	if got := result.CutText("short", 10); got != "short" {
		t.Fatalf("a short text changed: %q", got)
	}
}
