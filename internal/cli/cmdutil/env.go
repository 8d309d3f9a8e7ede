package cmdutil

import (
	"os"
	"strconv"

	"github.com/toolgate/toolgate/internal/stage"
)

// Env is the TOOLGATE_* variable k, or def when it is unset or empty.
func Env(k, def string) string { return stage.EnvOr(os.Getenv, k, def) }

// EnvInt is the number in k, or def when k is unset or not a number.
func EnvInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
