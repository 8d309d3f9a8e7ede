# toolgate — the two commands a newcomer needs are `make run` and `make test`.
GO       ?= go
# go.mod needs Go 1.27; a machine with an older go fetches it from the module proxy.
export GOTOOLCHAIN ?= go1.27.3
BIN      := bin
FUZZTIME ?= 20s
RUN_LISTEN ?= 127.0.0.1:4322

.PHONY: build test run bench fuzz vet fmt clean generate preflight

# Built as the Dockerfile builds them: no file paths, no symbol table or DWARF
# (stack traces keep their function names and lines).
build:
	$(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/ ./services/... ./examples/executor

# Every test runs against an embedded nats-server and a real redis-server
# (started by the tests on free ports). The preflight names what the tests
# need and this machine lacks (redis-server, chromium, node, npm,
# prometheus), with the command that installs it, before any test runs.
test: preflight
	$(MAKE) vet
	$(GO) test -count=1 -p 2 -timeout 12m ./...

preflight:
	@./scripts/preflight.sh

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff >/dev/null 2>&1 || { echo "go mod tidy would change go.mod or go.sum: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }

# The pipeline on its embedded default, with the example tools and executor,
# and a few sample responses flowing through it.
run: build
	RUN_LISTEN=$(RUN_LISTEN) BIN=$(BIN) ./scripts/run.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/... ./internal/...

# Every stage as its own OS process against one NATS server and one
# redis-server; stages SIGKILLed under load, NATS and Redis restarted once;
# fails on a lost, doubled or unreplayable call. From the binaries of make
# build and the nats-server the module requires, as released.
# CHAOS_ARGS="--n 1000 --keep" or "--topology cluster --n 5000".
.PHONY: chaos
chaos: build
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2
	$(BIN)/toolgate chaos --bin $(BIN) $(CHAOS_ARGS)

# Every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

# The files derived from the stage table (streams/stages.go): each
# stage's manifest and main.go, the NATS users of deploy/. A stale one fails
# internal/gen's test.
generate:
	$(GO) run ./internal/gen -w .
	$(GO) run ./services/toolgate help --markdown > docs/reference/cli.md.tmp && mv docs/reference/cli.md.tmp docs/reference/cli.md

clean:
	rm -rf $(BIN) .toolgate

# toolgate up under a memory cap (RLIMIT_AS, default 4 GiB): valid calls
# before and during a bounded mix of issue 13's hostile inputs; fails on a
# crash, a lost valid call, a hostile input without a recorded outcome, or
# RSS a minute after the attack above max(2 × baseline, baseline + 64 MiB).
# A minute per phase: the embedded server's block caches grow with the
# first few thousand calls (valid load alone takes RSS from 69 to 146 MiB in
# 80 s), so a 10 s baseline is too cold to judge against (docs/scaling.md).
# HOSTILE_ARGS="--duration 20s --rate 50 --mem-cap 2GiB --keep".
HOSTILE_ARGS ?= --duration 1m
.PHONY: hostile
hostile:
	$(GO) run ./services/toolgate chaos --hostile $(HOSTILE_ARGS)

# Mutation testing (gremlins, pinned) of the packages that carry the
# promises: seal, idem, policy, approval, batch, the chaos judge, worker,
# execute. Prints each package's efficacy and every surviving mutant not
# listed, with its reason, in internal/mutate/equivalent.txt; fails on such
# a new one. Slow (minutes a package on two cores): not part of make test.
# MUTATE_PKGS="internal/seal internal/policy" runs some.
GREMLINS_VERSION ?= v0.6.0
.PHONY: mutate
mutate:
	GOBIN=$(abspath $(BIN)) $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	$(GO) run ./internal/mutate -gremlins $(BIN)/gremlins $(MUTATE_PKGS)
