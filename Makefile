# kube-identity: thin wrapper over the npm scripts. `make` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help
STAMP := node_modules/.package-lock.json

##@ General
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
$(STAMP): package.json package-lock.json
	npm ci

deps: $(STAMP) ## Install dependencies (npm ci)

build: deps ## Compile TypeScript to dist/
	npm run build

typecheck: deps ## Type-check src, test and bench
	npm run typecheck

lint: deps ## Lint with eslint
	npm run lint

test: deps ## Lint, type-check and run every test suite
	npm test

run: build ## Run the embedded API server and the controller (kube-identity up)
	node dist/src/cmd/main.js up

bench: build ## Run the benchmarks
	npm run bench

clean: ## Remove build output
	rm -rf dist coverage

.PHONY: help deps build typecheck lint test run bench clean
