package natsproc

import "syscall"

// endWithParent is how a node's process is started: the kernel SIGKILLs it
// when the process that started it dies (a bench or chaos run killed
// mid-run runs none of its deferred Stops). The kernel ties it to the
// thread that forked, which the Go runtime ends only under a goroutine that
// exits locked to it (runtime.LockOSThread): none here starts a server.
func endWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
