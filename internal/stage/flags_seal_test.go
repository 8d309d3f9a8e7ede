package stage

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/streams"
)

func TestSealKeys_a_stage_run_alone_without_keys_does_not_start(t *testing.T) {
	for st, file := range map[string]string{streams.Parse: seal.FileName(seal.Parse), streams.Execute: seal.FileName(seal.Policy)} {
		err := Run(context.Background(), Config{Stages: []string{st}}, nil)
		if err == nil || !strings.Contains(err.Error(), "TOOLGATE_SEAL_KEYS") || !strings.Contains(err.Error(), file) {
			t.Errorf("%s without keys: %v, want an error naming TOOLGATE_SEAL_KEYS and %s", st, err, file)
		}
	}
}

func TestSealKeys_each_stage_keeps_only_the_keys_it_needs(t *testing.T) {
	dir, all := sealtest.Dir(t)
	kr, err := sealKeyring(Config{Stages: []string{streams.Validate}, Seals: all})
	if err != nil || strings.Join(kr.Stages(), ",") != seal.Validate {
		t.Fatalf("validate holds %v (%v), want only its own key", kr.Stages(), err)
	}
	kr, err = sealKeyring(Config{Stages: []string{streams.Execute}, SealKeys: dir})
	if err != nil || len(kr.Stages()) != len(seal.Sealing()) {
		t.Fatalf("execute holds %v (%v), want every sealing stage's keys", kr.Stages(), err)
	}
	// execute without one stage's file does not start.
	if err := os.Remove(filepath.Join(dir, seal.FileName(seal.Business))); err != nil {
		t.Fatal(err)
	}
	if _, err := sealKeyring(Config{Stages: []string{streams.Execute}, SealKeys: dir}); err == nil || !strings.Contains(err.Error(), seal.FileName(seal.Business)) {
		t.Fatalf("execute without the business key: %v", err)
	}
	if _, err := sealKeyring(Config{Stages: []string{streams.Execute}, Seals: all.Only([]string{streams.Parse})}); err == nil {
		t.Fatal("execute started with the parse key only")
	}
	// Every stage in one process: keys of its own.
	if kr, err := sealKeyring(Config{Stages: streams.Names()}); err != nil || len(kr.Stages()) != len(seal.Sealing()) {
		t.Fatalf("all stages: %v %v", kr.Stages(), err)
	}
}

func TestSealKeys_flag_defaults_to_the_environment(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	build := Flags(fs, func(k string) string { return map[string]string{"TOOLGATE_SEAL_KEYS": "/run/keys"}[k] }, ServiceDefaults())
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	f, err := build()
	if err != nil || f.SealKeys != "/run/keys" {
		t.Fatalf("SealKeys %q (%v), want /run/keys", f.SealKeys, err)
	}
}
