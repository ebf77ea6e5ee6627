# Two commands set up everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_DIR ?= .stackling
PORT ?= 8900
PYTEST_ARGS ?=

.PHONY: install run test lint bench clean browser screenshots dataplane-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/python -m compileall -q stackling
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	@$(BIN)/python -m compileall -q stackling
	$(BIN)/stackling serve --data-dir $(DATA_DIR) --port $(PORT)

test: $(STAMP) browser dataplane-deps
	$(BIN)/ruff check stackling tests bench
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# The console's browser tests drive Debian's chromium (Playwright never downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The dataplane's tools (dataplane.driver netns): Debian's busybox, dnsmasq, nftables, dropbear.
dataplane-deps:
	@for t in busybox dnsmasq nft dropbear; do command -v $$t >/dev/null 2>&1 || \
	  [ -x /usr/sbin/$$t ] || missing=1; done; [ -z "$$missing" ] || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    busybox-static dnsmasq-base nftables dropbear-bin >/dev/null; }

# Regenerates the console screenshots in docs/ from a fresh demo cloud.
screenshots: $(STAMP) browser
	$(BIN)/python -m tests.browser.screenshots docs

lint: $(STAMP)
	$(BIN)/ruff check stackling tests bench
	$(BIN)/lint-imports --no-cache --no-logo

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(DATA_DIR) build *.egg-info
