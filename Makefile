# make test: set up .venv (CPU torch if missing) and run the test suite.
# make demo: same setup, then run the seed-000 walkthrough (storage, LibSVM, training).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
PYTEST_ARGS ?=

.PHONY: setup test demo stype-table clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch: keep an installed one; else the CPU wheel, from pip's local wheel folder when it has
# one (an unpinned torch from PyPI would be a multi-GB CUDA build), or from the CPU index.
setup: $(BIN)/python
	@$(BIN)/python -c "import torch" 2>/dev/null || { \
	  if $(BIN)/pip download -q --no-deps --no-index -d $(VENV)/.torch-probe \
	       "torch==$(TORCH_VERSION)" >/dev/null 2>&1; then \
	    rm -rf $(VENV)/.torch-probe; $(BIN)/pip install -q "torch==$(TORCH_VERSION)"; \
	  else \
	    $(BIN)/pip install -q "torch==$(TORCH_VERSION)+cpu" --index-url $(TORCH_CPU_INDEX); \
	  fi; }
	$(BIN)/pip install -q -e ".[test]"

test: setup
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS)
	$(BIN)/python tools/gen_stype_table.py --check

demo: setup
	$(BIN)/python examples/demo.py

stype-table: setup
	$(BIN)/python tools/gen_stype_table.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache demo_output
