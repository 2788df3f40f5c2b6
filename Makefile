# The pet store. `make help` lists the targets.
GO        ?= go
BIN       := bin/petstore
# -trimpath keeps the clone's folder out of the build cache's keys: a fresh
# clone of the same code finds every package it builds already compiled
# (without it, a clone in a new folder compiles and vets everything anew).
export GOFLAGS := -trimpath $(GOFLAGS)
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './var/*')

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: build ## build and start the store on the embedded SQLite (var/petstore.db)
	./$(BIN) serve

.PHONY: build
build: ## build bin/petstore
	$(GO) build -o $(BIN) ./cmd/petstore

.PHONY: install
install: ## go install petstore into GOBIN, else GOPATH/bin (usually ~/go/bin), to run it from anywhere
	$(GO) install ./cmd/petstore
	@echo "installed $$($(GO) env GOBIN | grep . || echo $$($(GO) env GOPATH)/bin)/petstore"

.PHONY: generate
generate: ## regenerate the templ views (*_templ.go) and the API client (web/client/petstoreapi)
	$(GO) tool templ generate
	$(GO) tool oapi-codegen -config web/client/petstoreapi/oapi-codegen.yaml web/openapi/openapi.yaml

# The race detector watches everything. Leaving modernc.org/sqlite
# uninstrumented (-gcflags='modernc.org/...=-race=false') made make test
# three times quicker but brought false reports inside encoding/json's type
# cache (River workers decoding job arguments side by side), so it is not
# done.
RACE := -race

# The packages' tests wait about half their time (on PostgreSQL, on
# chromium drawing a page, on the network): CI's go test -race used one of
# the two cores on average with go test's default of two packages at a
# time. Four packages, and four of a package's parallel tests (the browser
# tests), keep both cores busy.
PARALLEL := -p 4 -parallel 4

# Some tests run on one goroutine and only grind: the input sweeps send
# thousands of hostile requests one after another, the refused-body test
# sends a megabyte a thousand times to see every answer arrive (a TCP rule),
# the orders search's plans test seeds 60,000 rows and runs every search
# under EXPLAIN, the large-catalog migration builds its indexes on a big
# table, and the photo sizes test re-encodes images. Nothing for the race
# detector to watch (the code they reach is raced by the other tests), and
# five to ten times slower under it (SQLite, pure Go, is instrumented
# line by line), so make test runs them in a pass of their own without -race.
NORACE := ^(TestSweep.*|TestRefusedBodyAnswerArrivesEveryTime|TestOrderSearchPlans|TestMigrateLargeCatalog|TestReencodeSizes)$$
NORACE_PKGS := ./handlers/ ./db/ ./web/photo/
# The browser tests (cmd/petstore, every one named *Browser*: newBrowser
# refuses any other name) check what a person sees and does in chromium:
# layout, focus, the accessibility engine, the no-JavaScript fallbacks.
# Their server is the same handlers and stores the handler, multi-instance
# and outage tests drive side by side under -race; in them it mostly waits
# for chromium, yet -race doubled to tripled their CPU (TestImportBrowser
# alone: 11.4 CPU-s, 3.7 without), on a two-core machine that make test
# keeps busy. So they run in the pass without -race too.
BROWSERS := Browser
BROWSER_PKGS := ./cmd/petstore/
# The soak tests place 50,000 orders (query plans without fresh statistics)
# and export a million (the server's memory), on PostgreSQL, and place an
# order every 20 ms beside a 200,000-row catalog import on SQLite: make
# test-soak runs them, and CI runs make test-soak.
SOAKS := ^(TestPlansHoldWithoutFreshStatistics|TestExportStreamsAMillionOrders|TestImportNeverStopsTheShopSoak)$$
# The measurements time what the plans tests prove index-backed, at a size
# no suite should seed (a million orders: a minute a database): make
# measure-search runs them and reports the times; no suite does.
MEASURES := ^(TestOrderSearchAtAMillion)$$

.PHONY: test
test: ## gofmt check, templ and client freshness checks, go vet, staticcheck, go test -race (the browser tests and the one-goroutine grinders without -race; the soak tests are test-soak's)
	@echo "== gofmt"; out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "== templ freshness"; $(GO) tool templ generate >/dev/null 2>&1 || $(GO) tool templ generate; \
	  stale=$$(git status --porcelain -- '*_templ.go'); if [ -n "$$stale" ]; then echo "generated templ files are stale or uncommitted:"; echo "$$stale"; exit 1; fi
	@echo "== client freshness"; $(GO) tool oapi-codegen -config web/client/petstoreapi/oapi-codegen.yaml web/openapi/openapi.yaml; \
	  stale=$$(git status --porcelain -- web/client/petstoreapi); if [ -n "$$stale" ]; then echo "the generated API client is stale or uncommitted (make generate):"; echo "$$stale"; exit 1; fi
	@echo "== go vet"; $(GO) vet ./...
	@echo "== staticcheck"; $(MAKE) --no-print-directory staticcheck
	@echo "== go test -race"; $(GO) test $(RACE) $(PARALLEL) -count=1 -timeout 20m -skip '$(NORACE)|$(BROWSERS)|$(SOAKS)|$(MEASURES)' ./...
	@echo "== go test, the browser tests and the one-goroutine grinders (without -race: chromium, the sweeps, the refused bodies, the search plans, a large migration, photo sizes)"; \
	  $(GO) test $(PARALLEL) -count=1 -timeout 10m -run '$(NORACE)|$(BROWSERS)' $(NORACE_PKGS) $(BROWSER_PKGS)
	@shots=cmd/petstore/testdata/screenshots; if [ -d $$shots ]; then \
	  echo "== screenshots of the browser tests in $$shots/:"; ls $$shots | sed 's/^/   /'; fi

.PHONY: test-soak
test-soak: ## the soak tests (50,000 orders, a million-row export; PostgreSQL: PETSTORE_TEST_POSTGRES_URL; an import beside orders on SQLite)
	$(GO) test -count=1 -timeout 10m -run '$(SOAKS)' -v ./db/ ./cmd/petstore/ ./handlers/api/

.PHONY: measure-search
measure-search: ## time the console's orders search at a million orders on SQLite and PostgreSQL (PETSTORE_TEST_POSTGRES_URL; about 3 min)
	$(GO) test -count=1 -timeout 20m -run '$(MEASURES)' -v ./db/

# The app reads the time from one clock that tests pin relative to the real
# present; PETSTORE_TEST_CLOCK_OFFSET moves every test clock, so this run
# shows that no test depends on today's date. No -race: it repeats make
# test's tests and is meant to be quick. -short leaves out what no test
# clock reaches: the tests that run the built binary as a subprocess on the
# real clock (kills, restarts, the CLI against a running server) and one
# that waits out a real 10 s timeout; make test has just run them. It runs
# only the packages whose tests import petstore/db/dbtest (FUTURE_PKGS):
# dbtest's clock (dbtest.Present) is the one thing the offset moves, so a
# package whose tests never reach it (the views, web, web/photo, the bench's
# harness, ...) runs exactly as in make test and could show nothing here.
FUTURE_PKGS = $(shell $(GO) list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... | awk '$$1 ~ /\.test$$/ && / petstore\/db\/dbtest( |$$)/ {sub(/\.test$$/, "", $$1); print $$1}')
.PHONY: test-future
test-future: ## go test -short, with every test clock one year ahead (PETSTORE_TEST_CLOCK_OFFSET=8760h), of the packages whose tests use the test clock
	@pkgs='$(FUTURE_PKGS)'; if [ -z "$$pkgs" ]; then echo "test-future: go list found no package using petstore/db/dbtest"; exit 1; fi; \
	  echo "PETSTORE_TEST_CLOCK_OFFSET=8760h $(GO) test $(PARALLEL) -short -count=1 -timeout 20m -skip '$(SOAKS)|$(MEASURES)' $$pkgs"; \
	  PETSTORE_TEST_CLOCK_OFFSET=8760h $(GO) test $(PARALLEL) -short -count=1 -timeout 20m -skip '$(SOAKS)|$(MEASURES)' $$pkgs

# staticcheck builds from its own module (.tools): goose pins a golang.org/x/exp
# version the module proxy refuses, which staticcheck's imports would pull in here.
STATICCHECK := bin/staticcheck
$(STATICCHECK): .tools/go.mod .tools/go.sum
	$(GO) -C .tools build -o ../$(STATICCHECK) honnef.co/go/tools/cmd/staticcheck

.PHONY: staticcheck
staticcheck: $(STATICCHECK) ## run staticcheck (honnef.co/go/tools) over the module
	./$(STATICCHECK) ./...

# The OpenAPI document's linters, Spectral (spectral:oas) and Redocly
# (recommended), from npm at the versions .tools/openapi-lint/package-lock.json
# pins; any warning fails. Installed by npm ci when node_modules is missing or
# older than the pins. Not in make test, which needs no Node.js: CI runs both.
OPENAPI_LINT := .tools/openapi-lint
OPENAPI_DOC  := web/openapi/openapi.yaml
$(OPENAPI_LINT)/node_modules/.package-lock.json: $(OPENAPI_LINT)/package.json $(OPENAPI_LINT)/package-lock.json
	@command -v npm >/dev/null || { echo "lint-openapi needs Node.js and npm"; exit 1; }
	cd $(OPENAPI_LINT) && npm ci --no-audit --no-fund --ignore-scripts --prefer-offline
	@touch $@

.PHONY: lint-openapi
lint-openapi: $(OPENAPI_LINT)/node_modules/.package-lock.json ## lint the OpenAPI document with Spectral and Redocly (npm); any warning fails
	$(OPENAPI_LINT)/node_modules/.bin/spectral lint --ruleset $(OPENAPI_LINT)/.spectral.yaml --fail-severity=warn $(OPENAPI_DOC)
	REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(OPENAPI_LINT)/node_modules/.bin/redocly lint --config $(OPENAPI_LINT)/redocly.yaml --lint-config=error $(OPENAPI_DOC)

.PHONY: bench
bench: ## load-test the real binary on SQLite and PostgreSQL (~3 min); BENCH_FLAGS="-duration 5s" to change it
	$(GO) run ./cmd/petstore-bench $(BENCH_FLAGS)

.PHONY: migrate
migrate: ## apply database migrations to DATABASE_URL (default var/petstore.db)
	$(GO) run ./cmd/petstore migrate

.PHONY: vendor
vendor: ## re-fetch the pinned front-end packages into static/vendor, and axe-core for the browser tests (npm)
	bash static/vendor.sh
	bash cmd/petstore/testdata/axe/vendor.sh

.PHONY: clean
clean: ## remove build output and the local database
	rm -rf bin var
