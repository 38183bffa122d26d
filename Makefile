# Quick start: `make demo`, `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench soak lint browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' --config-settings editable_mode=compat
	$(PY) -m compileall -q companion vision hardware web >/dev/null
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/twilight-companion demo

browser:
	@scripts/ensure-chromium

lint: $(STAMP)
	$(VENV)/bin/ruff check companion vision hardware web tests bench

test: $(STAMP) browser lint
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m compileall -q companion vision hardware web bench >/dev/null
	$(PY) -m bench

soak: $(STAMP) browser
	$(PY) -m bench.soak

clean:
	rm -rf $(VENV) .pytest_cache
