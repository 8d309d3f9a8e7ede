package stage

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// SealFlags declares --seal-keys (TOOLGATE_SEAL_KEYS): the directory of the
// gate seal keys, a file seal-<stage>.key per stage. It returns the function
// that sets the parsed value on a Config.
func SealFlags(fs *flag.FlagSet, getenv func(string) string) func(*Config) {
	dir := fs.String("seal-keys", EnvOr(getenv, "TOOLGATE_SEAL_KEYS", ""), "directory of the gate seal keys, seal-<stage>.key each (TOOLGATE_SEAL_KEYS): a stage needs its own, execute every stage's; empty: a process running every stage makes keys for itself")
	return func(c *Config) { c.SealKeys = *dir }
}

// sealKeyring is the seal keys the process's stages hold: cfg.Seals (only
// the part its stages need), else the files in cfg.SealKeys, else, for a
// process that runs every stage and so needs no one else's, fresh keys of
// its own. A process running some stages without keys does not start: its
// seals would verify nowhere, or, as execute, it would run nothing.
func sealKeyring(cfg Config) (*seal.Keyring, error) {
	var kr *seal.Keyring
	switch {
	case cfg.Seals != nil:
		kr = cfg.Seals.Only(cfg.Stages)
	case cfg.SealKeys != "":
		return seal.Load(cfg.SealKeys, cfg.Stages)
	case allStages(cfg.Stages):
		return seal.Ephemeral(cfg.Stages)
	default:
		return nil, fmt.Errorf("stage: %s without the other stages needs the gate seal keys: set TOOLGATE_SEAL_KEYS (or --seal-keys) to the directory holding %s (`toolgate up` writes them into its secrets directory)",
			strings.Join(cfg.Stages, ","), keyFiles(seal.Needed(cfg.Stages)))
	}
	for _, st := range seal.Needed(cfg.Stages) {
		if !kr.Has(st) {
			return nil, fmt.Errorf("stage: the seal keys given hold no key of the %s stage, which %s needs", st, strings.Join(cfg.Stages, ","))
		}
	}
	return kr, nil
}

func allStages(stages []string) bool {
	for _, st := range streams.Names() {
		if !slices.Contains(stages, st) {
			return false
		}
	}
	return true
}

func keyFiles(stages []string) string {
	var names []string
	for _, st := range stages {
		names = append(names, seal.FileName(st))
	}
	return strings.Join(names, ", ")
}

// sealsOf is the keyring a process's execute gate verifies with.
func sealsOf(em *pipeline.Emitter) *seal.Keyring {
	if em == nil {
		return nil
	}
	return em.Seals
}
