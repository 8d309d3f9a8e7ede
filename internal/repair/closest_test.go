package repair

import "testing"

func TestClosest(t *testing.T) {
	valid := []string{"create_invoice", "send_email", "refund_payment", "get_customer"}
	for _, tc := range []struct{ name, want string }{
		{"send_mail", "send_email"},
		{"sendEmail", "send_email"},
		{"invoice_create", "create_invoice"},
		{"refund", "refund_payment"},
		{"getCustomer", "get_customer"},
		{"CREATE-INVOICE", "create_invoice"},
	} {
		if got := Closest(tc.name, valid); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest with no valid tools = %q, want empty", got)
	}
	// Equal distance: the lexically smallest wins whatever the order.
	if a, b := Closest("ab", []string{"ac", "aa"}), Closest("ab", []string{"aa", "ac"}); a != "aa" || b != "aa" {
		t.Errorf("tie = %q, %q; want aa both times", a, b)
	}
}
