package chaos

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/natsproc"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// Build compiles every services/<stage> binary into dir with `go build`
// and returns their paths by stage. It runs inside the toolgate module (the
// repository or any directory below it).
func Build(dir string) (map[string]string, error) {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, st := range streams.Names() {
		args = append(args, "github.com/toolgate/toolgate/services/"+st)
	}
	cmd := exec.Command(natsproc.GoTool(), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("chaos: go build the stage binaries: %v\n%s", err, out.String())
	}
	bins := map[string]string{}
	for _, st := range streams.Names() {
		p := filepath.Join(dir, st)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("chaos: %w", err)
		}
		bins[st] = p
	}
	return bins, nil
}

// proc supervises one stage process: it is started again whenever it exits
// (killed by the harness, or failed at start because NATS was down), until
// stop.
type proc struct {
	stage, bin, http, log string
	env                   []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool
	starts  int
	exits   int // exits the harness did not cause
	killing bool
	held    bool // killed and not restarted until release (proc_hold.go)
}

func (p *proc) start() error {
	if p.starts > 0 {
		if err := p.freshAddr(); err != nil {
			return err
		}
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	cmd := exec.Command(p.bin)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("chaos: start %s: %w", p.stage, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	p.starts++
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
		p.mu.Lock()
		stopped := p.stopped
		if !p.killing {
			p.exits++
		}
		p.killing = false
		p.mu.Unlock()
		if stopped || p.isHeld() {
			return
		}
		time.Sleep(200 * time.Millisecond) // restart, as a Deployment would
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.stopped && !p.held && p.cmd == cmd {
			if err := p.start(); err != nil {
				fmt.Fprintf(os.Stderr, "chaos: restart %s: %v\n", p.stage, err)
			}
		}
	}()
	return nil
}

// httpAddrEnv names the stage's HTTP address in its environment.
const httpAddrEnv = "TOOLGATE_HTTP_ADDR="

// freshAddr gives a process started again a free HTTP port of its own, when
// its address is set in its environment (a stage's; `toolgate up`'s is in
// its command line): the port it had is free while it is down, and any
// process may take it meanwhile, even as the local port of an outgoing
// connection, so starting again on it could fail for good ("address
// already in use"), as a pod's restart never does. Called with p.mu held
// or before the process is shared.
func (p *proc) freshAddr() error {
	for i, kv := range p.env {
		if !strings.HasPrefix(kv, httpAddrEnv) {
			continue
		}
		port, err := testenv.Port()
		if err != nil {
			return fmt.Errorf("chaos: restart %s: %w", p.stage, err)
		}
		p.http = "127.0.0.1:" + strconv.Itoa(port)
		p.env[i] = httpAddrEnv + p.http
	}
	return nil
}

// addr is where the process serves HTTP now (freshAddr).
func (p *proc) addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.http
}

// kill SIGKILLs the process (no drain, no ack); the supervisor starts it
// again. It returns once the process is gone, false when it was not running
// (between an exit and its restart).
func (p *proc) kill() bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	select {
	case <-done:
		p.mu.Unlock()
		return false
	default:
	}
	p.killing = true
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	return true
}

// stop ends the process for good: SIGTERM (drain), SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	p.mu.Lock()
	p.stopped = true
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// ready polls /readyz: every worker of the process consumes.
func (p *proc) ready(total time.Duration) error {
	c := http.Client{Timeout: time.Second}
	return testenv.Poll(total, 50*time.Millisecond, func() error {
		resp, err := c.Get("http://" + p.addr() + "/readyz")
		if err != nil {
			return fmt.Errorf("%s: %w", p.stage, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: /readyz answered %s", p.stage, resp.Status)
		}
		return nil
	})
}

// pid is the running process's id, 0 between an exit and its restart.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// name is the process's name in the report: its log file's, e.g.
// execute-1.
func (p *proc) name() string {
	return strings.TrimSuffix(filepath.Base(p.log), ".log")
}

func (p *proc) counts() (starts, exits int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts, p.exits
}

// NATSServerBin is the nats-server binary's name in a --bin directory.
const NATSServerBin = "nats-server"

// LoadBins returns the stage binaries in dir (built beforehand, e.g. by
// `make chaos`), and its nats-server when there is one, by name.
func LoadBins(dir string) (map[string]string, error) {
	bins := map[string]string{}
	for _, st := range streams.Names() {
		p := filepath.Join(dir, st)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("chaos: --bin %s: %w", dir, err)
		}
		bins[st] = p
	}
	if p := filepath.Join(dir, NATSServerBin); fileExists(p) {
		bins[NATSServerBin] = p
	}
	return bins, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
