package modelclient

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/model"
)

const fixtures = "../../../testdata/provider-fixtures/"

// TestComplete_returns_real_provider_bodies_byte_for_byte: the body goes to
// the provider normalizer unchanged, so nothing may be re-encoded on the way.
func TestComplete_returns_real_provider_bodies_byte_for_byte(t *testing.T) {
	for _, tc := range []struct {
		p    model.Protocol
		file string
	}{
		{model.ProtocolOpenAIChat, "openai-chat/openai-gpt-4o-single-tool-call.json"},
		{model.ProtocolOpenAIChat, "ollama/ollama-openai-compat-gpt-oss-20b-tool-call.json"},
		{model.ProtocolAnthropic, "anthropic/claude-3-7-sonnet-text-and-tool-use.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(fixtures + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			srv := newScripted(t, reply{status: 200, body: string(want)})
			c, _ := newTestClient(t, tc.p, srv, nil)
			got, n, err := c.Complete(context.Background(), testRequest())
			if err != nil || n != 1 || !bytes.Equal(got, want) {
				t.Fatalf("Complete: n=%d err=%v, body equal=%v", n, err, bytes.Equal(got, want))
			}
		})
	}
}
