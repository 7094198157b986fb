# Polyglot clients and the contract's hygiene (docs/clients.md). Included by the Makefile.
#
#   make buf-lint          buf lint (STANDARD + COMMENTS from protos/buf.yaml: every element documented)
#   make buf-breaking      buf breaking against the released contract protos/released/verdict-v1.binpb
#   make buf-release       cut a release: snapshot the current contract as the new baseline (commit it with the tag)
#   make node-client-test  npm ci if needed, types freshness check, tsc build, node tests against a real server
#   make ts-gen            regenerate clients/typescript/src/generated from the proto
#   make client-packages   build the installable clients into build/clients: the Python wheel and the npm tarball

TS_CLIENT := clients/typescript
BUF := $(TS_CLIENT)/node_modules/.bin/buf
RELEASED_CONTRACT := released/verdict-v1.binpb
NODE_DEPS := $(TS_CLIENT)/node_modules/.package-lock.json

.PHONY: node-deps buf-lint buf-breaking buf-release node-client-test ts-gen

$(NODE_DEPS): $(TS_CLIENT)/package.json $(TS_CLIENT)/package-lock.json
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund

node-deps: $(NODE_DEPS)

buf-lint: $(NODE_DEPS)
	cd protos && ../$(BUF) lint

buf-breaking: $(NODE_DEPS)
	cd protos && ../$(BUF) breaking --against $(RELEASED_CONTRACT)

buf-release: $(NODE_DEPS)
	cd protos && ../$(BUF) build --exclude-source-info -o $(RELEASED_CONTRACT)
	@echo "protos/$(RELEASED_CONTRACT) is the new baseline: commit it together with the release tag"

ts-gen: $(NODE_DEPS)
	cd $(TS_CLIENT) && npm run --silent gen

node-client-test: install $(NODE_DEPS)
	cd $(TS_CLIENT) && npm run --silent gen:check && npm test

EXTRA_TESTS += buf-lint buf-breaking node-client-test

# Go and Java stubs with locally installed plugins (protos/buf.gen.yaml; see docs/clients.md). Not part of `make test`.
STUBS_OUT ?= /tmp/verdict-stubs
other-stubs: $(NODE_DEPS)
	cd protos && ../$(BUF) generate -o $(abspath $(STUBS_OUT))
	@echo "Go and Java stubs in $(STUBS_OUT)"
.PHONY: other-stubs

# tests/clients/test_npm_package.py packs the TypeScript client and installs the tarball into a clean project.
unit: node-deps

# The two clients as their users install them: `pip install build/clients/verdict_client-*.whl` and
# `npm install build/clients/verdict-client-*.tgz` (tests/clients/test_standalone_install.py and test_npm_package.py
# install them into a clean virtualenv and a clean npm project).
CLIENTS_BUILD := build/clients
client-packages: install $(NODE_DEPS)
	@mkdir -p $(CLIENTS_BUILD)
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir $(CLIENTS_BUILD) ./clients/python
	cd $(TS_CLIENT) && npm pack --silent --pack-destination $(abspath $(CLIENTS_BUILD))
	@ls $(CLIENTS_BUILD)
.PHONY: client-packages
