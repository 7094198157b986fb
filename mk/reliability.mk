# Reliability (docs/reliability.md). Included by the Makefile.
#
#   make fuzz-long    the fuzz and fault suite (tests/reliability) with hypothesis's long profile: thousands of
#                     requests per RPC instead of the bounded profile `make test` runs
#   make soak         a paced load of mixed calls against a real server on loopback for SOAK_SECONDS (600),
#                     sampling RSS, descriptors and descendants; fails on any INTERNAL/UNKNOWN or leaked process

SOAK_SECONDS ?= 600
SOAK_OUT ?= soak-summary.json

.PHONY: fuzz-long soak

fuzz-long: install system-deps
	VERDICT_FUZZ_PROFILE=long $(VENV)/bin/pytest tests/reliability -q -p no:cacheprovider --timeout 3600 $(ARGS)

soak: install system-deps
	$(PY) scripts/soak.py --seconds $(SOAK_SECONDS) --out $(SOAK_OUT)
