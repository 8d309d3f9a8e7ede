//go:build !linux

package natsproc

import "syscall"

// endWithParent: only Linux ends a child with its parent (Pdeathsig);
// elsewhere a killed run's servers are left to be stopped by hand.
func endWithParent() *syscall.SysProcAttr { return nil }
