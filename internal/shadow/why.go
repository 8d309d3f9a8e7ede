package shadow

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
)

// whyMax bounds a recorded reason.
const whyMax = 120

// why is the reason a report line gives for the shadow's verdict f, taken
// from the shadow definition d (a rule's message, the policy's allow
// expression) or from the shape of a schema error (its path and keyword),
// never from the gates' messages as such: those may quote arguments, and
// the report is read by console viewers.
func why(d tool.Definition, f whatif.Fate, errs []string) string {
	if f.Kind != whatif.Refused {
		return ""
	}
	first := ""
	if len(errs) > 0 {
		first = errs[0]
	}
	var s string
	switch f.Class {
	case call.SchemaInvalid:
		s = schemaWhy(first)
	case call.BusinessInvalid, call.NeedsClarification:
		s = "a business rule or the placeholder check (its message is not recorded)"
		for i, r := range d.Rules {
			if r.Message == first {
				s = fmt.Sprintf("rule %d: %s", i+1, r.Message)
			}
		}
	case call.PolicyRejected:
		switch {
		case d.Policy == nil:
			s = "the tool has no policy"
		case d.Policy.Allow != "":
			s = "the policy allows only when " + d.Policy.Allow
		default:
			s = "the policy"
		}
	default:
		return ""
	}
	s = strings.Join(strings.Fields(redact.Text(s)), " ")
	if r := []rune(s); len(r) > whyMax {
		s = string(r[:whyMax-1]) + "…"
	}
	return s
}

// schemaWhy is a schema problem ("path: message (keyword)") without its
// message: "schema: path (keyword)".
func schemaWhy(p string) string {
	path, rest, ok := strings.Cut(p, ": ")
	if !ok {
		return "the schema"
	}
	kw := ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		kw = " " + rest[i+1:]
	}
	return "schema: " + path + kw
}
