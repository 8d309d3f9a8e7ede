package publish

import (
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

func TestVerdict_exit_codes_say_all_ok_some_not_ok_or_still_waiting(t *testing.T) {
	ok := func(id string, n int) story {
		return story{Record: pipeline.StatusRecord{CallID: id}, Result: &pipeline.Result{CallID: id, Status: call.Executed, OK: true, ResponseCalls: n}}
	}
	bad := story{Record: pipeline.StatusRecord{CallID: "r-1"}, Result: &pipeline.Result{CallID: "r-1", Status: call.Failed, Failure: call.SchemaInvalid, ResponseCalls: 2}}
	waiting := story{Record: pipeline.StatusRecord{CallID: "r-1", Status: call.ApprovalRequired}}
	for _, c := range []struct {
		name     string
		rs       responseStory
		want     int
		complete bool
	}{
		{"nothing", responseStory{}, exitResultsWaiting, false},
		{"all ok", responseStory{Calls: []story{ok("r-0", 2), ok("r-1", 2)}}, 0, true},
		{"one not ok", responseStory{Calls: []story{ok("r-0", 2), bad}}, exitResultsNotOK, true},
		{"one waiting", responseStory{Calls: []story{ok("r-0", 2), waiting}}, exitResultsWaiting, false},
		{"a call not seen yet", responseStory{Calls: []story{ok("r-0", 2)}}, exitResultsWaiting, false},
		{"not ok beats waiting", responseStory{Calls: []story{bad, waiting}}, exitResultsNotOK, false},
		{"no tool calls", responseStory{Result: &wire.ResponseResult{Status: call.NoToolCalls, OK: true}}, 0, true},
		{"response rejected", responseStory{Result: &wire.ResponseResult{Status: call.Rejected}}, exitResultsNotOK, true},
	} {
		if got := clitest.Code(verdict(c.rs)); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
		if got := complete(c.rs); got != c.complete {
			t.Errorf("%s: complete %v, want %v", c.name, got, c.complete)
		}
	}
}
