PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# `make demo` installs ocm alone (no test tools); `make test` adds the test extras.
DEMO_STAMP := $(VENV)/.demo-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test e2e e2e-ui lint bench clean install-check
# ocm needs Python >= 3.11: a PY that is older stops here with one line, before any venv is
# made; a .venv left by an older Python (or a half-made one) is made again, not reused.
NEWER = import sys; sys.exit(sys.version_info < (3, 11))
define VENV_PYTHON
	@$(PY) -c '$(NEWER)' 2>/dev/null || { echo "make: ocm needs Python >= 3.11; PY=$(PY) is $$($(PY) -V 2>/dev/null || echo missing) (try PY=python3.11)" >&2; exit 1; }
	@if [ -e $(VENV) ] && ! $(BIN)/python -c '$(NEWER)' 2>/dev/null; then echo "make: $(VENV) is not a Python >= 3.11 venv; making it again"; rm -rf $(VENV); fi
	$(PY) -m venv $(VENV)
endef

# No `pip install --upgrade pip`: the venv's own pip (Python 3.11's is 23.2) installs an
# editable pyproject; fetching a newer one cost every fresh clone (CI) a download and install.
$(STAMP): pyproject.toml
	$(VENV_PYTHON)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	$(VENV_PYTHON)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	rm -f $(VENV)/.demo-* && touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python scripts/demo.py

# Byte code for ocm/ and bench/ first: the suite starts hundreds of `ocm`/`ocm-hook` processes,
# and with PYTHONDONTWRITEBYTECODE set each would compile ocm/ again. mypy runs beside pytest
# (its report follows pytest's); the target fails if either does.
test: $(STAMP)
	$(BIN)/ruff check ocm tests tests_e2e bench scripts
	$(BIN)/python -m compileall -q -j 0 ocm bench
	@$(BIN)/mypy > $(VENV)/mypy.out 2>&1 & types=$$!; \
	echo "$(BIN)/python -m pytest -n auto (and $(BIN)/mypy beside it)"; \
	$(BIN)/python -m pytest -n auto; tests=$$?; \
	wait $$types; typed=$$?; echo "$(BIN)/mypy:"; cat $(VENV)/mypy.out; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# The real host programs (npm, cached) against a mock model on 127.0.0.1: tests_e2e/run.py.
# HOSTS=latest: each host's newest version on npm; HOSTS=claude-code,copilot@latest: some.
e2e: $(STAMP) e2e-ui
	$(BIN)/python -m tests_e2e.run --hosts '$(or $(HOSTS),pinned)' $(E2E_ARGS)

# ocm installed once as a tool (pipx install of this clone) in a temporary HOME: needs the
# package index; scripts/tool_install_check.py says what it checks.
install-check:
	$(PY) scripts/tool_install_check.py

# `ocm ui` in headless Debian chromium driven by Playwright (tests_e2e/ui_run.py).
e2e-ui: $(STAMP)
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python -m pip install -q -e '.[test,e2e]'
	$(BIN)/python -m tests_e2e.ui_run $(E2E_UI_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check ocm tests tests_e2e bench scripts
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache
