package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// luhnRuns16 returns the maximal runs of exactly 16 digits in s that pass
// the Luhn check.
func luhnRuns16(s string) []string {
	var runs []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 16 && luhn(s, []span{{i, j}}) {
			runs = append(runs, s[i:j])
		}
		i = j
	}
	return runs
}

// containsStandalone reports whether run occurs in s not as part of a
// longer digit run.
func containsStandalone(s, run string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], run)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(run)
		if (start == 0 || !isDigit(s[start-1])) && (end == len(s) || !isDigit(s[end])) {
			return true
		}
		off = start + 1
	}
}

// visible is the text a reader of raw sees: for valid JSON every decoded
// key, string and number (so "\u0034..." is the digit 4, and the digits of
// an escape like "\u0000" are not digits at all); for anything else the
// bytes themselves.
func visible(raw []byte) string {
	if !json.Valid(raw) {
		return string(raw)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			return b.String()
		}
		switch v := tok.(type) {
		case string:
			b.WriteString(v)
		case json.Number:
			b.WriteString(v.String())
		}
		b.WriteByte(' ')
	}
}

func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		secretsArgs,
		`{"card":"4111111111111111"}`,
		`{"card":4111111111111111}`,
		`{"n":4111111111111111.5e3}`,
		`{"password":"hun`,
		`{"a":[{"b":"x@y.io"},"4242424242424242"`,
		`password=abc Authorization: Bearer x`,
		`"\u0034111111111111111"`,
		`"\u0000000000000000"`,
		"{\"k\":\"\xff4111111111111111\"}",
		`[[[[[[[[[["sk-ant-api03-aaaaaaaaaaaa"]]]]]]]]]]`,
		`-----BEGIN PRIVATE KEY-----`,
	} {
		f.Add([]byte(seed), "iban")
	}
	f.Fuzz(func(t *testing.T, raw []byte, field string) {
		got := Arguments(raw, Options{SensitiveFields: []string{field, "/" + field}})
		for _, run := range luhnRuns16(visible(raw)) {
			if got == string(raw) {
				t.Fatalf("input with Luhn-valid run %s returned unchanged", run)
			}
			if containsStandalone(visible([]byte(got)), run) {
				t.Fatalf("Luhn-valid run %s survived:\nin:  %q\nout: %q", run, raw, got)
			}
		}
		if json.Valid(raw) && !json.Valid([]byte(got)) {
			t.Fatalf("valid JSON in, invalid JSON out:\nin:  %q\nout: %q", raw, got)
		}
		_ = Text(string(raw))
	})
}
