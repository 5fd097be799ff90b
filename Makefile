# Salon booking platform. `make` lists the targets.

GO ?= go
FUZZTIME ?= 30s

.PHONY: help dev test race bench fuzz lint build clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-8s %s\n", $$1, $$2}'

dev: ## run the platform locally with demo data (private PostgreSQL in ./.salon/pg)
	$(GO) run ./cmd/salon dev

test: ## run every test (needs the PostgreSQL server binaries, or TEST_DATABASE_URL, or Docker)
	$(GO) test ./...

race: ## run every test under the race detector
	$(GO) test -race ./...

bench: ## run the benchmarks (short: a few rounds each); figures in docs/BENCHMARKS.md
	$(GO) test ./booking -run '^$$' -bench . -benchtime 9x
	$(GO) test ./widget -run '^$$' -bench . -benchtime 6x
	$(GO) test ./bot -run '^$$' -bench . -benchtime 1x -bot.users 100
	$(GO) test ./panel -run '^$$' -bench . -benchtime 10x

fuzz: ## fuzz every target for FUZZTIME each (default 30s); CI runs them 20s each
	$(GO) test ./booking -run '^$$' -fuzz '^FuzzParseMoney$$' -fuzztime $(FUZZTIME)
	$(GO) test ./booking -run '^$$' -fuzz '^FuzzNormalizePhone$$' -fuzztime $(FUZZTIME)
	$(GO) test ./booking -run '^$$' -fuzz '^FuzzCleanText$$' -fuzztime $(FUZZTIME)
	$(GO) test ./importer -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./widget -run '^$$' -fuzz '^FuzzAPIBodies$$' -fuzztime $(FUZZTIME)
	$(GO) test ./widget -run '^$$' -fuzz '^FuzzPaymentNotification$$' -fuzztime $(FUZZTIME)
	$(GO) test ./bot -run '^$$' -fuzz '^FuzzUpdate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./panel -run '^$$' -fuzz '^FuzzPanelForms$$' -fuzztime $(FUZZTIME)

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	$(GO) vet ./...

build: ## build the salon binary into ./bin
	$(GO) build -o bin/salon ./cmd/salon

clean: ## remove build output and the local dev database
	rm -rf bin .salon
