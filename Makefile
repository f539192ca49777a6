# MedCite: `make run` serves the product, `make test` runs the checks.
# Both install everything they need into .venv first (offline-friendly, idempotent).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8000

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Keep compiled bytecode (and pytest's rewritten test modules) between runs even where the environment
# says not to: without it every test process spends ~7 s recompiling the test modules.
unexport PYTHONDONTWRITEBYTECODE

# Packages mypy checks; `research` joins once the app exists.
TYPED  := config evidence pubmed trials chat $(if $(wildcard research/__init__.py),research)

# Test processes: pytest-xdist spreads the test files over them (each has its own test database);
# `auto` is one per core. TEST_WORKERS=0 runs the suite in this process, serially.
TEST_WORKERS ?= auto
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

.PHONY: run test test-fast smoke install lint typecheck format worker worker-embedding browser clean-db help verifier

help:
	@echo "make run     install, start embedded PostgreSQL, migrate, seed and serve on http://$(HOST):$(PORT)"
	@echo "make test    install and run the checks (ruff + mypy + pytest, in parallel)"
	@echo "make test-fast  ruff and the tests without browser, Celery worker or production-stack tests (about 3 min on 2 cores)"
	@echo "make worker  start a Celery worker (needs CELERY_BROKER_URL)"
	@echo "make worker-embedding  a worker for EMBEDDING_QUEUE only, e.g. with EMBEDDING_DEVICE=cuda (README \"Scaling out\")"
	@echo "make verifier  retrain the claim verifier from ../shared/data (about 50 min on 2 cores)"
	@echo "make smoke   only the production-stack test (gunicorn+uvicorn, Celery worker and beat; part of make test)"

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first and pinned: the CPU build; an unpinned resolution pulls GBs of CUDA wheels.
	$(PIP) install --quiet torch==2.13.0
	# Every version pinned (constraints.txt): the models were built and measured with these.
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_evidence
	$(PY) manage.py ensure_demo_user --url http://$(HOST):$(PORT)
	$(PY) manage.py runserver $(HOST):$(PORT)

worker: install
	$(VENV)/bin/celery -A config worker --loglevel=INFO

# Only the bulk embedding tasks (ingestions, file loads, missing vectors): every process must name the same queue.
worker-embedding: install
	@test -n "$$EMBEDDING_QUEUE" -a "$$EMBEDDING_QUEUE" != celery || { \
		echo "Set EMBEDDING_QUEUE (e.g. embedding) for this worker and for the web server and beat alike."; exit 1; }
	$(VENV)/bin/celery -A config worker -Q "$$EMBEDDING_QUEUE" --concurrency=1 --loglevel=INFO

test: install browser typecheck
	$(VENV)/bin/ruff check .
	$(PYTEST) $(PYTEST_ARGS)

# Quick feedback while working: no Chromium, no Celery worker, no production stack, no mypy.
test-fast: install
	$(VENV)/bin/ruff check .
	$(PYTEST) -m "not browser and not celery" $(PYTEST_ARGS)

# The production stack as real processes (tests/config/test_production_stack.py); `make test` runs it too.
smoke: install
	$(PY) -m pytest tests/config/test_production_stack.py -q

lint: install
	$(VENV)/bin/ruff check .

typecheck: install
	$(VENV)/bin/mypy $(TYPED)

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean-db:
	rm -rf var/pgdata

# Rebuild the claim verifier from ../shared/data (README "Rebuilding the claim verifier"): about 65 minutes
# on 2 cores. Stages: NLI pretraining, claim-set fine-tuning, int8 ONNX export with calibration.
verifier: install
	$(PY) -m training.verifier pretrain
	$(PY) -m training.verifier finetune
	$(PY) -m training.verifier export
