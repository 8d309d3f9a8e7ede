package redact

import "testing"

func TestRedactCards(t *testing.T) {
	for _, test := range []struct {
		name, in, want string
	}{
		{"visa together", "card 4111111111111111 ok", "card [REDACTED] ok"},
		{"visa with spaces", "4111 1111 1111 1111", "[REDACTED]"},
		{"mastercard with dashes", "pay 5555-5555-5555-4444.", "pay [REDACTED]."},
		{"amex 15 digits grouped 4-6-5", "378282246310005 and 3782 822463 10005", "[REDACTED] and [REDACTED]"},
		{"glued to letters", "id4242424242424242x", "id[REDACTED]x"},
		{"non-Luhn order number is kept", "order 1234567812345678", "order 1234567812345678"},
		{"12 digits are too short", "411111111111", "411111111111"},
		{"20-digit id without separator is kept", "41111111111111111111", "41111111111111111111"},
		{"card followed by a year", "4111111111111111 2027", "[REDACTED] 2027"},
		{"year before a card", "2027 4111111111111111", "2027 [REDACTED]"},
		{"two cards in one text", "a 4111111111111111 b 5555555555554444", "a [REDACTED] b [REDACTED]"},
		{"double space breaks a group", "4111  1111 1111 1111", "4111  1111 1111 1111"},
		{"no digits", "nothing here", "nothing here"},
		{"trailing separator", "4111111111111111-", "[REDACTED]-"},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := redactCards(test.in); got != test.want {
				t.Fatalf("redactCards(%q) = %q, want %q", test.in, got, test.want)
			}
		})
	}
}

func TestLuhn(t *testing.T) {
	for _, test := range []struct {
		digits string
		want   bool
	}{
		{"4111111111111111", true},
		{"4111111111111112", false},
		{"6011111111111117", true},
		{"1234567812345670", true},
		{"1234567812345678", false},
	} {
		if got := luhn(test.digits, []span{{0, len(test.digits)}}); got != test.want {
			t.Errorf("luhn(%s) = %v, want %v", test.digits, got, test.want)
		}
	}
}
