package console

import (
	"net/url"
	"strings"
	"testing"
)

func TestHostile_paths_and_queries_get_clear_answers_never_a_crash(t *testing.T) {
	r := newRig(t, nil, nil)
	long := strings.Repeat("x", 5000)
	for path, want := range map[string]int{
		Prefix + "calls/" + url.PathEscape("<script>alert(1)</script>"): 404,
		Prefix + "calls/" + long:                        404,
		Prefix + "calls/nobody-0":                       404,
		Prefix + "calls?since=yesterday":                400,
		Prefix + "calls?tool=" + long:                   400,
		Prefix + "calls?status=%00%ff&tenant=%e2%80%ae": 200,
		Prefix + "dlq/abc":                              404,
		Prefix + "dlq/0":                                404,
		Prefix + "dlq/18446744073709551615":             404,
		Prefix + "dlq?stage=nope":                       400,
		Prefix + "dlq?failure=a.b":                      400,
		Prefix + "tools/" + url.PathEscape("a.b"):       404,
		Prefix + "tools/missing":                        404,
		Prefix + "dlq/replays/nope":                     404,
		Prefix + "events?topic=nope":                    400,
		Prefix + "events?topic=replay:nope":             404,
		Prefix + "nowhere":                              404,
	} {
		code, body := r.get(path)
		if code != want {
			t.Errorf("GET %s: %d, want %d\n%s", path[:min(len(path), 80)], code, want, body)
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s reflects markup unescaped", path[:min(len(path), 80)])
		}
	}
	csrf := r.csrf(Prefix + "dlq")
	for path, form := range map[string]url.Values{
		Prefix + "approvals/" + url.PathEscape("../x") + "/approve": {"csrf": {csrf}, "hash": {strings.Repeat("a", 64)}},
		Prefix + "approvals/nobody-0/approve":                       {"csrf": {csrf}, "hash": {strings.Repeat("a", 64)}},
		Prefix + "approvals/nobody-0/approve?hash=x":                {"csrf": {csrf}},
		Prefix + "approvals/nobody-0/explode":                       {"csrf": {csrf}},
		Prefix + "dlq/replay":                                       {"csrf": {csrf}, "seq": {"-1"}},
		Prefix + "dlq/purge":                                        {"csrf": {csrf}},
		Prefix + "dlq/purge/confirm":                                {"csrf": {csrf}, "seq": {"99999"}},
	} {
		code, body := r.post(path, form)
		if code >= 500 || code == 200 && !strings.Contains(body, `class="flash error"`) && !strings.Contains(body, "Nothing selected") {
			t.Errorf("POST %s: %d\n%s", path, code, body)
		}
	}
}
