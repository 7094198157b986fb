# The real judge CLIs for tests/judges/test_real_cli.py (docs/judges.md). Included by the Makefile.
#
#   make judge-clis        npm ci the pinned claude, codex, gemini and qwen CLIs into tests/judges/real_cli
#                          (only when node_modules is missing or older than the lock file); `make unit` needs it
#   make judge-real-cli    only the real-CLI tests (no credentials, no network: each must fail with its own message)

JUDGE_CLIS := tests/judges/real_cli
JUDGE_CLIS_STAMP := $(JUDGE_CLIS)/node_modules/.package-lock.json

.PHONY: judge-clis judge-real-cli

$(JUDGE_CLIS_STAMP): $(JUDGE_CLIS)/package.json $(JUDGE_CLIS)/package-lock.json
	cd $(JUDGE_CLIS) && npm ci --no-audit --no-fund

judge-clis: $(JUDGE_CLIS_STAMP)

judge-real-cli: install judge-clis
	$(VENV)/bin/pytest -m real_cli tests/judges

unit: judge-clis
