package tracehdr

import (
	"net/http"
	"strings"
	"testing"
)

func TestFromHTTP_takes_a_valid_context_and_drops_a_malformed_one(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	long := "a=" + strings.Repeat("x", 250) + ",b=" + strings.Repeat("y", 250) + ",c=" + strings.Repeat("z", 250)
	for _, test := range []struct {
		name           string
		hdr            http.Header
		wantTP, wantTS string
	}{
		{"valid", http.Header{"Traceparent": {tp}, "Tracestate": {"rojo=1"}}, tp, "rojo=1"},
		{"tracestate in two headers", http.Header{"Traceparent": {tp}, "Tracestate": {"rojo=1", "congo=2"}}, tp, "rojo=1,congo=2"},
		{"none", http.Header{}, "", ""},
		{"uppercase hex", http.Header{"Traceparent": {strings.ToUpper(tp)}}, "", ""},
		{"zero trace id", http.Header{"Traceparent": {"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, "Tracestate": {"rojo=1"}}, "", ""},
		{"garbage", http.Header{"Traceparent": {"hello; drop table"}, "Tracestate": {"rojo=1"}}, "", ""},
		{"two traceparents", http.Header{"Traceparent": {tp, "00-11111111111111111111111111111111-00f067aa0ba902b7-01"}}, "", ""},
		{"version 00 with more", http.Header{"Traceparent": {tp + "-extra"}}, "", ""},
		{"bad tracestate", http.Header{"Traceparent": {tp}, "Tracestate": {"Not A Key=1"}}, tp, ""},
		{"over-long tracestate", http.Header{"Traceparent": {tp}, "Tracestate": {long}}, tp, long[:strings.LastIndex(long, ",")]},
	} {
		gotTP, gotTS := FromHTTP(test.hdr)
		if gotTP != test.wantTP || gotTS != test.wantTS {
			t.Errorf("%s: (%q, %q), want (%q, %q)", test.name, gotTP, gotTS, test.wantTP, test.wantTS)
		}
	}
}
