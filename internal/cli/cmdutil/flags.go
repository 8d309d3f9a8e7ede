package cmdutil

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// ErrUsage marks a command line that cannot be run as given: main exits 2
// (exitUsage) for it, 1 for everything else.
var ErrUsage = errors.New("usage")

// UsageError is a bad command line: its text, and errUsage for errors.Is.
func UsageError(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// ParseFlags parses args into fs with flags anywhere on the line, before or
// after the operands (`publish body.json --wait 5s`), as people type them;
// "--" ends the flags. It returns the operands in their order. fs should be
// flag.ContinueOnError: -h/--help prints fs's usage and returns
// flag.ErrHelp, any other bad flag a usage error.
func ParseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, UsageError("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		// fs.Parse stopped at an operand, or after a "--" it consumed.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(operands, rest...), nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// ExitError is an outcome a command reports through its exit code (publish:
// a call failed, or is still waiting); err, when set, is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit code of a command's error: 0 for none or a
// help request, 2 for a bad command line (errUsage), a command's own code
// (exitError, e.g. publish's), else 1. It prints the error.
func ExitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		if ee.Err != nil {
			fmt.Fprintln(os.Stderr, "toolgate:", ee.Err)
		}
		return ee.Code
	case errors.Is(err, ErrUsage):
		fmt.Fprintln(os.Stderr, "toolgate:", err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "toolgate:", err)
	return 1
}
