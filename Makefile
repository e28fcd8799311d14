# make test: set up .venv (CPU torch if missing) and run the test suite.
# make demo: same setup, then run the seed-000 walkthrough (storage, LibSVM, training).
# make docs: same setup, then build the documentation site (docs/_build/html), warnings as errors,
#   running the gallery's examples (examples/gallery/); python tools/screenshot_docs.py then
#   takes 1280x2000 screenshots of it and checks that no code block is cut.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
PYTEST_ARGS ?=

# make test-native-off: the suite again with the native kernels switched off (their torch paths).
# make test-compat: the suite on the oldest torch the package admits and the newest PyPI has.
TORCH_MIN ?= 2.4.1
TORCH_NEW ?= 2.15.0

.PHONY: setup test test-native-off test-compat test-dist demo docs stype-table clean

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
	$(BIN)/pip install -q -e ".[test,docs]"

test: setup
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS)
	$(BIN)/python tools/gen_stype_table.py --check

test-native-off: setup
	SPARSENET_NATIVE_ROWS=0 SPARSENET_LIBSVM_KERNEL=python OMP_NUM_THREADS=1 \
	  $(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS)

# each torch in a venv of its own (PyPI's Linux wheels of these releases are CUDA builds; the
# tests run on the CPU); PIP_CONSTRAINT=/dev/null lifts a machine-wide cap on the torch version
test-compat:
	@for v in $(TORCH_MIN) $(TORCH_NEW); do \
	  echo "== torch $$v"; \
	  test -x .venv-torch-$$v/bin/python || $(PYTHON) -m venv .venv-torch-$$v || exit 1; \
	  PIP_CONSTRAINT=/dev/null .venv-torch-$$v/bin/pip install -q "torch==$$v" || exit 1; \
	  PIP_CONSTRAINT=/dev/null .venv-torch-$$v/bin/pip install -q -e ".[test]" || exit 1; \
	  OMP_NUM_THREADS=1 .venv-torch-$$v/bin/python -m pytest -n 2 -q $(PYTEST_ARGS) || exit 1; \
	done

# make test-dist: MXNet's nightly distributed checks (tests/kvstore/test_dist_nightly_mirror.py)
# at 7 gloo ranks, as MXNet's CI runs them; with MXNET_NIGHTLY=<MXNet's tests/nightly folder>
# also MXNet 1.9.1's own dist_sync_kvstore.py, its nine CI invocations, through the import alias.
DIST_WORLDS ?= 7
MXNET_NIGHTLY ?=

test-dist: setup
	SPARSENET_DIST_NIGHTLY_WORLDS=$(DIST_WORLDS) OMP_NUM_THREADS=1 \
	  $(BIN)/python -m pytest -q $(PYTEST_ARGS) tests/kvstore/test_dist_nightly_mirror.py
	@if [ -n "$(MXNET_NIGHTLY)" ]; then \
	  PYTHON=$(BIN)/python tools/run_mxnet_dist_nightly.sh "$(MXNET_NIGHTLY)" -n $(DIST_WORLDS); \
	fi

demo: setup
	$(BIN)/python examples/demo.py

docs: setup
	MPLBACKEND=Agg OMP_NUM_THREADS=1 $(BIN)/python -m sphinx -b html -W --keep-going -j 2 \
	  docs docs/_build/html

stype-table: setup
	$(BIN)/python tools/gen_stype_table.py

clean:
	rm -rf $(VENV) .venv-torch-* build *.egg-info .pytest_cache demo_output docs/_build \
	  docs/auto_examples docs/sg_execution_times.rst docs/api/generated/*.rst
