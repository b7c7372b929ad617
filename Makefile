# Two commands on a fresh machine (Python 3.11, make, the package registries):
#   make demo   set up, ingest examples/, show the graph, rank cited evidence for one question
#   make test   set up, run the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
STORE  ?= .stratagraph/demo
QUESTION ?= How much did Riverton budget for Public Safety in FY2025, and what drove the increase?
STRATEGY ?= default

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
	$(BIN)/stratagraph --store $(STORE) ask "$(QUESTION)" --strategy $(STRATEGY) --retrieve-only --k 5

test: venv
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .stratagraph .pytest_cache
