# The two commands the README opens with: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all bench clean fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

demo: $(VENV)/.installed-base
	$(BIN)/python examples/seeds.py

# one worker per core, each test file on one worker (files share compiled functions); one BLAS
# thread per worker, so that the workers do not fight over the cores
test: $(VENV)/.installed-test
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n auto --dist loadfile

# The suite on every CPython 3.10-3.13 found (pyenv's or on PATH), each in its own venv.
test-all:
	@for v in 3.10 3.11 3.12 3.13; do \
	  py=$$(ls -d $$HOME/.pyenv/versions/$$v.*/bin/python 2>/dev/null | tail -n 1); \
	  [ -n "$$py" ] || py=$$(command -v python$$v); \
	  if [ -z "$$py" ] || ! "$$py" -c "" 2>/dev/null; then echo "== python$$v: not found, skipped"; continue; fi; \
	  echo "== python$$v ($$py)"; \
	  $(MAKE) --no-print-directory test PYTHON=$$py VENV=.venv-$$v || exit 1; \
	done

bench: $(VENV)/.installed-test
	$(BIN)/python -m pip install --quiet --extra-index-url https://download.pytorch.org/whl/cpu -e ".[bench]"  # the CPU build of torch, not gigabytes of CUDA
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python benchmarks/run.py

# The adversarial fuzzer: N random programs (SEED=... to repeat a run), reproducers in fuzz-out/.
fuzz: $(VENV)/.installed-test
	$(BIN)/python -m fuzz --n $(or $(N),500) $(if $(SEED),--seed $(SEED)) --out fuzz-out

clean:
	rm -rf $(VENV) .venv-3.* build *.egg-info
