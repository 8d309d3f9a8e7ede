package repair

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/model/modelclient"
	"github.com/toolgate/toolgate/internal/provider"
)

// The flow the repair gate wires: Prompt -> modelclient.Client.Complete against a
// scripted server speaking the protocol -> provider.ParseResponse with the
// protocol as provider name -> Answer. Each case counts the model requests.

type scriptedReply struct {
	status int
	header map[string]string
	body   string
}

func scriptedServer(t *testing.T, replies ...scriptedReply) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		i := int(n.Add(1)) - 1
		rp := replies[min(i, len(replies)-1)]
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rp.status)
		_, _ = io.WriteString(w, rp.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

const (
	oaCall      = `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"create_invoice","arguments":"{\"customer_id\":\"c1\",\"amount\":5}"}}]},"finish_reason":"tool_calls"}]}`
	oaText      = `{"id":"c2","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"The customer_id is missing; which customer should be invoiced?"},"finish_reason":"stop"}]}`
	oaTruncated = `{"id":"c3","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"create_invoice","arguments":"{\"customer_id\":\"c1\",\"lines\":[{\"sku\":"}}]},"finish_reason":"length"}]}`
	anCall      = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"create_invoice","input":{"customer_id":"c1","amount":5}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20}}`
	anText      = `{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"I don't know the customer_id; please provide it."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":12}}`
	anTruncated = `{"id":"msg_3","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"create_invoice","input":{}}],"stop_reason":"max_tokens","usage":{"input_tokens":10,"output_tokens":1024}}`
)

func TestFlow_prompt_complete_normalize_answer(t *testing.T) {
	type wantT struct {
		kind      string
		requests  int
		truncated bool
	}
	for _, tc := range []struct {
		name    string
		p       model.Protocol
		replies []scriptedReply
		want    wantT
	}{
		{"openai repaired on first attempt", model.ProtocolOpenAIChat, []scriptedReply{{200, nil, oaCall}}, wantT{KindRepaired, 1, false}},
		{"anthropic repaired on first attempt", model.ProtocolAnthropic, []scriptedReply{{200, nil, anCall}}, wantT{KindRepaired, 1, false}},
		{"openai answered in text", model.ProtocolOpenAIChat, []scriptedReply{{200, nil, oaText}}, wantT{KindNeedsClarification, 1, false}},
		{"anthropic answered in text", model.ProtocolAnthropic, []scriptedReply{{200, nil, anText}}, wantT{KindNeedsClarification, 1, false}},
		{"openai 429 then success", model.ProtocolOpenAIChat, []scriptedReply{{429, map[string]string{"Retry-After": "2"}, `{}`}, {200, nil, oaCall}}, wantT{KindRepaired, 2, false}},
		{"anthropic 529 overloaded then success", model.ProtocolAnthropic, []scriptedReply{{529, nil, `{"type":"error","error":{"type":"overloaded_error"}}`}, {200, nil, anCall}}, wantT{KindRepaired, 2, false}},
		{"openai truncated again", model.ProtocolOpenAIChat, []scriptedReply{{200, nil, oaTruncated}}, wantT{KindRepaired, 1, true}},
		{"anthropic truncated again", model.ProtocolAnthropic, []scriptedReply{{200, nil, anTruncated}}, wantT{KindRepaired, 1, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, count := scriptedServer(t, tc.replies...)
			cfg := model.Config{Protocol: tc.p, Endpoint: srv.URL + "/v1", Model: "m", APIKey: "k"}
			c, err := modelclient.NewClient(cfg, srv.Client(), modelclient.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
			if err != nil {
				t.Fatal(err)
			}
			in := invoiceInput(SchemaInvalid, `{"amount":"5"}`, "/amount: expected number")
			if ok, why := Decide(in); !ok {
				t.Fatalf("Decide: %s", why)
			}
			body, n, err := c.Complete(context.Background(), Prompt(in))
			if err != nil || n != tc.want.requests || int(count.Load()) != tc.want.requests {
				t.Fatalf("Complete: n=%d server saw %d err=%v; want %d requests", n, count.Load(), err, tc.want.requests)
			}
			resp, err := provider.ParseResponse(string(tc.p), body, provider.WithMaxTokens(c.Config().MaxTokens))
			if err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			calls := make([]Call, len(resp.Calls))
			for i, pc := range resp.Calls {
				calls[i] = Call{Name: pc.Name, Arguments: pc.Arguments}
			}
			v := Answer(calls, resp.Text)
			if v.Kind != tc.want.kind {
				t.Fatalf("Answer = %+v, want %s", v, tc.want.kind)
			}
			if tc.want.kind == KindRepaired {
				if v.Tool != "create_invoice" || resp.Calls[0].Truncated != tc.want.truncated {
					t.Fatalf("repaired call %+v, provider call %+v", v, resp.Calls[0])
				}
			}
			if tc.want.truncated {
				// Re-entering with repair_attempts+1, the truncated answer is
				// judged again and the default bound ends it as failed.
				in.Failure, in.Attempts, in.RawArguments = Truncated, 1, v.Arguments
				if ok, why := Decide(in); ok {
					t.Fatalf("second truncation was allowed another repair: %s", why)
				}
			}
		})
	}
}
