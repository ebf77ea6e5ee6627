# Two commands set up everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_DIR ?= .stackling
PORT ?= 8900
PYTEST_ARGS ?=

.PHONY: install run test lint bench clean

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

test: $(STAMP)
	$(BIN)/ruff check stackling tests bench
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check stackling tests bench

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(DATA_DIR) build *.egg-info
