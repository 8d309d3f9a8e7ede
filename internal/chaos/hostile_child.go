package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/natsproc"
	"github.com/toolgate/toolgate/internal/testenv"
)

// BuildToolgate compiles services/toolgate into dir and returns its path.
func BuildToolgate(dir string) (string, error) {
	bin := filepath.Join(dir, "toolgate")
	cmd := exec.Command(natsproc.GoTool(), "build", "-o", bin, "github.com/toolgate/toolgate/services/toolgate")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chaos: go build services/toolgate: %v\n%s", err, out.String())
	}
	return bin, nil
}

// moduleDir is the root of the toolgate module (for examples/tools.yaml).
func moduleDir() (string, error) {
	out, err := exec.Command(natsproc.GoTool(), "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("chaos: run inside the toolgate module (go env GOMOD: %q, %v)", mod, err)
	}
	return filepath.Dir(mod), nil
}

// Crash is one exit of the child the harness did not cause.
type Crash struct {
	At    time.Duration // since the soak began
	PID   int
	Phase string
	State string // how it ended (exit status or signal)
	Cause string // the first panic / fatal error line of its log, if any
	After string // the hostile input published last before it
}

// child is `toolgate up` run by a proc (restarted whenever it exits) under
// an address-space cap, watched: every exit is a crash, its RSS is sampled
// from /proc every 100 ms.
type child struct {
	p                *proc
	natsURL, capDesc string
	begin            time.Time

	mu      sync.Mutex
	phase   string
	after   string
	crashes []Crash
	peak    map[string]int64         // phase -> max VmRSS (bytes)
	low     map[string]int64         // phase -> min VmRSS (bytes)
	last    map[string]int64         // phase -> the latest VmRSS (bytes)
	hwm     int64                    // max VmHWM (bytes)
	cpu     map[string]time.Duration // phase -> CPU time (user+system)
	lastPID int
	lastCPU time.Duration

	quit, watched chan struct{}
}

// startChild writes a wrapper that execs `prlimit --as=CAP toolgate up ...`
// (or `ulimit -v` in sh when prlimit is missing: either way the PID is
// toolgate's), starts it and waits until every stage consumes.
func startChild(cfg HostileConfig, begin time.Time) (*child, error) {
	mod, err := moduleDir()
	if err != nil {
		return nil, err
	}
	natsPort, err := testenv.Port()
	if err != nil {
		return nil, err
	}
	httpPort, err := testenv.Port()
	if err != nil {
		return nil, err
	}
	httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
	// --insecure: the soak's hostile producer and its judge connect
	// without credentials, as any local client; loopback only.
	// --exec-allow: the 6 MB HTTP tool listens on 127.0.0.1. --secrets:
	// the soak's tools verify with the exec-signing.pub up makes there.
	// --ingest-http '': the soak publishes over NATS, and the HTTP ingest's
	// fixed default port may be held by another up on this machine.
	up := fmt.Sprintf("%q up --insecure --listen 127.0.0.1:%d --http %s --ingest-http '' --data %q --tools %q --log-level warn --exec-allow 127.0.0.1 --secrets %q",
		cfg.Bin, natsPort, httpAddr, filepath.Join(cfg.Dir, "data"), filepath.Join(mod, "examples", "tools.yaml"), filepath.Join(cfg.Dir, "secrets"))
	var script, desc string
	if pl, err := exec.LookPath("prlimit"); err == nil {
		script = fmt.Sprintf("exec %q --as=%d -- %s\n", pl, cfg.MemCap, up)
		desc = fmt.Sprintf("RLIMIT_AS %s (prlimit)", mib(cfg.MemCap))
	} else {
		script = fmt.Sprintf("ulimit -v %d || exit 97\nexec %s\n", cfg.MemCap/1024, up)
		desc = fmt.Sprintf("RLIMIT_AS %s (sh ulimit -v)", mib(cfg.MemCap))
	}
	wrapper := filepath.Join(cfg.Dir, "toolgate-up.sh")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	c := &child{
		p:       &proc{stage: "toolgate up", bin: wrapper, http: httpAddr, log: filepath.Join(cfg.Dir, "toolgate-up.log")},
		natsURL: fmt.Sprintf("nats://127.0.0.1:%d", natsPort), capDesc: desc, begin: begin,
		peak: map[string]int64{}, low: map[string]int64{}, last: map[string]int64{}, cpu: map[string]time.Duration{}, quit: make(chan struct{}), watched: make(chan struct{}),
	}
	if err := c.p.start(); err != nil {
		return nil, err
	}
	go c.watch()
	if err := c.p.ready(60 * time.Second); err != nil {
		c.stop()
		return nil, fmt.Errorf("chaos: toolgate up not ready (log %s): %w", c.p.log, err)
	}
	return c, nil
}

func (c *child) setPhase(ph string) {
	c.mu.Lock()
	c.phase = ph
	c.mu.Unlock()
}

// published notes the hostile input sent last, to name it beside a crash.
func (c *child) published(name string) {
	c.mu.Lock()
	c.after = name
	c.mu.Unlock()
}

// watch samples the running incarnation's memory and records every exit
// until stop.
func (c *child) watch() {
	defer close(c.watched)
	var seen *exec.Cmd
	var seenDone chan struct{}
	var logOff int64
	recorded := true
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		c.p.mu.Lock()
		cmd, done := c.p.cmd, c.p.done
		c.p.mu.Unlock()
		if cmd != seen {
			if !recorded {
				c.crashed(seen, logOff)
			}
			seen, seenDone, recorded = cmd, done, false
			logOff = fileSize(c.p.log)
		}
		select {
		case <-seenDone:
			if !recorded {
				c.crashed(seen, logOff)
				recorded = true
			}
		default:
			c.sample(cmd.Process.Pid)
		}
		select {
		case <-c.quit:
			return
		case <-tick.C:
		}
	}
}

func (c *child) crashed(cmd *exec.Cmd, logOff int64) {
	state := "exited"
	if cmd.ProcessState != nil {
		state = cmd.ProcessState.String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashes = append(c.crashes, Crash{
		At: time.Since(c.begin), PID: cmd.Process.Pid, Phase: c.phase, State: state,
		Cause: crashCause(c.p.log, logOff), After: c.after,
	})
}

// sample reads VmRSS and VmHWM of pid.
func (c *child) sample(pid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return
	}
	var rss, hwm int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			hwm = n << 10
		}
	}
	cpu, ok := cpuTime(pid)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peak[c.phase] = max(c.peak[c.phase], rss)
	if lo, ok := c.low[c.phase]; !ok || rss < lo {
		c.low[c.phase] = rss
	}
	c.last[c.phase] = rss
	c.hwm = max(c.hwm, hwm)
	if ok {
		if pid != c.lastPID {
			c.lastPID, c.lastCPU = pid, 0
		}
		c.cpu[c.phase] += cpu - c.lastCPU
		c.lastCPU = cpu
	}
}

// cpuTime is pid's user+system time from /proc/PID/stat (clock ticks of
// 1/100 s, the Linux USER_HZ).
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// figures are the crashes and memory peaks so far.
func (c *child) figures() ([]Crash, map[string]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	peak := make(map[string]int64, len(c.peak))
	for k, v := range c.peak {
		peak[k] = v
	}
	return append([]Crash(nil), c.crashes...), peak, c.hwm
}

// rssByPhase is, per phase, the lowest and the latest VmRSS sampled.
func (c *child) rssByPhase() (low, last map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	low, last = make(map[string]int64, len(c.low)), make(map[string]int64, len(c.last))
	for k, v := range c.low {
		low[k] = v
	}
	for k, v := range c.last {
		last[k] = v
	}
	return low, last
}

// cpuByPhase is the child's CPU time so far per phase.
func (c *child) cpuByPhase() map[string]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]time.Duration, len(c.cpu))
	for k, v := range c.cpu {
		out[k] = v
	}
	return out
}

// endPhase scrapes the child's /metrics and ends the phase: the phase's
// last RSS sample is then the one taken with them, at its end, not one
// taken later while the harness reads what the soak left (the after
// phase's RSS had been read while the judge loaded every dead letter).
func (c *child) endPhase() string {
	m := c.scrapeMetrics()
	c.setPhase(phaseJudging)
	return m
}

// scrapeMetrics returns the child's /metrics (empty when it does not
// answer).
func (c *child) scrapeMetrics() string {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + c.p.addr() + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return string(b)
}

// stop ends the watch first (so the harness's own SIGTERM is no crash),
// then the child.
func (c *child) stop() {
	select {
	case <-c.quit:
		return
	default:
	}
	close(c.quit)
	<-c.watched
	c.p.stop(15 * time.Second)
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// crashCause is the first line from off on that says why a Go program died,
// with the first toolgate frame of its traceback.
func crashCause(path string, off int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	cause, fn, frame := "", "", ""
	for sc.Scan() && frame == "" {
		line := strings.TrimSpace(sc.Text())
		switch {
		case cause == "":
			for _, mark := range []string{"fatal error:", "panic:", "out of memory", "toolgate:"} {
				if strings.Contains(line, mark) {
					cause = cut(line, 160)
					break
				}
			}
		case fn == "" && (strings.HasPrefix(line, "github.com/toolgate/toolgate/internal/") || strings.HasPrefix(line, "github.com/toolgate/toolgate/pkg/")):
			fn = strings.TrimPrefix(line, "github.com/toolgate/toolgate/")
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
		case fn != "" && line != "":
			// the frame's file line: "\t/path/internal/x/file.go:123 +0x1f"
			file := strings.Fields(line)[0]
			frame = fn + " (" + file[strings.LastIndexByte(file, '/')+1:] + ")"
		}
	}
	if frame != "" {
		return cause + " at " + frame
	}
	return cause
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func mib(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}
