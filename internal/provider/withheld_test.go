package provider

import "testing"

// A response its content filter stopped proposes nothing anyone vetted:
// whatever the provider, its calls are withheld as a provider error naming
// them, and never reach a gate. Before, an openai-chat or Gemini response
// with finish content_filter / SAFETY kept its calls, and they went on to
// the gates (only Bedrock's codec withheld them).
func TestResponse_content_filtered_calls_are_withheld(t *testing.T) {
	for _, tc := range []struct{ provider, body string }{
		{OpenAIChat, `{"id":"c1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"delete_customer_account","arguments":"{\"customer_id\":\"c-1\"}"}}]},"finish_reason":"content_filter"}]}`},
		{Gemini, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"delete_customer_account","args":{"customer_id":"c-1"}}}]},"finishReason":"SAFETY"}],"modelVersion":"gemini-2.5-flash"}`},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			r, err := ParseResponse(tc.provider, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Calls) != 0 || r.Error == nil || !r.Error.Withheld || r.Finish != ReasonError {
				t.Fatalf("calls %d, error %+v, finish %s: want no call, a withheld error, finish error", len(r.Calls), r.Error, r.Finish)
			}
		})
	}
}
