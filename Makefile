# Every target runs with Node >= 24: scripts/toolchain.sh prints the system Node's folder when it
# is new enough, or bootstraps Node 24 from the npm registry into a cache outside the repo.
SHELL := /bin/bash
NODE_BIN := $(shell ./scripts/toolchain.sh)
export PATH := $(NODE_BIN):$(CURDIR)/node_modules/.bin:$(PATH)
# Native addons (node-pty, ssh2's optional helpers) must build against Node 24's headers.
export npm_config_nodedir := $(abspath $(NODE_BIN)/..)

.PHONY: start test deps provision lint typecheck unit bench gen e2e-kind clean image console

## start: run auth + proxy in one process on the embedded default (data in $SVC_DATA_DIR or ./data)
start: deps console
	node server/main.ts start

## test: everything CI runs: lint, format, types, generated files, unit and integration tests
test: deps provision console
	biome ci .
	node node_modules/typescript/bin/tsc -p tsconfig.json --noEmit
	@mkdir -p .tmp
	vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json; status=$$?; \
	  node scripts/test-summary.ts .tmp/vitest.json || status=1; exit $$status

deps: node_modules/.install-stamp

## console: build the web console (console/) into dist/console when its sources changed (docs/console.md)
console: dist/console/index.html
# NODE_ENV pinned: a caller's (vitest sets "test") would give another build than the image's.
dist/console/index.html: node_modules/.install-stamp $(shell find console -type f 2>/dev/null)
	NODE_ENV=production vite build --config console/vite.config.ts
# `npm install` (not `npm ci`): npm 11's ci refuses this lock file over optional platform packages
# of biome it never installs here; install still honours the locked versions and runs patch-package.
node_modules/.install-stamp: package.json package-lock.json $(wildcard patches/*.patch)
	npm install --no-audit --no-fund --loglevel=error
	touch $@

## provision: install the real peers the tests use (OpenSSH server, Chromium, PostgreSQL, Go-built tools)
provision:
	./scripts/provision.sh

lint:
	biome ci .

typecheck:
	node node_modules/typescript/bin/tsc -p tsconfig.json --noEmit

unit: deps
	vitest run

bench: deps provision
	node bench/run.ts

gen: deps
	node scripts/gen-proto.ts
	node scripts/gen-api.ts
	node scripts/gen-crds.ts
	node operator/gen-manifests.ts

clean:
	rm -rf node_modules data

## image: build the OCI image archive dist/svc-image.tar from the committed tree, no Docker daemon (docs/image.md)
image: deps
	./scripts/image/build.sh

## e2e-kind: the operator tests against a kind cluster (needs a Docker engine and kind; see docs/operator.md)
e2e-kind: deps
	./test/e2e-kind.sh
