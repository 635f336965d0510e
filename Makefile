# Pling in Go. `make help` lists the targets.
GO       ?= go
NODE     ?= node
FUZZTIME ?= 60s
DIST     := dist
# The browser of the Chromium conformance host (Debian's chromium package).
PLING_CHROMIUM ?= /usr/bin/chromium
export PLING_CHROMIUM
SITEDIST := internal/demosite/site/dist
GOROOT   := $(shell $(GO) env GOROOT)
# staticcheck at a pinned version, installed into bin/ from the module
# proxy by go install (a cached no-op after the first time), so a clean
# machine needs nothing installed. It is built for this machine and run
# with GOOS=js for ./wasm/ (go run would build it for js too).
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := bin/staticcheck

.PHONY: bench-origin-check bench-rows bench-modsize npm help demo bench-hosts bench-browser bench-gateway bench-agent bench-authority all build wasm deps test test-go test-node conform vet generate check-generated fuzz bench clean test-race tidy-check startup

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

demo: wasm build deps ## the main job: serve the demo site, open it in headless Chromium, run a scripted agent session
	./bin/pling demo

all: wasm build ## build the module and the pling command (which embeds it)

build: ## build every package and the pling command into bin/
	@echo "build: go build ./... and bin/pling (a minute or more on a cold cache)"
	$(GO) build ./...
	$(GO) build -o bin/pling ./cmd/pling

wasm: ## build dist/pling.wasm (shipped) and dist/pling-conform.wasm (with the conformance entry, for tests) reproducibly, copy the loader files beside them (pling.js, ui.js and webmcp.js without their comments, internal/jsstrip), write each file's brotli and gzip forms beside it (NAME.br, NAME.gz, which the servers serve instead of compressing at start), copy them into the pling serve and plinghttp embeds, write their Subresource Integrity hashes to dist/sri.json
	@mkdir -p $(DIST)
	@echo "wasm: building $(DIST)/pling.wasm (GOOS=js; a minute or more)"
	GOOS=js GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o $(DIST)/pling.wasm ./wasm
	@echo "wasm: building $(DIST)/pling-conform.wasm (the same with the conformance entry; a minute or more)"
	GOOS=js GOARCH=wasm CGO_ENABLED=0 $(GO) build -tags plingfixture -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o $(DIST)/pling-conform.wasm ./wasm
	cp $(GOROOT)/lib/wasm/wasm_exec.js $(DIST)/wasm_exec.js
	cp js-shim/pling.mjs js-shim/stub.js $(DIST)/
	$(GO) run ./internal/cmd/jsstrip $(DIST) js-shim/pling.js js-shim/ui.js js-shim/webmcp.js
	@echo "wasm: compressing the served files once, brotli 11 and gzip 9 (NAME.br, NAME.gz; the module takes tens of seconds)"
	@$(NODE) -e 'const z=require("zlib"),fs=require("fs");for(const f of ["pling.wasm","pling.js","pling.mjs","stub.js","ui.js","webmcp.js","wasm_exec.js"]){const p="$(DIST)/"+f,b=fs.readFileSync(p),w=Math.min(Math.max(b.length.toString(2).length,10),24),g=z.gzipSync(b,{level:9}),r=z.brotliCompressSync(b,{params:{[z.constants.BROTLI_PARAM_QUALITY]:11,[z.constants.BROTLI_PARAM_LGWIN]:w,[z.constants.BROTLI_PARAM_SIZE_HINT]:b.length}});fs.writeFileSync(p+".gz",g);fs.writeFileSync(p+".br",r);if(["pling.wasm","pling.js","ui.js","webmcp.js"].includes(f))console.log(f.padEnd(11),"raw",b.length,"gzip",g.length,"brotli",r.length)}'
	rm -f $(SITEDIST)/*.br $(SITEDIST)/*.gz plinghttp/dist/*.br plinghttp/dist/*.gz
	for f in pling.wasm wasm_exec.js pling.js ui.js webmcp.js; do cp $(DIST)/$$f $(DIST)/$$f.br $(DIST)/$$f.gz $(SITEDIST)/ || exit 1; done
	for f in pling.wasm wasm_exec.js pling.js pling.mjs stub.js ui.js webmcp.js; do cp $(DIST)/$$f $(DIST)/$$f.br $(DIST)/$$f.gz plinghttp/dist/ || exit 1; done
	@$(NODE) -e 'const c=require("crypto"),fs=require("fs"),o={};for(const f of ["pling.js","pling.mjs","stub.js","ui.js","webmcp.js","wasm_exec.js","pling.wasm"])o[f]="sha384-"+c.createHash("sha384").update(fs.readFileSync("$(DIST)/"+f)).digest("base64");fs.writeFileSync("$(DIST)/sri.json",JSON.stringify(o,null,2)+"\n");for(const f in o)console.log("integrity",f.padEnd(12),o[f])'

npm: wasm ## stage the npm package @pling/page (js-shim/package.json) with the module into dist/npm/ and npm pack it there
	rm -rf $(DIST)/npm && mkdir -p $(DIST)/npm/dist
	cd js-shim && cp package.json $$($(NODE) -p 'require("./package.json").files.filter(f=>!f.startsWith("dist/")).join(" ")') ../$(DIST)/npm/
	cp $(DIST)/pling.wasm $(DIST)/wasm_exec.js $(DIST)/npm/dist/
	cd $(DIST)/npm && npm pack

vet: ## go vet and staticcheck (native and GOOS=js) and gofmt
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/
	GOBIN=$(CURDIR)/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) -checks all ./...
	GOOS=js GOARCH=wasm $(STATICCHECK) -checks all ./wasm/...
	GOOS=js GOARCH=wasm $(STATICCHECK) -checks all -tags plingfixture ./wasm/...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

generate: ## regenerate schema/surface.schema.json, js-shim/pling.d.ts and the Go codecs (internal/wire/encode_gen.go, internal/wire/request_gen.go, schema/pagespec/decode_gen.go)
	$(GO) generate ./...

check-generated: generate ## fail when the generated artifacts are stale
	git diff --exit-code -- schema/surface.schema.json js-shim/pling.d.ts internal/wire/encode_gen.go internal/wire/request_gen.go schema/pagespec/decode_gen.go

deps: ## install what the tests need when it is missing, as root with apt-get: Chromium and its headless shell, PostgreSQL's server, npm, Xvfb
	@if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "deps: installing PostgreSQL (apt-get install postgresql; the tests start a cluster of their own)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  pg_lsclusters -h 2>/dev/null | awk '$$4 == "online" {print $$1, $$2}' | while read -r v c; do pg_ctlcluster "$$v" "$$c" stop || true; done; \
	else \
	  echo "deps: no PostgreSQL server binaries; the authority's PostgreSQL tests will be skipped (as root: apt-get install postgresql)."; \
	fi
	@if [ -x "$(PLING_CHROMIUM)" ]; then :; \
	elif [ "$(PLING_CHROMIUM)" = /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "deps: installing Chromium (apt-get install chromium)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "deps: no browser at $(PLING_CHROMIUM); the Chromium conformance host needs one, so its tests will fail."; \
	  echo "deps: install it (as root: apt-get install chromium) or set PLING_CHROMIUM to a Chromium or Chrome binary."; \
	fi
	@missing=""; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	[ ! -x /usr/bin/chromium ] || [ -x /usr/lib/chromium/chromium-headless-shell ] || missing="$$missing chromium-headless-shell"; \
	command -v Xvfb >/dev/null || missing="$$missing xvfb"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "deps: installing$$missing (npm runs the MCP SDK's client, the headless shell starts headless launches, Xvfb runs the headed approval test)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "deps: missing$$missing (as root: apt-get install$$missing); the tests that need them will fail or skip."; \
	fi

test: deps vet tidy-check wasm test-go test-race test-node ## the whole suite: Go tests, every host, Node tests, the race detector (what CI runs)

test-go: wasm ## Go tests, including the conformance suite on every host
	@echo "test-go: go test ./... (every package, browsers and every conformance host; several minutes)"
	PLING_DIST=$(CURDIR)/$(DIST) PLING_REQUIRE_NPM=1 $(GO) test -count=1 -timeout 30m ./...
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" ./wasm/ ./internal/jspattern/

test-race: wasm ## the race detector on every package (-short: the slowest tests skip, saying why)
	@echo "test-race: go test -race -short ./... (several minutes)"
	PLING_DIST=$(CURDIR)/$(DIST) $(GO) test -race -short -count=1 -timeout 30m ./...

startup: wasm ## measure pling mcp from spawn to the first tools/list on the demo site (fresh browser, then attached to a pling session): BenchmarkMCPStartup
	PLING_DIST=$(CURDIR)/$(DIST) $(GO) test -count=1 -run '^$$' -bench '^BenchmarkMCPStartup$$' -benchtime 3x ./cmd/pling/
	PLING_STARTUP_SESSION=1 PLING_DIST=$(CURDIR)/$(DIST) $(GO) test -count=1 -run '^$$' -bench '^BenchmarkMCPStartup$$' -benchtime 3x ./cmd/pling/

tidy-check: ## fail when go.mod or go.sum is not what go mod tidy writes
	$(GO) mod tidy -diff

test-node: wasm ## Node tests of the shim against the module
	PLING_DIST=$(CURDIR)/$(DIST) $(NODE) --test js-shim/test/

conform: build wasm ## run the conformance suite on each host with a readable report
	./bin/pling conform --strict --host native e2e/conformance
	./bin/pling conform --host node --dist $(DIST) e2e/conformance
	./bin/pling conform --host chromium --dist $(DIST) e2e/conformance

fuzz: ## run every fuzz target in the repository for FUZZTIME each (found by go test -list, so none is forgotten)
	@set -e; n=0; \
	for dir in $$(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | xargs -n1 dirname | sort -u); do \
	  for t in $$($(GO) test -list '^Fuzz' ./$$dir | grep '^Fuzz'); do \
	    echo "fuzz: ./$$dir $$t"; n=$$((n+1)); \
	    $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) ./$$dir; \
	  done; \
	done; \
	echo "fuzz: $$n targets, $(FUZZTIME) each"; [ $$n -gt 0 ]

bench-hosts: wasm ## the module on every host in one run: sizes, cold start, describe/invoke as ratios to native
	$(GO) run ./e2e/cmd/pling-bench hosts --dist $(DIST)

bench-browser: wasm ## the shim and the module in Chromium beside the WebMCP polyfill, as ratios (e2e/artifacts/bench-browser.json, .svg), then its figures in docs/benchmarks.md
	$(GO) run ./e2e/cmd/pling-bench browser --dist $(DIST)
	$(GO) run ./e2e/cmd/pling-bench docs bench-browser

bench-modsize: ## what the module is made of: each section's size and the code section's function bodies by Go package and by part, read from the module's own name section (make wasm's build without -s -w; e2e/artifacts/bench-modsize.json), then its table in docs/benchmarks.md
	$(GO) run ./e2e/cmd/pling-bench modsize
	$(GO) run ./e2e/cmd/pling-bench docs bench-modsize

bench-gateway: ## 200 concurrent 1 MiB streams through the gateway on loopback: heap, and the added latency per chunk as a ratio to the upstream direct (e2e/artifacts/bench-gateway.json), then its figures in docs/benchmarks.md
	PLING_BENCH_OUT=$(CURDIR)/e2e/artifacts/bench-gateway.json $(GO) test -count=1 -run '^TestLoad200Streams$$' -v ./gateway/
	$(GO) run ./e2e/cmd/pling-bench docs bench-gateway

bench-agent: wasm build ## scripted agent tasks through pling mcp and @playwright/mcp (npm, cache: snapshot, find, and WebMCP on reading the page's mirrored tools), as ratios; RUNS=5 (e2e/artifacts/bench-agent.json, .md, .svg) and its figures in docs/benchmarks.md; then the tool call with and without the per-request origin check (bench-origin-check), and a row call on a 2,000- and 10,000-row page through pling mcp ÷ in the page (bench-rows)
	$(GO) run ./e2e/cmd/pling-bench agent --dist $(DIST) --pling bin/pling --runs $(or $(RUNS),5)
	$(GO) run ./e2e/cmd/pling-bench docs bench-agent
	$(MAKE) bench-origin-check
	$(MAKE) bench-rows

bench-rows: wasm build ## a row action on an order page of 2,000 and 10,000 rows (five row actions of the kind) through pling mcp ÷ the same call in the page's own script, medians of 20 in one run, and the records reader's runs per describe through pling mcp (e2e/artifacts/bench-rows.json)
	$(GO) run ./e2e/cmd/pling-bench rows --dist $(DIST) --pling bin/pling

bench-origin-check: wasm ## pling mcp tool-call latency in Chromium without and with the per-request origin check, side by side (BenchmarkToolCall)
	$(GO) test -run='^$$' -bench='^BenchmarkToolCall$$' -benchtime=100x -count=3 ./agent/mcp/

bench-authority: wasm ## the authority's lease and write throughput and p99 on SQLite and PostgreSQL with 1 and 3 instances, client write p99 while a million expired rows are swept (÷ an empty store) and the sweep's rows/s, the create limit's accuracy with 1 and 3 instances, and the shared replay check's cost in Chromium, as ratios (e2e/artifacts/bench-authority.json, .md), then its figures in docs/benchmarks.md
	$(GO) run ./e2e/cmd/pling-bench authority --dist $(DIST)
	$(GO) run ./e2e/cmd/pling-bench docs bench-authority

bench: ## benchmarks, reported as ratios measured side by side
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=500ms ./runtime/ ./wasm/...

clean: ## remove build outputs
	rm -rf bin $(DIST)
	find $(SITEDIST) plinghttp/dist -type f ! -name .keep -delete
