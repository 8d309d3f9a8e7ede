package operate

import "github.com/toolgate/toolgate/internal/approval"

// Deny ends a waiting call as approval_denied, recording who denied it and
// why; its result tells the model it was not executed. A denial runs
// nothing, so it asks for no confirmation.
func Deny(args []string) error { return decide("deny", approval.Denied, args, stdConsole()) }
