# Pling in Go. `make help` lists the targets.
GO       ?= go
NODE     ?= node
FUZZTIME ?= 60s
DIST     := dist
GOROOT   := $(shell $(GO) env GOROOT)

.PHONY: help all build wasm test test-go test-node conform vet generate check-generated fuzz bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

all: build wasm ## build the pling command and the module

build: ## build every package and the pling command into bin/
	$(GO) build ./...
	$(GO) build -o bin/pling ./cmd/pling

wasm: ## build dist/pling.wasm reproducibly and copy the loader files beside it
	@mkdir -p $(DIST)
	GOOS=js GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o $(DIST)/pling.wasm ./wasm
	cp $(GOROOT)/lib/wasm/wasm_exec.js $(DIST)/wasm_exec.js
	cp js-shim/pling.js $(DIST)/pling.js
	@$(NODE) -e 'const z=require("zlib"),fs=require("fs");for(const f of ["pling.wasm","pling.js"]){const b=fs.readFileSync("$(DIST)/"+f);console.log(f.padEnd(11),"raw",b.length,"gzip",z.gzipSync(b,{level:9}).length,"brotli",z.brotliCompressSync(b,{params:{[z.constants.BROTLI_PARAM_QUALITY]:11}}).length)}'

vet: ## go vet (native and GOOS=js) and gofmt
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

generate: ## regenerate schema/surface.schema.json and js-shim/pling.d.ts
	$(GO) generate ./...

check-generated: generate ## fail when the generated artifacts are stale
	git diff --exit-code -- schema/surface.schema.json js-shim/pling.d.ts

test: vet wasm test-go test-node ## the whole suite: Go tests, every host, Node tests (what CI runs)

test-go: wasm ## Go tests, including the conformance suite on every host
	PLING_DIST=$(CURDIR)/$(DIST) $(GO) test -count=1 ./...

test-node: wasm ## Node tests of the shim against the module
	PLING_DIST=$(CURDIR)/$(DIST) $(NODE) --test js-shim/test/

conform: build wasm ## run the conformance suite on each host with a readable report
	./bin/pling conform --host native e2e/conformance
	./bin/pling conform --host node --dist $(DIST) e2e/conformance

fuzz: ## run every fuzz target for FUZZTIME each
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=$(FUZZTIME) ./schema/
	$(GO) test -run='^$$' -fuzz='^FuzzTokenVerify$$' -fuzztime=$(FUZZTIME) ./runtime/
	$(GO) test -run='^$$' -fuzz='^FuzzMatch$$' -fuzztime=$(FUZZTIME) ./runtime/

bench: ## benchmarks, reported as ratios measured side by side
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=500ms ./runtime/ ./wasm/...

clean: ## remove build outputs
	rm -rf bin $(DIST)
