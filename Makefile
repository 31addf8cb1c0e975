PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# `make demo` installs ocm alone (no test tools); `make test` adds the test extras.
DEMO_STAMP := $(VENV)/.demo-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test e2e e2e-ui lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	rm -f $(VENV)/.demo-* && touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python scripts/demo.py

test: $(STAMP)
	$(BIN)/ruff check ocm tests tests_e2e bench scripts
	$(BIN)/python -m pytest

# The real host programs (npm, cached) against a mock model on 127.0.0.1: tests_e2e/run.py.
e2e: $(STAMP) e2e-ui
	$(BIN)/python -m tests_e2e.run $(E2E_ARGS)

# `ocm ui` in headless Debian chromium driven by Playwright (tests_e2e/ui_run.py).
e2e-ui: $(STAMP)
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python -m pip install -q -e '.[test,e2e]'
	$(BIN)/python -m tests_e2e.ui_run $(E2E_UI_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check ocm tests tests_e2e bench scripts

clean:
	rm -rf $(VENV) .pytest_cache
