package main

// orNone is s, or "none" when it is empty: a caller without a principal,
// roles or tenant printed as `caller  (roles [], tenant , …)`.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
