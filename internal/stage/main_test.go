package stage

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/streams"
)

// envExecuteProcess makes the test binary run the execute stage as its own
// OS process (see execRig.startProcess) instead of the tests, so a test can
// SIGKILL a real worker mid-call.
const envExecuteProcess = "TOOLGATE_TEST_EXECUTE_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(envExecuteProcess) == "1" {
		os.Exit(executeProcess())
	}
	os.Exit(m.Run())
}

// executeProcess runs the execute stage against TOOLGATE_NATS_URL and
// TOOLGATE_REDIS_URL with the AckWait in TOOLGATE_TEST_ACK_WAIT, prints
// READY once consuming, and drains on SIGTERM.
func executeProcess() int {
	ack, err := time.ParseDuration(os.Getenv("TOOLGATE_TEST_ACK_WAIT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "TOOLGATE_TEST_ACK_WAIT:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ready := make(chan struct{})
	go func() {
		select {
		case <-ready:
			fmt.Println("READY")
		case <-ctx.Done():
		}
	}()
	err = Run(ctx, Config{
		NATSURL: os.Getenv("TOOLGATE_NATS_URL"), RedisURL: os.Getenv("TOOLGATE_REDIS_URL"), Exec: ExecConfig{Signer: testExecSigner()},
		Stages: []string{streams.Execute}, Settings: testSettings(ack), SealKeys: os.Getenv("TOOLGATE_SEAL_KEYS"),
		Log: zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Str("pid", fmt.Sprint(os.Getpid())).Logger(),
	}, ready)
	if err != nil {
		fmt.Fprintln(os.Stderr, "execute process:", err)
		return 1
	}
	return 0
}

// testSettings are the default topology with a short AckWait, so a killed
// worker's message is redelivered within a test.
func testSettings(ackWait time.Duration) streams.Settings {
	s := streams.DefaultSettings()
	s.AckWait = ackWait
	return s
}
