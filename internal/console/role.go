package console

// Role is what a console user may do; each role may do what the ones
// before it may.
type Role string

// Roles, least first.
const (
	Viewer   Role = "viewer"   // reads every page
	Approver Role = "approver" // decides approvals
	Operator Role = "operator" // replays and purges dead letters
)

func (r Role) rank() int {
	switch r {
	case Viewer:
		return 1
	case Approver:
		return 2
	case Operator:
		return 3
	}
	return 0
}

func (r Role) valid() bool { return r.rank() > 0 }

// Can reports whether r may do what need allows.
func (r Role) Can(need Role) bool { return r.rank() >= need.rank() && r.valid() }
