package redact

import "testing"

func TestIsSecretName(t *testing.T) {
	for _, test := range []struct {
		name string
		want bool
	}{
		{"password", true}, {"Password", true}, {"db_password", true}, {"newPassword", true},
		{"passwd", true}, {"pwd", true}, {"secret", true}, {"client_secret", true},
		{"api_key", true}, {"apiKey", true}, {"X-Api-Key", true}, {"token", true},
		{"access_token", true}, {"refreshToken", true}, {"Authorization", true},
		{"private_key", true}, {"cvv", true},
		{"max_tokens", false}, {"token_count", false}, {"name", false}, {"email", false},
		{"key", false}, {"passenger", false}, {"", false},
	} {
		if got := isSecretName(test.name); got != test.want {
			t.Errorf("isSecretName(%q) = %v, want %v", test.name, got, test.want)
		}
	}
}

func TestLooksRandom(t *testing.T) {
	for _, test := range []struct {
		v    string
		want bool
	}{
		{"Zx8Qp2LmN4vR7tYw", true},
		{"5f0c3e7a-9b1d-4c2e-8f6a-1d2b3c4d5e6f", true},
		{"customer_signature", false}, // no digits
		{"aaaaaaaaaaaaaaaa1", false},  // low entropy
		{"short1", false},
		{"has spaces 12345678 abc", false},
	} {
		if got := looksRandom(test.v); got != test.want {
			t.Errorf("looksRandom(%q) = %v, want %v", test.v, got, test.want)
		}
	}
}

func TestMatcher_pointers_and_names(t *testing.T) {
	m := newMatcher(Options{SensitiveFields: []string{"IBAN", "/payer/tax_id", "/cards/*/number", "/a~1b/c~0d", ""}})
	for _, test := range []struct {
		key  string
		path []string
		want bool
	}{
		{"iban", []string{"x", "iban"}, true},
		{"tax_id", []string{"payer", "tax_id"}, true},
		{"tax_id", []string{"payee", "tax_id"}, false},
		{"number", []string{"cards", "3", "number"}, true},
		{"number", []string{"cards", "3", "extra", "number"}, false},
		{"c~d", []string{"a/b", "c~d"}, true},
		{"amount", []string{"amount"}, false},
	} {
		if got := m.sensitive(test.key, test.path); got != test.want {
			t.Errorf("sensitive(%q, %v) = %v, want %v", test.key, test.path, got, test.want)
		}
	}
	names := m.textNames()
	for _, n := range []string{"iban", "tax_id", "number", "c~d"} {
		if !names[n] {
			t.Errorf("textNames lacks %q: %v", n, names)
		}
	}
}
