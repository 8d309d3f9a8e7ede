package cmdutil

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseFlags_takes_flags_before_and_after_operands(t *testing.T) {
	for _, test := range []struct {
		args     []string
		operands []string
		wait     string
	}{
		{[]string{"--wait", "5s", "body.json"}, []string{"body.json"}, "5s"},
		{[]string{"body.json", "--wait", "5s"}, []string{"body.json"}, "5s"},
		{[]string{"a", "--wait=2s", "b"}, []string{"a", "b"}, "2s"},
		{[]string{"-", "--wait", "1s"}, []string{"-"}, "1s"},
		{[]string{"--wait", "1s", "--", "--not-a-flag"}, []string{"--not-a-flag"}, "1s"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		wait := fs.String("wait", "", "")
		got, err := ParseFlags(fs, test.args)
		if err != nil || !slices.Equal(got, test.operands) || *wait != test.wait {
			t.Errorf("parseFlags(%q) = %q, %v, wait %q; want %q, wait %q", test.args, got, err, *wait, test.operands, test.wait)
		}
	}
}

func TestParseFlags_unknown_flag_is_a_usage_error_and_help_is_not(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := ParseFlags(fs, []string{"x", "--nope"}); !errors.Is(err, ErrUsage) {
		t.Fatalf("unknown flag: %v, want a usage error", err)
	}
	if _, err := ParseFlags(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v, want flag.ErrHelp", err)
	}
}
