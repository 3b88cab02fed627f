# kube-identity: thin wrapper over the npm scripts. `make` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help
STAMP := node_modules/.package-lock.json

# Every target runs on Node 24: the node on PATH when it is 24.x, else the pinned one hack/ensure-node.sh fetches
# from the npm registry into .local/, put first on PATH, with npm_config_nodedir at it so that node-gyp, should a
# dependency compile an addon, uses its headers instead of downloading them. SYSTEM_NODE=1 keeps whatever node is
# on PATH (to test on Node 22).
NODE_GOALS := $(filter-out help clean reset,$(or $(MAKECMDGOALS),help))
ifneq ($(if $(SYSTEM_NODE),,$(NODE_GOALS)),)
NODE_PREFIX := $(shell hack/ensure-node.sh)
ifneq ($(.SHELLSTATUS),0)
$(error hack/ensure-node.sh could not provide Node 24 (see above))
endif
ifneq ($(NODE_PREFIX),)
export PATH := $(NODE_PREFIX)/bin:$(PATH)
export npm_config_nodedir := $(NODE_PREFIX)
endif
endif

##@ General
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
$(STAMP): package.json package-lock.json
	npm ci

deps: $(STAMP) ## Install dependencies (npm ci)

# tsc runs only when a source, a tsconfig or the dependencies changed since the last build.
BUILD_STAMP := dist/.build-stamp
SOURCES := $(shell find src bench -name '*.ts' -not -name '*.test.ts' -o -name '*.proto') tsconfig.json tsconfig.build.json
$(BUILD_STAMP): $(STAMP) $(SOURCES)
	npm run build
	@touch $@

build: $(BUILD_STAMP) ## Compile TypeScript to dist/ (when sources changed)

typecheck: deps ## Type-check src, test and bench
	npm run typecheck

lint: deps ## Lint with eslint
	npm run lint

tools: ## Install the system tools some suites start (etcd, prometheus, go + sprig, python3-kubernetes) when missing
	@hack/ensure-tools.sh

test: deps tools ## Lint, type-check and run every test suite
	@echo "node $$(node --version) ($$(command -v node)), npm $$(npm --version)"
	npm test

run: build ## Run the embedded API server and the controller (kube-identity up; flags in ARGS="--port 7443")
	node dist/src/cmd/main.js up $(ARGS)

demo: build ## Play a node joining against `make run` (run it in another terminal first; flags in ARGS=...)
	node dist/src/cmd/main.js demo --kubeconfig .kube-identity/kubeconfig $(ARGS)

reset: ## Start over: remove make run's data directory .kube-identity (CA, keys, store, logs)
	@if [ -f .kube-identity/kube-identity.pid ] && kill -0 "$$(cat .kube-identity/kube-identity.pid)" 2>/dev/null; then \
	  echo "error: kube-identity is running on .kube-identity (pid $$(cat .kube-identity/kube-identity.pid)); stop it first (Ctrl-C)" >&2; exit 1; fi
	rm -rf .kube-identity

bench: build ## Run the benchmarks
	npm run bench

clean: ## Remove build output
	rm -rf dist coverage

.PHONY: help deps tools build typecheck lint test run demo reset bench clean

##@ Deploy
IMAGE ?= kube-identity:dev
KIND_CLUSTER ?= kube-identity
KIND_CONTEXT := kind-$(KIND_CLUSTER)
DEPLOY_NAMESPACE ?= kube-identity
KIND_KUBECONFIG := .kube-identity/kind.kubeconfig
# $(call require,tool,why): stop with a clear message when a tool is missing.
require = command -v $(1) >/dev/null 2>&1 || { echo "error: '$(1)' is not installed; $@ needs it $(2)" >&2; exit 1; }
require-docker = $(call require,docker,to build and run the image) && { docker info >/dev/null 2>&1 || { echo "error: docker is installed but its daemon is not reachable; $@ needs a running Docker engine" >&2; exit 1; }; }

image: ## Build the container image (IMAGE=name:tag, default kube-identity:dev; needs Docker)
	@$(require-docker)
	docker build -t $(IMAGE) --build-arg GIT_COMMIT=$$(git rev-parse HEAD 2>/dev/null || echo unknown) --build-arg BUILD_DATE=$$(date -u +%Y-%m-%dT%H:%M:%SZ) .

image-check: ## Without Docker: build the Dockerfile with buildah on local stand-ins for its base images, run `version` in it (root, apt; slow)
	@hack/image-check.sh

chart-check: deps tools ## Check the Helm chart without helm: render with Go text/template + sprig (hack/render-chart), schema, RBAC = deploy/
	npm run test:jest -- test/deploy/chart.test.ts test/deploy/template.test.ts

# VALUES=file.yaml and SET="a.b=c x=y" as helm's -f and --set.
CHART_RENDER = node hack/chart-render.mjs --chart charts/kube-identity --namespace $(DEPLOY_NAMESPACE) --release kube-identity $(if $(VALUES),-f $(VALUES)) $(foreach s,$(SET),--set $(s))

chart-render: tools ## Render the chart without helm as `helm template` does: values merged (VALUES=, SET=), checked against values.schema.json, rendered by hack/render-chart
	@$(CHART_RENDER)

chart-lint: tools ## Render the chart with the default values and with the monitoring extras on (chart-render); helm lint + helm template too when helm is installed
	@$(CHART_RENDER) >/dev/null
	@$(CHART_RENDER) --api-versions monitoring.coreos.com/v1 --set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true --set metrics.dashboard.enabled=true >/dev/null
	@if command -v helm >/dev/null 2>&1; then set -e; helm lint charts/kube-identity; \
	  helm template kube-identity charts/kube-identity --namespace $(DEPLOY_NAMESPACE) >/dev/null; \
	  helm template kube-identity charts/kube-identity --namespace $(DEPLOY_NAMESPACE) --api-versions monitoring.coreos.com/v1 --set metrics.serviceMonitor.enabled=true >/dev/null; \
	else echo "chart-lint: helm is not installed: rendered with hack/chart-render.mjs only"; fi
	@echo "chart-lint: ok"

manifests-check: deps ## Build deploy/ with kubectl kustomize and check the objects and examples
	@$(call require,kubectl,to run kustomize)
	kubectl kustomize deploy/ >/dev/null
	npm run test:jest -- test/deploy/kustomize.test.ts test/deploy/examples.test.ts

kind-up: ## Create the kind cluster from deploy/kind/cluster.yaml (needs Docker and kind)
	@$(require-docker)
	@$(call require,kind,to create the cluster (https://kind.sigs.k8s.io))
	kind create cluster --name $(KIND_CLUSTER) --config deploy/kind/cluster.yaml

kind-deploy: ## Build the image, load it into kind and install the chart with the cluster CA (needs Docker, kind, helm, kubectl)
	@$(require-docker)
	@$(call require,kind,to load the image)
	@$(call require,helm,to install the chart)
	@$(call require,kubectl,to create the CA Secret)
	$(MAKE) image IMAGE=$(IMAGE)
	kind load docker-image $(IMAGE) --name $(KIND_CLUSTER)
	kubectl --context $(KIND_CONTEXT) create namespace $(DEPLOY_NAMESPACE) --dry-run=client -o yaml | kubectl --context $(KIND_CONTEXT) apply -f -
	@# kube-identity signs with the cluster CA so that the apiserver accepts the client certificates it issues.
	@mkdir -p .kube-identity && chmod 700 .kube-identity
	docker exec $(KIND_CLUSTER)-control-plane cat /etc/kubernetes/pki/ca.crt > .kube-identity/kind-ca.crt
	docker exec $(KIND_CLUSTER)-control-plane cat /etc/kubernetes/pki/ca.key > .kube-identity/kind-ca.key
	kubectl --context $(KIND_CONTEXT) -n $(DEPLOY_NAMESPACE) create secret tls kube-identity-cluster-ca --cert .kube-identity/kind-ca.crt --key .kube-identity/kind-ca.key --dry-run=client -o yaml | kubectl --context $(KIND_CONTEXT) apply -f -
	rm -f .kube-identity/kind-ca.key
	helm upgrade --install kube-identity charts/kube-identity --kube-context $(KIND_CONTEXT) --namespace $(DEPLOY_NAMESPACE) \
	  --set image.repository=$(firstword $(subst :, ,$(IMAGE))) --set image.tag=$(lastword $(subst :, ,$(IMAGE))) --set image.pullPolicy=Never \
	  --set ca.existingSecret=kube-identity-cluster-ca --wait --timeout 3m

kind-e2e: build ## Run `kube-identity demo` against the kind cluster (after kind-up and kind-deploy)
	@$(call require,kind,to read the cluster kubeconfig)
	@mkdir -p .kube-identity && chmod 700 .kube-identity
	kind get kubeconfig --name $(KIND_CLUSTER) > $(KIND_KUBECONFIG)
	node dist/src/cmd/main.js demo --kubeconfig $(KIND_KUBECONFIG)

.PHONY: image image-check chart-check chart-render chart-lint manifests-check kind-up kind-deploy kind-e2e
