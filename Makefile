# batch-scheduler: the README's commands. Every target sets up .venv itself.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test check demo bench fmt clean controlplane cluster

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

demo: $(STAMP)
	$(BIN)/batch-scheduler demo

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build *.egg-info
