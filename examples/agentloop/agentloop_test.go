package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// scriptedModel answers an OpenAI chat request with a get_weather call
// for Paris first, then, once the conversation holds a tool message, with
// a final text that quotes it.
func scriptedModel(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var tool string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tool = m.Content
			}
		}
		mu.Lock()
		seen = append(seen, tool)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if tool == "" {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"scripted","choices":[{"index":0,"message":{"role":"assistant","content":null,`+
				`"tool_calls":[{"id":"call_w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`)
			return
		}
		answer, _ := json.Marshal("The tool said: " + tool)
		fmt.Fprintf(w, `{"id":"chatcmpl-2","object":"chat.completion","model":"scripted","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// runExecutor builds and runs examples/executor against the pipeline, as
// its README says to run it beside toolgate up.
func runExecutor(t *testing.T, p *pipetest.Pipe) *bytes.Buffer {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "executor")
	build := exec.Command("go", "build", "-o", bin, "./examples/executor")
	build.Dir = pipetest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/executor: %v\n%s", err, out)
	}
	out := &bytes.Buffer{}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "TOOLGATE_NATS_URL="+p.URL, "TOOLGATE_SECRETS="+p.Secrets, "TOOLGATE_NATS_USER=", "TOOLGATE_EXEC_PUBLIC_KEY=")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("executor:\n%s", out)
		}
	})
	// Serving once its micro service answers discovery.
	nc, _ := p.Connect(t, authz.Admin)
	testenv.Eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		_, err := nc.Request("$SRV.PING."+authz.ExampleGroup, nil, time.Second)
		return err
	})
	return out
}

func TestAgentLoop_model_toolgate_tool_results_model(t *testing.T) {
	p := pipetest.Start(t, pipetest.Options{})
	runExecutor(t, p)
	model, seen := scriptedModel(t)
	_, js := p.Connect(t, authz.Producer)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	answer, err := Loop{Model: model.URL + "/v1/chat/completions", ModelName: "scripted", JS: js}.Run(ctx, "What is the weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	// The example executor's get_weather answers 21 °C, clear: the final
	// answer can only say so if the tool ran through toolgate and its
	// result went back to the model.
	if !strings.Contains(answer, `"temperature_c":21`) || !strings.Contains(answer, "Paris") || !strings.Contains(answer, "clear") {
		t.Fatalf("final answer %q does not use the tool result", answer)
	}
	if len(*seen) != 2 || (*seen)[0] != "" {
		t.Fatalf("model asked %d times (%q), want a tool call, then the answer", len(*seen), *seen)
	}
}
