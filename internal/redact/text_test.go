package redact

import (
	"strings"
	"testing"
)

func TestText_masks_secrets(t *testing.T) {
	for _, test := range []struct {
		name, in string
		secrets  []string // must not survive
		keep     []string // must survive
	}{
		{"openai key", "key is sk-proj-AbCdEfGhIjKlMnOpQrSt123 ok", []string{"AbCdEfGhIjKlMnOpQrSt123"}, []string{"key is", "ok"}},
		{"anthropic key", "x sk-ant-api03-Zz9Yy8Xx7Ww6", []string{"Zz9Yy8Xx7Ww6"}, []string{"x "}},
		{"aws access key id", "AKIAIOSFODNN7EXAMPLE used", []string{"IOSFODNN7EXAMPLE"}, []string{"used"}},
		{"github token", "ghp_0123456789abcdefghijABCDEFGHIJ", []string{"0123456789abcdefghij"}, nil},
		{"slack token", "xoxb-1234-5678-abcdefgh", []string{"1234-5678-abcdefgh"}, nil},
		{"stripe key", "sk_live_51HabcdefghijKLMN", []string{"51HabcdefghijKLMN"}, nil},
		{"jwt", "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_abc", []string{"eyJzdWIiOiIxMjM0In0"}, []string{"tok"}},
		{"bearer header", "Authorization: Bearer abc.def-ghi", []string{"abc.def-ghi"}, []string{"Authorization"}},
		{"bearer in prose", "sent bearer xyz123 upstream", []string{"xyz123"}, []string{"upstream"}},
		{"password pair", "login failed for password=hunter2; retry", []string{"hunter2"}, []string{"retry"}},
		{"quoted json pair", `got {"client_secret": "s3cr3t!", "id": 7}`, []string{"s3cr3t!"}, []string{`"id": 7`}},
		{"escaped json pair", `raw "{\"password\":\"p4ss\",\"n\":1}"`, []string{"p4ss"}, []string{`\"n\":1`}},
		{"random value after key-like name", "signing_key: Zx8Qp2LmN4vR7tYw", []string{"Zx8Qp2LmN4vR7tYw"}, []string{"signing_key"}},
		{"url credentials", "postgres://admin:pa55word@db:5432/x", []string{"pa55word"}, []string{"admin", "@db:5432"}},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- after", []string{"MIIEow"}, []string{"after"}},
		{"cut-off private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", []string{"MIIEvQIBADANBg"}, nil},
		{"card", "card 4111 1111 1111 1111 declined", []string{"4111 1111 1111 1111", "1111111111111111"}, []string{"declined"}},
		{"email", "notify jane.doe@example.com now", []string{"jane.doe@example.com", "jane.doe"}, []string{"j***@example.com", "now"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := Text(test.in)
			for _, s := range test.secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q survived: %q", s, got)
				}
			}
			for _, s := range test.keep {
				if !strings.Contains(got, s) {
					t.Errorf("%q was lost: %q", s, got)
				}
			}
		})
	}
}

func TestText_leaves_ordinary_text_alone(t *testing.T) {
	for _, s := range []string{
		"",
		"the output hit the token limit",
		`{"max_tokens": 300, "key": "order-7", "time": "12:30"}`,
		"order 1234567812345678 shipped",
		"https://example.com/path?q=1",
		"task-abcdefghijklmnopqrstuv",
		"commit 0a1b2c3d4e5f60718293a4b5c6d7e8f9",
	} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestText_cut_off_quoted_value_is_masked_to_the_end(t *testing.T) {
	got := Text(`{"api_key": "abc12`)
	if strings.Contains(got, "abc12") || !strings.HasSuffix(got, Placeholder) {
		t.Fatalf("got %q", got)
	}
}

func TestMaskEmail(t *testing.T) {
	for in, want := range map[string]string{
		"jane@example.com": "j***@example.com",
		"émile@example.fr": "é***@example.fr",
		"@example.com":     "[EMAIL]",
	} {
		if got := maskEmail(in); got != want {
			t.Errorf("maskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkText_error_message(b *testing.B) {
	s := "executor: POST https://api.example.com/v1/charges failed: 402 card 4111 1111 1111 1111 declined for jane.doe@example.com (Authorization: Bearer sk-proj-AbCdEfGhIjKlMnOpQrSt123)"
	b.ReportAllocs()
	for b.Loop() {
		_ = Text(s)
	}
}
