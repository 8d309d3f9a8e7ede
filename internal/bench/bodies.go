package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// invoiceArgs is a valid create_invoice argument object of at least size
// bytes (examples/tools.yaml): the bulk is line items, which the schema
// bounds by no maximum, each one checked by the schema and summed by the
// rules. Prices stay small so the total never asks for manual review.
func invoiceArgs(i, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	fmt.Fprintf(&b, `{"customer_id":"cus_%d","currency":"EUR","line_items":[`, i)
	for k := 0; k == 0 || b.Len() < size-2; k++ {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%06d","quantity":%d,"price_cents":%d}`, k, 1+k%3, 100+k%50)
	}
	b.WriteString("]}")
	return b.String()
}

// documentArgs is a valid DocumentTool argument object of at least size
// bytes: three line items and a base64-like document holding the rest.
func documentArgs(i, size int) string {
	head := fmt.Sprintf(`{"customer_id":"cus_%d","currency":"EUR","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900},{"sku":"SUPPORT","quantity":1,"price_cents":19900},{"sku":"SETUP","quantity":1,"price_cents":9900}],"document":"`, i)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	doc := make([]byte, max(4, size-len(head)-2))
	for k := range doc {
		doc[k] = alphabet[(k*7+i)%len(alphabet)]
	}
	return head + string(doc) + `"}`
}

// callID is the provider call id of call k of response rid: the key the
// scenarios match results by.
func callID(rid string, k int) string { return "call_" + rid + "_" + strconv.Itoa(k) }

// chatCalls is one OpenAI chat completion whose message calls tool once
// per argument object, in parallel.
func chatCalls(rid, tool string, args []string) []byte {
	var calls []string
	for k, a := range args {
		q, _ := json.Marshal(a)
		calls = append(calls, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, callID(rid, k), tool, q))
	}
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}]}`,
		rid, strings.Join(calls, ","))
}

// chatStream is an OpenAI chat streaming response of exactly events
// events (at least 3) making one create_invoice call: the chunk that opens
// the call, the arguments in events-2 fragments, and the finishing chunk.
// Each event is one chunk's JSON, as a producer publishes it.
func chatStream(rid string, i, events int) [][]byte {
	frags := events - 2
	args := invoiceArgs(i, frags*6)
	chunk := func(delta, finish string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, rid, delta, finish)
	}
	out := make([][]byte, 0, events)
	out = append(out, chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":"create_invoice","arguments":""}}]}`, callID(rid, 0)), "null"))
	for f := range frags {
		part := args[f*len(args)/frags : (f+1)*len(args)/frags]
		q, _ := json.Marshal(part)
		out = append(out, chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, q), "null"))
	}
	return append(out, chunk(`{}`, `"tool_calls"`))
}
