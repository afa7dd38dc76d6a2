# ufsbench developer targets. `make test` is the test command README gives and CI runs.
PYTHON ?= python
PAPER ?= all
# THIN=3 keeps every 3rd grid value (+ the default): the committed reference run (README).
THIN ?= 1
JOBS ?= -1
# LAUNCHER=dask SCHEDULER=tcp://host:8786 runs the fits on a dask.distributed cluster.
LAUNCHER ?= local
SCHEDULER ?=
# METHODS="mcfs" reruns only those methods' sweeps (e.g. after a method's revision); the
# reports still cover every method in the store. METHODS=released runs the as-released rows
# (each proposed method at its authors' code's settings), which run only when named.
METHODS ?=
BENCH ?=

.PHONY: install test test-slow reproduce-tables bench lint typecheck smoke-all

install:
	$(PYTHON) -m pip install -e ".[dev]"

test:
	$(PYTHON) -m pytest -q --durations=15

test-slow:
	$(PYTHON) -m pytest -q -m slow

reproduce-tables:
	$(PYTHON) scripts/reproduce_tables.py --paper $(PAPER) --thin $(THIN) --n-jobs $(JOBS) \
		--launcher $(LAUNCHER) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
		$(if $(METHODS),--methods $(METHODS))

# `make bench` = one quick pass (each benchmark once, results not saved) of the asv suite in
# benchmarks/ against this checkout, in this Python: no build, no network (docs/performance.md).
# BENCH='fits|sweep' keeps the benchmarks whose names match; one BLAS thread unless set.
# Comparing commits: `asv continuous main HEAD` (builds each commit into .asv/env).
bench:
	test -f $${HOME}/.asv-machine.json || $(PYTHON) -m asv machine --yes > /dev/null
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} \
		$(PYTHON) -m asv run --quick --python=same --show-stderr $(if $(BENCH),--bench '$(BENCH)')

lint:
	$(PYTHON) -m ruff check src tests scripts benchmarks docs/_scripts

typecheck:
	$(PYTHON) -m mypy

# Every method on every data set present, at its grid's extreme values and extreme feature counts:
# each fit must return exactly the requested number of distinct features and no NaN score. Each
# fit runs at most 2 outer iterations; add ARGS="--max-iter 0" for full fits (hours).
smoke-all:
	$(PYTHON) -m ufsbench.cli regress --smoke-all --n-jobs $(JOBS) --report results/smoke/smoke-all.md $(ARGS)

# The documentation site (mkdocs.yml; needs the docs extra: pip install -e ".[docs]"), built with
# warnings as errors into build/site. The pages generated from the code are written at build time.
# NO_MKDOCS_2_WARNING / DISABLE_MKDOCS_2_WARNING silence the theme's and a plugin's notices about
# MkDocs' future (not warnings about this site).
.PHONY: docs docs-serve wheel-check
MKDOCS = NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(PYTHON) -m mkdocs
docs:
	$(MKDOCS) build --strict

docs-serve:
	$(MKDOCS) serve

# Build the wheel, install it into a fresh venv and run the main job from a temp directory.
wheel-check:
	PYTHON=$(PYTHON) .ci/wheel-check
