# Verdict: `make run` installs everything into .venv/ and starts the server; `make test` runs every check.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ARGS ?=
# Areas add their own checks to `make test` from mk/*.mk (EXTRA_TESTS += target).
EXTRA_TESTS :=

.PHONY: install system-deps run test lint typecheck protos protos-check unit clean bench

# The Python client is its own distribution (clients/python); the server's tests use it, so it is installed beside.
install: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@set -e; if [ ! -x $(PY) ]; then python=$$(scripts/find-python); echo "creating $(VENV) with $$python"; "$$python" -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' -e ./clients/python
	@touch $(STAMP)

# Debian packages the tests use (bash and git at run time; see scripts/apt-packages.txt). Installs only what is missing.
system-deps:
	@scripts/install-system-deps

run: install
	$(VENV)/bin/verdict serve $(ARGS)

protos: install
	$(PY) scripts/gen_protos.py

protos-check: install
	$(PY) scripts/gen_protos.py --check

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy service clients/python tests bench scripts deploy

unit: install system-deps
	$(VENV)/bin/pytest $(ARGS)

# Load, overload, workers and memory benchmarks (not part of `make test`); a full run rewrites docs/performance.md.
bench: install
	@scripts/install-system-deps bench-apt-packages.txt
	$(PY) -m bench $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

-include mk/*.mk

# pytest runs last so its summary is the closing line of the run.
test: install system-deps protos-check lint typecheck $(EXTRA_TESTS) unit
