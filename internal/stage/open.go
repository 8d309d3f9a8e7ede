package stage

import "context"

// The opens of the stages that need more than the shared Deps (Binding.open):
// what only one stage uses is reached only through its binding, so a stage
// binary that does not run it neither opens nor links it.

// openIdentity: accumulate verifies producers' tokens (flags_identity.go).
func openIdentity(ctx context.Context, cfg Config, d *Deps) (func(), error) {
	v, err := identityVerifier(ctx, cfg, d.Log)
	if err != nil {
		return nil, err
	}
	d.Identity = v
	return func() {}, nil
}

// openRepair: the repair gate's model, when an endpoint is configured
// (repair.go).
func openRepair(_ context.Context, cfg Config, d *Deps) (func(), error) {
	m, err := repairClient(cfg, d.Log)
	if err != nil {
		return nil, err
	}
	d.Repair = m
	return func() {}, nil
}

// openExecute: execute's idempotency store (Redis or the embedded bucket,
// idemstore.go) and its executor settings (flags_exec.go).
func openExecute(ctx context.Context, cfg Config, d *Deps) (func(), error) {
	store, closeStore, err := openStore(ctx, cfg, d.JS, d.Log)
	if err != nil {
		return nil, err
	}
	exec, err := cfg.Exec.resolve(cfg.Stages, d.Log)
	if err != nil {
		closeStore()
		return nil, err
	}
	d.Store, d.Exec = store, exec
	return closeStore, nil
}
