package cmdutil

import "os"

// IsTerminal reports whether f is a terminal: a character device other
// than /dev/null (a pipe, a file or /dev/null is not one).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
