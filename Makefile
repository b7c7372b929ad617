# Two commands on a fresh machine (Python 3.11, make, the package registries):
#   make demo   set up, ingest examples/, show the graph, answer one question with citations (no LLM needed)
#   make test   set up, run the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
STORE  ?= .stratagraph/demo
QUESTION ?= What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?
STRATEGY ?= auto

.PHONY: demo test venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $(STAMP)

venv: $(STAMP)

demo: venv
	$(BIN)/stratagraph --store $(STORE) ingest examples
	$(BIN)/stratagraph --store $(STORE) stats
	$(BIN)/stratagraph --store $(STORE) ask "$(QUESTION)" --strategy $(STRATEGY)

test: venv
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .stratagraph .pytest_cache
