# weft Makefile. Run `make help` for the targets.
#
# Everything here needs only Go on PATH: modules come from the Go module proxy
# and staticcheck is installed with `go install` on first use.

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO      ?= go
TOOLBIN := $(shell $(GO) env GOPATH)/bin
BIN     := bin/weft

# Build stamps; tolerant of a missing git or a repository without commits.
VERSION ?= $(or $(shell git describe --always --dirty 2>/dev/null),dev)
COMMIT  ?= $(or $(shell git rev-parse --verify --quiet HEAD 2>/dev/null),unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# Flags for `make test`. Later suites (tags, longer timeouts) are added here.
TEST_FLAGS ?= -race -count=1 -timeout 25m

STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(TOOLBIN)/staticcheck

.PHONY: all help build test module-test module-test-slice c-notes-test retail-seed tau2-retail-seed airline-seed mcp-test check bench load-test demo ftrl evolve fuzz synth-figures certify scale-servers queue-test scale-modules compose compose-run clean proto proto-tools

all: build

help:
	@echo "make build   build bin/weft with version/commit stamps, and the interpreter module (weft-interp) into the registry"
	@echo "make test    go test $(TEST_FLAGS) ./..."
	@echo "make load-test  the full-size MegaMCP load test (2,000 idle + 1,000 slow connections, 100 calling sessions)"
	@echo "make module-test  every public oracle file of every domain, and c-notes (make test runs module-test-slice)"
	@echo "make retail-seed  rewrite examples/data/tau2-retail/db.state.json from db.json"
	@echo "make tau2-retail-seed  rewrite examples/servers/tau2-retail/seed.json from db.json"
	@echo "make airline-seed rewrite examples/servers/tau2-airline/seed.json from db.json"
	@echo "make mcp-test  real MCP clients against weft serve/mcp (part of make test; needs npm)"
	@echo "make check   gofmt, go vet, staticcheck, go.mod/go.sum tidy"
	@echo "make bench   run all benchmarks once; output also in bench.txt"
	@echo "make demo    build and run the main job: weft run configs/tau2-retail.hcl"
	@echo "make ftrl    FTRL's environments and data at full size (weft run configs/ftrl.hcl into runs/ftrl), run twice and compared byte for byte"
	@echo "make evolve  self-evolution offline: the planted-defect benchmark (configs/evolve.hcl into runs/evolve) and tau2 retail as shipped (configs/evolve-tau2-retail.hcl)"
	@echo "make fuzz    run the fuzz targets for FUZZTIME each"
	@echo "make synth-figures  the deterministic synthesizer's figures on the full data in SHARED_DATA (docs/synthesis-figures.md)"
	@echo "make compose  regenerate examples/data/compose-tau2 (compare: same bytes), run configs/synth-compose.hcl gold and with faults (docs/certification.md)"
	@echo "make compose-run  run every composed task of configs/synth-compose.hcl gold and with planted faults; check R = 1 and each fault's checkpoints (docs/certification.md)"
	@echo "make certify  certify every tau2 retail and airline task, and the task-generation figures on airline, retail-spec and Toucan (docs/certification.md)"
	@echo "make scale-modules  SCALE_MODULES (500) distinct generated wasm modules under a SCALE_BUDGET_MIB (64) module memory budget: RSS, cold/warm first calls (docs/benchmarks.md)"
	@echo "make scale-servers  every passing Toucan server (plus marked variants to SCALE_N) in one weft serve: RSS, registration, first-call latency (docs/benchmarks.md)"
	@echo "  synth-figures, certify and scale-servers read SHARED_DATA (default ../shared/data, from this checkout): the"
	@echo "  project's shared data folder (toucan-mcp/, tau2-airline/, bfcl-multiturn/; each README names its upstream"
	@echo "  repository and commit); pass SHARED_DATA=/abs/path from a git worktree elsewhere (README, \"Shared data\")"
	@echo "make proto   regenerate sdk/plugin/pluginpb/v2 from plugins/proto (protoc + pinned plugins)"
	@echo "make queue-test  the work queue with real weft worker processes: same results, kill -9 of a worker, scaling 1-3 workers (docs/benchmarks.md)"
	@echo "make clean   remove bin/ and bench.txt"

# bin/weft, then the shared interpreter of synthesized servers
# (modules/interp) into the registry ($$WEFT_REGISTRY or the user cache
# dir): server bundles and spec directories run on it (weft-interp:latest).
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/weft
	$(BIN) module build ./modules/interp --out bin/weft-interp.bundle > /dev/null

# Volume tests (hundreds of episodes: every tau2-retail task per harness and
# view, the attribution accuracy run) skip under -race and run here without
# it; the concurrency they use is covered under -race by smaller tests.
VOLUME_TESTS := TestTau2RetailAllTasks|TestRolloutAllTasksBothViews|TestAttributionAccuracy|TestBFCLPlantedFaults

test:
	$(GO) test $(TEST_FLAGS) ./...
	$(GO) test -count=1 -run '^($(VOLUME_TESTS))$$' -v ./plugins/host | grep -E '^(---|ok|FAIL|PASS)|rollout_test.go|tau2_test.go'
	$(GO) test -count=1 -run '^TestTau2RetailTrainingData$$' -v ./internal/pipeline | grep -E '^(---|ok|FAIL|PASS)|volume_test.go'
	$(GO) test -count=1 -run '^TestOracle' ./examples/modules/retail
	$(GO) test -count=1 -run '^TestOracle' ./examples/modules/bfcl
	$(GO) test -count=1 -run '^TestRun(TinyScripted|InterruptedResumes|EndpointPolicy|EndpointDead|NodeHarness|Tau2Airline|BFCLMultiturn)$$' ./internal/cli
	$(MAKE) module-test-slice
	$(MAKE) mcp-test

# The tool-module suites through the CLI, as module authors run them: the
# retail module and the airline server (examples/servers/tau2-airline)
# against the tau2-bench reference outputs (both public oracle files of
# each, scripts/oracle-test.sh DOMAIN FILE; the retail module in C, examples/modules/retail-c, too) and the C module (examples/modules/c-notes, needs Debian's clang, lld,
# wasi-libc and libclang-rt-dev-wasm32) against its own cases. They use a
# private registry and compilation cache under build/.
MODULE_ENV := WEFT_REGISTRY=$(CURDIR)/build/registry
MODULE_FLAGS := --cache-dir $(CURDIR)/build/wazero
ORACLE := examples/data/tau2-retail/oracle
BFCL_ORACLE := examples/data/bfcl-multiturn/oracle

RETAIL_SEED := examples/data/tau2-retail/db.state.json
AIRLINE_ORACLE := examples/data/tau2-airline/oracle
AIRLINE := examples/servers/tau2-airline

# The retail module's seed: tau2's db.json converted by the domain's own
# converter to weft's generic seed format (weft.state/v1), committed; this
# rewrites it (retaildb's TestCommittedSeed fails when it is stale).
retail-seed:
	$(GO) run ./examples/modules/retail/retaildb/cmd/retail-seed -db examples/data/tau2-retail/db.json -o $(RETAIL_SEED)

# The seed of the retail domain in the synthesized-server format
# (examples/servers/tau2-retail): db.json converted to {table: [rows]} over
# its schema.sql, committed; its TestCommittedSeed fails when it is stale.
tau2-retail-seed:
	$(GO) run ./examples/servers/tau2-retail/cmd/tau2-retail-seed -db examples/data/tau2-retail/db.json -o examples/servers/tau2-retail/seed.json
# The airline server's seed: tau2's db.json converted by the domain's own
# converter over its schema (weft.state/v1), committed; the converter's
# TestCommittedSeed fails when it is stale.
airline-seed:
	$(GO) run ./$(AIRLINE)/convert -db examples/data/tau2-airline/db.json -schema $(AIRLINE)/schema.sql -o $(AIRLINE)/seed.json

# make module-test: every public oracle file of every domain through
# `weft module test` (the hand-written retail module, and retail-spec and
# airline on the shared wasm interpreter, final states by their
# export_changed: about a minute per random-sequence file), then c-notes.
# make test runs module-test-slice: the same but for the synthesized
# servers' train-task files only.
module-test: build
	$(MODULE_ENV) $(BIN) module build ./modules/interp $(MODULE_FLAGS) > /dev/null
	scripts/oracle-test.sh retail $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh retail $(ORACLE)/fuzz-public.json
	scripts/oracle-test.sh retail-c $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh retail-c $(ORACLE)/fuzz-public.json
	scripts/oracle-test.sh retail-spec $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh retail-spec $(ORACLE)/fuzz-public.json
	scripts/oracle-test.sh airline $(AIRLINE_ORACLE)/tasks-train.json
	scripts/oracle-test.sh airline $(AIRLINE_ORACLE)/fuzz-public.json
	scripts/oracle-test.sh bfcl $(BFCL_ORACLE)/tasks-public.json
	scripts/oracle-test.sh bfcl $(BFCL_ORACLE)/fuzz-public.json
	$(MAKE) c-notes-test

module-test-slice: build
	$(MODULE_ENV) $(BIN) module build ./modules/interp $(MODULE_FLAGS) > /dev/null
	scripts/oracle-test.sh retail $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh retail $(ORACLE)/fuzz-public.json
	scripts/oracle-test.sh retail-c $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh retail-spec $(ORACLE)/tasks-train.json
	scripts/oracle-test.sh airline $(AIRLINE_ORACLE)/tasks-train.json
	scripts/oracle-test.sh bfcl $(BFCL_ORACLE)/tasks-public.json
	$(MAKE) c-notes-test

c-notes-test:
	$(MAKE) -C examples/modules/c-notes
	$(MODULE_ENV) $(BIN) module build ./examples/modules/c-notes $(MODULE_FLAGS) --wasm examples/modules/c-notes/notes.wasm
	$(MODULE_ENV) $(BIN) module test c-notes $(MODULE_FLAGS) --cases examples/modules/c-notes/cases.json

# Real MCP clients against `weft serve` and `weft mcp`: the MCP conformance
# suite, the MCP Inspector CLI and the TypeScript SDK, on Node 22; all from
# the npm registry at the versions pinned in scripts/mcp-clients/, installed
# into build/npm by the script (needs npm).
mcp-test:
	bash scripts/mcp-clients.sh

# The plugin protocol's generated Go code (committed). Needs protoc (Debian:
# protobuf-compiler, 3.21) on PATH; the Go generators are installed at the
# pinned versions below. plugins/proto_test.go fails when the committed code
# is stale.
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
PROTO_TOOLS := $(TOOLBIN)/protoc-gen-go $(TOOLBIN)/protoc-gen-go-grpc

$(TOOLBIN)/protoc-gen-go:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(TOOLBIN)/protoc-gen-go-grpc:
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

proto-tools: $(PROTO_TOOLS)

proto: $(PROTO_TOOLS)
	PATH="$(TOOLBIN):$$PATH" protoc -I plugins/proto \
		--go_out=. --go_opt=module=github.com/weft-dev/weft \
		--go-grpc_out=. --go-grpc_opt=module=github.com/weft-dev/weft \
		plugins/proto/weft/plugin/v2/plugin.proto

check: $(STATICCHECK)
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

$(STATICCHECK):
	GOBIN=$(TOOLBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./... | tee bench.txt
	cd bench/sqlitepeer && GOMAXPROCS=2 $(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m . | tee -a ../../bench.txt

# The full-size MegaMCP load test on loopback (docs/api.md, "Limits"): 2,000
# idle keep-alive connections and 1,000 slow bodies against the default
# 1,024-connection cap while 100 sessions keep calling. `make test` runs a
# small slice of it (TestLoadSlice).
load-test:
	WEFT_LOAD_TEST=1 $(GO) test -count=1 -run 'TestLoad' -v -timeout 10m ./megamcp/

# The demo is the main job on the embedded defaults: configs/tau2-retail.hcl
# (the tau2-bench retail data in examples/data, the scripted policy with
# faults, both views x three harnesses, verification, attribution, SFT and
# GRPO data, exports, report) into runs/tau2-retail/. A rerun resumes; pass
# DEMO_FLAGS (e.g. DEMO_FLAGS="--var task_limit=10") to change it.
DEMO_FLAGS ?=
demo: build
	$(BIN) run configs/tau2-retail.hcl $(DEMO_FLAGS)

# FTRL end to end at full size (configs/ftrl.hcl: 32 scenarios per database,
# G = 16; docs/ftrl.md), then again into runs/ftrl-again: the two runs must be
# byte-identical (same seed). FTRL_FLAGS (e.g. "--var scenarios=8") changes it.
FTRL_FLAGS ?=
ftrl:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/weft
	rm -rf runs/ftrl runs/ftrl-again
	$(BIN) run configs/ftrl.hcl $(FTRL_FLAGS)
	$(BIN) run configs/ftrl.hcl $(FTRL_FLAGS) --out runs/ftrl-again > /dev/null
	diff -r runs/ftrl runs/ftrl-again > /dev/null && echo "ftrl: the second run with the same seed is byte-identical (diff -r runs/ftrl runs/ftrl-again)"

# Self-evolution offline (docs/evolve.md): the planted-defect benchmark
# (configs/evolve.hcl: 33 defects on five synthesized airline servers, three
# rounds) and tau2 retail as shipped (configs/evolve-tau2-retail.hcl), each
# writing evolve.json, metrics.json with its rounds and report.html.
evolve:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/weft
	rm -rf runs/evolve runs/evolve-tau2-retail
	$(BIN) run configs/evolve.hcl
	$(BIN) run configs/evolve-tau2-retail.hcl

# Runs each fuzz target for FUZZTIME. Seed and regression corpora live under
# each package's testdata/fuzz/ and also run as ordinary tests in `make test`.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzImport$$' -fuzztime $(FUZZTIME) ./core/state
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeResponse$$' -fuzztime $(FUZZTIME) ./sdk/tool
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./core/module/moduletest
	$(GO) test -run '^$$' -fuzz '^FuzzReadBundle$$' -fuzztime $(FUZZTIME) ./core/module
	$(GO) test -run '^$$' -fuzz '^FuzzImportDelta$$' -fuzztime $(FUZZTIME) ./core/state
	$(GO) test -run '^$$' -fuzz '^FuzzReadFrames$$' -fuzztime $(FUZZTIME) ./megamcp
	$(GO) test -run '^$$' -fuzz '^FuzzLoadTau2$$' -fuzztime $(FUZZTIME) ./core/task
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./core/task
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeResponse$$' -fuzztime $(FUZZTIME) ./core/model
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./plugins/harness/react
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./plugins/harness/hermes
	$(GO) test -run '^$$' -fuzz '^FuzzParseSkill$$' -fuzztime $(FUZZTIME) ./plugins/harness/native
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./core/config
	$(GO) test -run '^$$' -fuzz '^FuzzParseTau2Tools$$' -fuzztime $(FUZZTIME) ./core/synth
	$(GO) test -run '^$$' -fuzz '^FuzzParseBFCL$$' -fuzztime $(FUZZTIME) ./core/synth
	$(GO) test -run '^$$' -fuzz '^FuzzParseToucan$$' -fuzztime $(FUZZTIME) ./core/synth
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFTRLCase$$' -fuzztime $(FUZZTIME) ./core/train
	$(GO) test -run '^$$' -fuzz '^FuzzParseFTRLResponse$$' -fuzztime $(FUZZTIME) ./core/train
	$(GO) test -run '^$$' -fuzz '^FuzzJSON$$' -fuzztime $(FUZZTIME) ./sdk/pyvalue
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) ./sdk/pyvalue
	$(GO) test -run '^$$' -fuzz '^FuzzReadFTRLParquet$$' -fuzztime $(FUZZTIME) ./core/dataset

# The deterministic synthesizer's figures (docs/synthesis-figures.md) on the
# full shared data sets: oracle-call share (tau2 airline, BFCL), read/write
# classification (Toucan readonly_eval), every Toucan server synthesized and
# validated; then the CPU-per-server benchmark. SHARED_DATA holds
# tau2-airline/, bfcl-multiturn/ and toucan-mcp/ (make test runs slices).
SHARED_DATA ?= ../shared/data
# Fails a target at once, naming the variable, when SHARED_DATA lacks $(1).
need_shared = @test -e $(SHARED_DATA)/$(1) || { echo "make $@: $(SHARED_DATA)/$(1) not found: set SHARED_DATA to the shared data folder (README, \"Shared data\")" >&2; exit 2; }
synth-figures:
	$(call need_shared,toucan-mcp/servers.jsonl)
	$(GO) run ./core/synth/cmd/synthfig -data $(SHARED_DATA) all
	$(GO) test -run '^$$' -bench 'BenchmarkSynthesize' -benchtime 200x ./core/synth

# Task certification and generation figures (docs/certification.md): every
# tau2 retail task on the synthesized retail server and the Go retail module,
# every airline task, then generation on airline, retail-spec and every
# Toucan server of SHARED_DATA (make test runs slices).
certify:
	$(call need_shared,toucan-mcp/servers.jsonl)
	$(GO) build -o build/weft-certify ./cmd/weft
	mkdir -p build/certify
	build/weft-certify synth certify examples/data/tau2-retail/tasks.json --server examples/servers/tau2-retail --out build/certify/tau2-retail.weft.json
	build/weft-certify synth certify examples/data/tau2-airline/tasks.json --server examples/servers/tau2-airline --out build/certify/tau2-airline.weft.json
	WEFT_CERTIFY_FULL=1 $(GO) test -count=1 -run '^TestCertifyTau2Retail$$' -v ./examples/modules/retail/
	$(GO) run ./core/synth/tasks/cmd/taskfig -toucan $(SHARED_DATA)/toucan-mcp/servers.jsonl -seed 1 > build/certify/generation.json
# Composed cross-server tasks (docs/certification.md, "Composition"):
# regenerate examples/data/compose-tau2 and require the same bytes, then
# run configs/synth-compose.hcl with the gold replay (R = 1 on every
# episode) and with planted faults (make test runs a slice).
compose:
	$(GO) build -o build/weft-compose ./cmd/weft
	mkdir -p build/compose
	build/weft-compose run configs/synth-compose-gen.hcl --var out=$(CURDIR)/build/compose/tasks.weft.json --out build/compose/gen > build/compose/report.txt
	cmp build/compose/tasks.weft.json examples/data/compose-tau2/tasks.weft.json
	cmp build/compose/tasks.states.json examples/data/compose-tau2/tasks.states.json
	$(MAKE) compose-run
# Every composed task of configs/synth-compose.hcl through weft run, both
# views by three harnesses: the gold replay (R = 1 on every episode) and
# planted faults (each episode's failed checkpoints as its recorded faults
# predict, docs/certification.md "Planted faults and their checkpoints"),
# SFT and GRPO data; composecheck prints the figures (make test runs a
# 3-task slice: internal/cli TestRunSynthCompose).
compose-run:
	$(GO) build -o build/weft-compose ./cmd/weft
	mkdir -p build/compose
	rm -rf build/compose/gold build/compose/faults
	build/weft-compose run configs/synth-compose.hcl --out build/compose/gold --json > build/compose/gold.json
	build/weft-compose run configs/synth-compose.hcl --var faults_scale=1 --out build/compose/faults --json > build/compose/faults.json
	$(GO) run ./internal/pipeline/cmd/composecheck build/compose/gold build/compose/faults | tee build/compose/check.json
# Many servers in one process (docs/benchmarks.md, "Many servers in one
# process"): every Toucan server of SHARED_DATA synthesized and validated,
# the passing ones (plus generated variants, marked, up to SCALE_N)
# registered in ONE real `weft serve --preload-all`, measured over its
# admin API: RSS (/proc/PID/status), registration time, cold and warm
# first calls in new sessions. SCALE_N=10000 is issue 16's 10,000.
# megamcp's TestManyServersSlice is the 50-server slice in make test.
SCALE_N ?= 1000
scale-servers:
	$(call need_shared,toucan-mcp/servers.jsonl)
	$(MAKE) build
	$(GO) run ./core/synth/cmd/synthscale -data $(SHARED_DATA) -weft $(BIN) -interp bin/weft-interp.bundle -n $(SCALE_N)

# The NATS JetStream work queue with real processes (docs/design/033-work-queue.md):
# byte-equal results with 3 weft workers, kill -9 of a worker mid-run, and
# episodes/s and CPU per episode for 1, 2, 3 workers vs in process.
queue-test: build
	WEFT_QUEUE_TEST=1 $(GO) test -race -count=1 -timeout 30m ./internal/queue
	scripts/queue-test.sh $(QUEUE_TASKS)

# Distinct compiled modules in an LRU under a memory budget (issue 16 item
# 5b); core/module's TestModuleLRU is the slice in make test.
SCALE_MODULES ?= 500
SCALE_BUDGET_MIB ?= 64
scale-modules:
	WEFT_SCALE_MODULES=$(SCALE_MODULES) WEFT_SCALE_BUDGET_MIB=$(SCALE_BUDGET_MIB) $(GO) test -count=1 -run TestModuleLRUScale -v -timeout 60m ./core/module/

clean:
	rm -rf bin build bench.txt
