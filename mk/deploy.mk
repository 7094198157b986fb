# Deployment helpers (docs/deployment.md). The deploy checks run in `make test` through pytest (tests/deploy/), so
# nothing is added to EXTRA_TESTS here; the image itself is built and run by `make image-test`, which .ci/run runs
# after `make test` (it needs root and a Docker engine, which the script installs and starts).
DEPLOY_BUILD := build/deploy
DEPLOY_OVERLAYS := dev production sidecar

.PHONY: manifests monitoring-rules monitoring-test image image-test

# Render every overlay to build/deploy/<overlay>.yaml, to read or diff what `kubectl apply -k` would send.
manifests:
	@mkdir -p $(DEPLOY_BUILD)
	@for overlay in $(DEPLOY_OVERLAYS); do \
	  kubectl kustomize deploy/overlays/$$overlay > $(DEPLOY_BUILD)/$$overlay.yaml && echo "$(DEPLOY_BUILD)/$$overlay.yaml"; \
	done

# The PrometheusRule's groups as a plain rules file, for a Prometheus without the Operator (`rule_files:`).
monitoring-rules: install
	@mkdir -p $(DEPLOY_BUILD)
	$(PY) deploy/monitoring/rules_file.py > $(DEPLOY_BUILD)/verdict-rules.yaml
	promtool check rules $(DEPLOY_BUILD)/verdict-rules.yaml

# promtool's unit tests of every alert and recording rule (deploy/monitoring/tests), run against the generated rules
# file: the tests name `verdict-rules.yaml` beside them, so they are copied next to it in build/deploy first.
monitoring-test: monitoring-rules
	cp deploy/monitoring/tests/*.yaml $(DEPLOY_BUILD)/
	cd $(DEPLOY_BUILD) && promtool test rules $(notdir $(wildcard deploy/monitoring/tests/*.yaml))

# Needs a Docker engine (none runs in CI). ARGS passes build arguments, e.g. ARGS='--build-arg JUDGE_NPM_PACKAGES=...'.
image:
	docker build -f deploy/Dockerfile -t verdict:$$($(PY) -c 'import verdict; print(verdict.__version__)') $(ARGS) .

# Build deploy/Dockerfile with a real Docker engine from a base image assembled from Debian packages (no registry
# needed), then run it read-only as uid 10001 and check it from outside (tests/image/). ARGS go to pytest.
image-test: install
	scripts/image-test $(VENV)/bin/pytest $(ARGS)
