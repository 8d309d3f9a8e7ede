package cmdutil

// OrNone is s, or "none" when it is empty: a caller without a principal,
// roles or tenant printed as `caller  (roles [], tenant , …)`.
func OrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
