package execute

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// checkStatusListed: a server listing toolgate_status answers for a call
// it ran (its answer) and for one it never saw (unknown), and a question
// never runs the tool.
func checkStatusListed(t *testing.T, s *Signer, ex func(tool string) *MCP) {
	ran := Request{Tool: "charge", CallID: "resp-3-0", IdempotencyKey: "k-ran", Arguments: []byte(`{"amount":5}`)}
	rep, err := signedWith(ex, "signed_echo", s).Execute(callCtx(t), ran)
	if err != nil || !rep.OK {
		t.Fatalf("the call: %+v, %v", rep, err)
	}
	m := signedWith(ex, "signed_echo", s)
	t.Run("a_call_it_ran_is_known_with_its_answer", func(t *testing.T) {
		st, err := m.Status(callCtx(t), ran)
		if err != nil || !st.Known || !st.OK || !jsonEqual(st.Result, rep.Result) {
			t.Fatalf("got %+v (%s), %v; want known, ok, result %s", st, st.Result, err, rep.Result)
		}
	})
	t.Run("a_call_it_never_saw_is_unknown", func(t *testing.T) {
		never := ran
		never.IdempotencyKey = "k-never"
		st, err := m.Status(callCtx(t), never)
		if err != nil || st.Known {
			t.Fatalf("got %+v, %v; want known false", st, err)
		}
	})
	t.Run("an_unsigned_question_is_refused", func(t *testing.T) {
		_, err := signedWith(ex, "signed_echo", nil).Status(callCtx(t), ran)
		if !errors.Is(err, ErrNoStatus) || !errors.Is(err, ErrRefused) {
			t.Fatalf("got %v, want ErrNoStatus wrapping ErrRefused", err)
		}
	})
	t.Run("the_status_tool_is_never_the_tool_itself", func(t *testing.T) {
		m := signedWith(ex, "signed_echo", s)
		m.StatusTool = "signed_echo"
		if _, err := m.Status(callCtx(t), ran); !errors.Is(err, ErrNoStatus) {
			t.Fatalf("got %v, want ErrNoStatus", err)
		}
	})
	if n := runs(t, ex); n != 1 {
		t.Fatalf("signed_echo ran %d times, want 1: a status question ran the tool", n)
	}
}

// checkStatusNotListed: without toolgate_status the executor cannot say,
// and asking runs nothing.
func checkStatusNotListed(t *testing.T, s *Signer, ex func(tool string) *MCP) {
	ran := Request{Tool: "charge", CallID: "resp-4-0", IdempotencyKey: "k-ran", Arguments: []byte(`{"amount":5}`)}
	if rep, err := signedWith(ex, "signed_echo", s).Execute(callCtx(t), ran); err != nil || !rep.OK {
		t.Fatalf("the call: %+v, %v", rep, err)
	}
	_, err := signedWith(ex, "signed_echo", s).Status(callCtx(t), ran)
	if !errors.Is(err, ErrNoStatus) || !strings.Contains(err.Error(), "lists no tool") {
		t.Fatalf("got %v, want ErrNoStatus: the server lists no status tool (the call stays outcome_unknown)", err)
	}
	if n := runs(t, ex); n != 1 {
		t.Fatalf("signed_echo ran %d times, want 1", n)
	}
}

func TestMCP_status_tool_streamable_http(t *testing.T) {
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("listed", func(t *testing.T) {
		ex, _ := signedServerHTTP(t, s, true)
		checkStatusListed(t, s, ex)
	})
	t.Run("not_listed", func(t *testing.T) {
		ex, _ := signedServerHTTP(t, s, false)
		checkStatusNotListed(t, s, ex)
	})
}

func TestMCP_status_tool_stdio_listed(t *testing.T) {
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := signedServerStdio(t, s, true)
	checkStatusListed(t, s, ex)
}

func TestMCP_status_tool_stdio_not_listed(t *testing.T) {
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := signedServerStdio(t, s, false)
	checkStatusNotListed(t, s, ex)
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
