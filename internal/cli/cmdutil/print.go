package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// PrettyArgs is the arguments indented, exactly as stored otherwise (not
// JSON: quoted).
func PrettyArgs(args json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Indent(&out, args, "", "  "); err != nil {
		return fmt.Sprintf("%q", args)
	}
	return out.String()
}

// Printable escapes every control or unprintable character but newline and
// tab (tabwriter's columns), so text from a call (a call id, a principal, a
// string argument with ESC or C1 codes) cannot move the cursor or hide what
// is shown.
func Printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' || (unicode.IsPrint(r) && !unicode.IsControl(r)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}
