package chaos

import "fmt"

// hold SIGKILLs the process and keeps it down until release: its consumer
// builds a backlog meanwhile. It reports whether the process was running.
func (p *proc) hold() bool {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
	return p.kill()
}

// release starts a held process again.
func (p *proc) release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.held {
		return nil
	}
	p.held = false
	if p.stopped {
		return nil
	}
	select {
	case <-p.done:
	default:
		return nil // still running: the supervisor restarted it before the hold
	}
	if err := p.start(); err != nil {
		return fmt.Errorf("chaos: release %s: %w", p.stage, err)
	}
	return nil
}

func (p *proc) isHeld() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}
