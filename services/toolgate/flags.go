package main

import (
	"errors"
	"flag"
	"fmt"
)

// errUsage marks a command line that cannot be run as given: main exits 2
// (exitUsage) for it, 1 for everything else.
var errUsage = errors.New("usage")

// usageError is a bad command line: its text, and errUsage for errors.Is.
func usageError(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

// parseFlags parses args into fs with flags anywhere on the line, before or
// after the operands (`publish body.json --wait 5s`), as people type them;
// "--" ends the flags. It returns the operands in their order. fs should be
// flag.ContinueOnError: -h/--help prints fs's usage and returns
// flag.ErrHelp, any other bad flag a usage error.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError("%v", err)
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

// exitError is an outcome a command reports through its exit code (publish:
// a call failed, or is still waiting); err, when set, is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }
