# Pling in Go. `make help` lists the targets.
GO ?= go
FUZZTIME ?= 60s

.PHONY: help all build test vet generate check-generated fuzz bench

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

all: build ## build everything

build: ## build every package and the pling command
	$(GO) build ./...

vet: ## go vet and gofmt
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

generate: ## regenerate schema/surface.schema.json and js-shim/pling.d.ts
	$(GO) generate ./...

check-generated: generate ## fail when the generated artifacts are stale
	git diff --exit-code -- schema/surface.schema.json js-shim/pling.d.ts

test: vet ## the whole test suite (what CI runs)
	$(GO) test -count=1 ./...

fuzz: ## run every fuzz target for FUZZTIME each
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=$(FUZZTIME) ./schema/

bench: ## benchmarks, reported as ratios measured side by side
	$(GO) test -run='^$$' -bench=. -benchmem ./...
