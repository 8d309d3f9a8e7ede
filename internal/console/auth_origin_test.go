package console

import (
	"net/http/httptest"
	"testing"
)

// TestSameOrigin_a_browsers_own_form_with_origin_null_passes: Chromium sends
// `Origin: null` with `Sec-Fetch-Site: same-origin` on a form the console's
// own page submits; before, that was taken for another origin and every
// form of the console (login, approve, replay) was refused in a browser.
func TestSameOrigin_a_browsers_own_form_with_origin_null_passes(t *testing.T) {
	for _, c := range []struct {
		origin, site string
		want         bool
	}{
		{"null", "same-origin", true},
		{"http://console.test", "", true},
		{"", "", true}, // curl: left to the csrf token
		{"null", "", false},
		{"http://evil.test", "", false},
		{"http://console.test", "cross-site", false},
		{"null", "same-site", false},
	} {
		r := httptest.NewRequest("POST", "http://console.test/console/approvals/x/approve", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if got := sameOrigin(r); got != c.want {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: sameOrigin = %v, want %v", c.origin, c.site, got, c.want)
		}
	}
}
