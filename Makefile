# toolkit: the two commands a fresh machine needs are `make demo` and `make test`.
#
# Every target that runs Python depends on `venv`, which creates .venv and installs the
# project (editable, with the `dev` extra) only when pyproject.toml changed since the last
# install: the stamp file's name carries a hash of pyproject.toml.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
VPY := $(VENV)/bin/python
PYPROJECT_HASH := $(shell sha256sum pyproject.toml | cut -c1-16)
STAMP := $(VENV)/.stamp-$(PYPROJECT_HASH)
# Three workers on two cores: much of the suite waits on servers and subprocesses, so a
# third worker fills the gaps (pytest-xdist; one file's tests stay on one worker, so its
# module-scoped servers start once). `make test PYTEST_ARGS=` runs it serially.
PYTEST_ARGS ?= --durations=30 -n 3 --dist loadfile

.PHONY: help venv services test demo lint bench bench-scale clean distclean

help:
	@echo "make demo       install, render project_template into ./demo, migrate, serve on :8080"
	@echo "make test       install, start PostgreSQL/Redis/RabbitMQ if stopped, ruff check, pytest"
	@echo "make venv       create .venv and install the project with the dev extra"
	@echo "make services   start the local PostgreSQL, Redis and RabbitMQ servers if stopped;"
	@echo "                install the Debian packages the tests need (scripts/system-packages.sh)"
	@echo "                and build pgvector into PostgreSQL (scripts/pgvector.sh) if missing;"
	@echo "                install the test OpenID provider's node packages (scripts/node-packages.sh)"
	@echo "make lint       ruff check and ruff format --check"
	@echo "make bench      run the benchmarks (python -m bench.run)"
	@echo "make bench-scale  the full scale curves (python -m bench.run --scale)"
	@echo "make clean      remove build output, caches and ./demo (distclean: also .venv)"

venv: $(STAMP)

$(STAMP):
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	@rm -f $(VENV)/.stamp-*
	@touch $@

services:
	@scripts/services.sh
	@scripts/system-packages.sh
	@scripts/pgvector.sh
	@scripts/node-packages.sh

# Lint and tests both run, so one CI log shows every failure; either one fails the target.
# pytest's exit code 5 ("no tests collected") is non-zero, so it fails too, with a reason.
test: venv services
	@lint=0; tests=0; \
	echo "$(VENV)/bin/ruff check ."; $(VENV)/bin/ruff check . || lint=$$?; \
	echo "$(VPY) -m pytest $(PYTEST_ARGS)"; $(VPY) -m pytest $(PYTEST_ARGS) || tests=$$?; \
	if [ "$$tests" -eq 5 ]; then echo "make test: pytest ran no test; that is a failure" >&2; fi; \
	if [ "$$lint" -ne 0 ]; then echo "make test: ruff check failed" >&2; fi; \
	if [ "$$tests" -ne 0 ]; then exit "$$tests"; fi; \
	exit "$$lint"

demo: venv
	@scripts/demo.sh

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: venv
	$(VPY) -m bench.run

bench-scale: venv
	$(VPY) -m bench.run --scale

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache demo
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
