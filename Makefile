# The two entry points: `make bench` sweeps the MXNet registry, `make test` runs the tests
# (`make bench-torch` sweeps PyTorch's, `make compare` compares mx.nd, mx.np and torch).
# Both create the virtual environment in .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
OUT ?= results
CTX ?= cpu
ARGS ?=

.PHONY: bench bench-torch compare test test-slow lint venv clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,mxnet,torch,jax,plot,xlsx,gpu,postgres]'
	touch $(STAMP)

venv: $(STAMP)

bench: $(STAMP)
	mkdir -p $(OUT)
	$(PY) opperf.py --ctx '$(CTX)' --output-file '$(OUT)/mxnet_$(CTX).md' \
		--json-file '$(OUT)/mxnet_$(CTX).json' $(ARGS)

bench-torch: $(STAMP)
	mkdir -p $(OUT)
	$(PY) opperf.py --framework torch --ctx '$(CTX)' --output-file '$(OUT)/torch_$(CTX).md' \
		--json-file '$(OUT)/torch_$(CTX).json' $(ARGS)

compare: $(STAMP)
	mkdir -p $(OUT)
	$(PY) opperf.py compare mx.nd,mx.np,torch --ctx '$(CTX)' --output-file '$(OUT)/compare_$(CTX).md' $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" $(ARGS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) $(OUT)
