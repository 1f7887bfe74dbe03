# batch-scheduler: the README's commands. Every target sets up .venv itself.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-runtime
LOCK_HEADER := \
  "\# The runtime dependencies of pyproject.toml's [project] table, every one pinned with its" \
  "\# hashes, for the image (Dockerfile: pip install --require-hashes). Regenerate: make lock" \
  "\#"

.PHONY: install test check demo bench bench-perf bench-gang bench-chaos bench-ceiling fmt clean controlplane cluster lock

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,dev,bench]'
	@touch $(STAMP)

install: $(STAMP)

# The cluster tier needs the real control plane: built (once, then cached) when Go >= 1.26
# is here, otherwise its tests skip and this says why in one line.
test: $(STAMP)
	@bash controlplane/build.sh --if-go
	$(BIN)/python -m pytest

# etcd, kube-apiserver, kube-controller-manager, kube-scheduler at the versions
# controlplane/go.mod pins, into controlplane/bin (nothing when already there).
controlplane:
	bash controlplane/build.sh

# The control plane on loopback for a person: prints the kubeconfigs; Ctrl-C stops it.
cluster: $(STAMP) controlplane
	$(BIN)/python -m controlplane

check: $(STAMP)
	$(BIN)/ruff format --check scheduler tests bench controlplane
	$(BIN)/ruff check scheduler tests bench controlplane
	$(BIN)/mypy
	$(BIN)/lint-imports

fmt: $(STAMP)
	$(BIN)/ruff format scheduler tests bench controlplane
	$(BIN)/ruff check --fix scheduler tests bench controlplane

# The demo needs the runtime dependencies only, not the test, dev and bench extras. pip's
# and the build backend's output (setuptools' editable-install notice among it) goes to
# .venv/install.log, shown only when the install fails.
$(DEMO_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	@echo "installing batch-scheduler and its runtime dependencies into $(VENV) (once)"
	@{ $(BIN)/python -m pip install -q --upgrade pip && $(BIN)/python -m pip install -q -e . ; } \
	  > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	@$(BIN)/batch-scheduler demo

# requirements.lock: pip-tools resolves pyproject.toml's runtime dependencies (keeping the
# pins already there) and writes every file's hash; the Dockerfile installs from it.
lock: $(STAMP)
	$(BIN)/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe --no-header \
	  --no-emit-find-links --output-file=requirements.lock pyproject.toml
	{ printf '%s\n' $(LOCK_HEADER); cat requirements.lock; } > requirements.lock.tmp
	mv requirements.lock.tmp requirements.lock

bench: $(STAMP)
	$(BIN)/python -m bench

# kube's own scheduler_perf workloads (read from the pinned module), kube-scheduler and ours
# side by side on a fresh control plane each: every `performance` workload unless PERF_ARGS
# narrows it, e.g. PERF_ARGS="--test '^SchedulingBasic/' --param initNodes=500" (--list:
# the plan only). docs/performance.md.
bench-perf: $(STAMP) controlplane
	$(BIN)/python -m bench.scheduler_perf $(PERF_ARGS)

# Gang scheduling (GenericWorkload), kube-scheduler and ours each started on a backlog of
# PodGroups and pods at 5000 nodes: 3x1000 and 1000x3 gangs, the same pods without a group,
# an infeasible gang beside plain pods; GANG_ARGS narrows it, e.g. GANG_ARGS="--nodes 500
# --shapes gangs-3x1000 --labels gang". docs/performance.md, "Gang scheduling".
bench-gang: $(STAMP) controlplane
	$(BIN)/python -m bench.gang --work $(GANG_ARGS)

# Faults on the real control plane mid-burst (1000 nodes, 5000 pods), ours and
# kube-scheduler side by side; CHAOS_ARGS narrows it, e.g. CHAOS_ARGS="--nodes 50 --pods 300
# --scenarios etcd-kill", or CHAOS_ARGS="--soak 60". docs/reliability.md, "Faults on the
# real control plane".
bench-chaos: $(STAMP) controlplane
	$(BIN)/python -m bench.chaos $(CHAOS_ARGS)

# The API server's bind limit: bench/bindceiling (Go, client-go) sweeps bindings in flight
# at 500 and 5000 nodes. The same binary is bench.e2e's ceiling client.
BINDCEILING := bench/bindceiling/bin/bindceiling
$(BINDCEILING): bench/bindceiling/*.go bench/bindceiling/go.mod bench/bindceiling/go.sum
	cd bench/bindceiling && go build -trimpath -o bin/bindceiling .

bench-ceiling: $(STAMP) controlplane $(BINDCEILING)
	$(BIN)/python -m bench.bind_ceiling

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build *.egg-info
