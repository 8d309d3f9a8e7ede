package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the name of the lock `toolgate up` holds in its data
// directory: two embedded servers on one JetStream store would corrupt it.
const lockFile = "toolgate.lock"

// lockData takes dir's lock file with flock(2), exclusive and without
// waiting, and writes this process's id into it. The kernel drops the lock
// when the process ends however it ends (kill -9 included), so a stale file
// never blocks the next start. release unlocks it; the file stays, as
// removing it would let a third process lock a file the second still has
// open.
func lockData(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("up: data directory: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("up: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("up: the data directory %s is in use by another toolgate up (pid %s, lock %s): one JetStream store serves one server; stop that one, or give this one another --data", dir, holder(path), path)
		}
		return nil, fmt.Errorf("up: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// holder is the process id written in the lock file at path, or "unknown".
func holder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	pid := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}
