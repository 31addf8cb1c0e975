PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

test: $(STAMP)
	$(BIN)/ruff check ocm tests bench scripts
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check ocm tests bench scripts

clean:
	rm -rf $(VENV) .pytest_cache
