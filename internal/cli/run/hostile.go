package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/internal/chaos"
)

// hostileCmd runs the hostile soak (`toolgate chaos --hostile`): it prints
// the table and fails on a crash, a lost valid call or a hostile input
// without a recorded outcome.
func hostileCmd(cfg chaos.HostileConfig, memCap, inputs string, keep bool) error {
	n, err := parseBytes(memCap)
	if err != nil {
		return fmt.Errorf("chaos: --mem-cap %q: %w", memCap, err)
	}
	cfg.MemCap = n
	if inputs != "" {
		cfg.Inputs = strings.Split(inputs, ",")
	}
	dir, err := os.MkdirTemp("", "toolgate-hostile-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "chaos: work directory", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cfg.Dir, cfg.Log = dir, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.RunHostile(ctx, cfg)
	if err != nil {
		return err
	}
	rep.Print(os.Stdout)
	if !rep.OK() {
		return errors.New("chaos: the hostile soak found violations (run again with --keep to read toolgate-up.log)")
	}
	return nil
}

// parseBytes reads 4GiB, 512MiB, 4G, 1073741824.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n <= 0 {
				return 0, errors.New("want a positive size such as 4GiB or 512MiB")
			}
			return n * u.mult, nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive size such as 4GiB or 512MiB")
	}
	return n, nil
}
