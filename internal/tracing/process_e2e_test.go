package tracing_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/chaos"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tracing/tracetest"
	"github.com/toolgate/toolgate/streams"
)

// The seven services/<stage> binaries run as seven OS processes against
// one NATS and one redis-server, each exporting with its own tracer
// provider to one OTLP receiver in this test. A producer publishes a
// response with a traceparent; every gate span, from its own process's
// service, and the execute_tool span must be in the producer's trace, each
// the child of the one before, and the executor's request must carry the
// execute_tool span's context. The resource carries no process.pid
// (resource.Default and OTEL_RESOURCE_ATTRIBUTES only), so the service name
// tells the processes apart; no stage runs inside the test process. The
// trace is logged as a tree: go test -v -run TestTracing_one_trace_across_
// ./internal/tracing prints it.
func TestTracing_one_trace_across_seven_stage_processes(t *testing.T) {
	bins, err := chaos.Build(filepath.Join(t.TempDir(), "bin"))
	if err != nil {
		t.Fatal(err)
	}
	rcv := tracetest.Start(t)
	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	applyTool(t, js)

	execHeader := answerWeather(t, nc)

	dir := t.TempDir()
	sealDir, keyDir := filepath.Join(dir, "seal-keys"), filepath.Join(dir, "exec-key")
	if _, err := seal.Ensure(sealDir, streams.Names()); err != nil {
		t.Fatal(err)
	}
	if _, err := execute.EnsureSigner(keyDir); err != nil {
		t.Fatal(err)
	}
	common := []string{
		"TOOLGATE_NATS_URL=" + srv.ClientURL(), "TOOLGATE_REDIS_URL=" + rds.URL(), "TOOLGATE_LOG_LEVEL=warn",
		"TOOLGATE_SEAL_KEYS=" + sealDir, "TOOLGATE_EXEC_SIGNING_KEY=" + filepath.Join(keyDir, execute.SigningKeyFile),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_BSP_SCHEDULE_DELAY=50",
	}
	for _, st := range streams.Names() {
		startStageProcess(t, st, bins[st], filepath.Join(dir, st+".log"), common)
	}

	publishTraced(t, js, "resp-proc", "")
	waitResult(t, js, "resp-proc")

	gates := []string{streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Execute}
	want := append(gateNames(gates), "execute_tool get_weather")
	spans := waitSpans(t, rcv, want)
	t.Logf("the trace across the stage processes:\n%s", tracetest.Tree(rcv.Spans(), producerTrace))

	checkChain(t, spans, want, append(gates, streams.Execute)) // execute_tool is the execute process's
	ex, tool := spans["toolgate.execute"], spans["execute_tool get_weather"]
	if ex.Attrs["toolgate.call.id"] == "" || ex.Attrs["toolgate.status"] != "executed" || tool.Attrs["gen_ai.tool.name"] != "get_weather" ||
		tool.Attrs["gen_ai.tool.call.id"] != ex.Attrs["toolgate.call.id"] {
		t.Errorf("execute span %v, execute_tool span %v: want call id, status executed, the GenAI tool attributes", ex.Attrs, tool.Attrs)
	}
	if got := execHeader()["traceparent"]; len(got) != 1 || got[0] != "00-"+producerTrace+"-"+tool.SpanID+"-01" {
		t.Errorf("executor got traceparent %q, want the execute_tool span's of trace %s", got, producerTrace)
	}
}

// startStageProcess runs bin as its own OS process with the environment
// env (and none of the test's TOOLGATE_*/OTEL_* variables), a health
// address on a free port and its output in logPath, waits until /readyz
// answers 200, and at cleanup sends SIGTERM (the process drains and flushes
// its spans), then SIGKILL after 10 s.
func startStageProcess(t *testing.T, stage, bin, logPath string, env []string) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLGATE_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, env...), "TOOLGATE_HTTP_ADDR="+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s: no exit 10 s after SIGTERM", stage)
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("%s (pid %d) log:\n%s", stage, cmd.Process.Pid, out)
		}
	})
	c := http.Client{Timeout: time.Second}
	exited := false
	err = testenv.Poll(30*time.Second, 50*time.Millisecond, func() error {
		select {
		case <-done:
			exited = true
			return nil
		default:
		}
		resp, err := c.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: /readyz answered %s", stage, resp.Status)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exited {
		t.Fatalf("%s exited at start: %v", stage, cmd.ProcessState)
	}
}
