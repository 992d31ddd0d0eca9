# burstbuffer — set-up, main job, tests.
# SimGrid comes from Debian's python3-simgrid (SimGrid 3.32, prebuilt for /usr/bin/python3),
# so the virtual environment is made from the system Python with --system-site-packages.
PY_SYS ?= /usr/bin/python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# libsimgrid-dev, pybind11-dev, g++: the simulator's compiled bridge (built on first use; without them the
# simulator runs its actor core, docs/simulator-core.md); libzmq3-dev: its compiled ZeroMQ link (without it,
# pyzmq's; burstbuffer/simulator/transport.py)
APT_PACKAGES := python3-simgrid python3-venv python3-dev libsimgrid-dev pybind11-dev libzmq3-dev g++
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup system-deps run test test-fast test-asan docs bench clean constraints docker-check slurm-check study-table kopanski-table claim-pages

system-deps:
	@if ! $(PY_SYS) -c 'import simgrid, venv, ensurepip' >/dev/null 2>&1 \
	    || [ ! -f /usr/include/simgrid/s4u.hpp ] || [ ! -f /usr/include/pybind11/pybind11.h ] \
	    || [ ! -f /usr/include/zmq.h ] \
	    || ! command -v c++ >/dev/null 2>&1; then \
	  echo "installing Debian packages: $(APT_PACKAGES)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	fi

# setup.py and the C sources: installing builds the policies' C engines in place (docs/installation.md)
$(VENV)/.installed: setup.cfg setup.py pyproject.toml constraints.txt $(wildcard burstbuffer/schedulers/native/*.c) | system-deps
	$(PY_SYS) -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	# pybatsim 3.2.1 (Batsim's own Python client, used by the tests as "a scheduler nobody here wrote")
	# pins pyzmq<23, which does not build for Python 3.11: install it without its pins.
	$(PY) -m pip install -q --no-deps pybatsim==3.2.1
	# the simulator's compiled bridge (docs/simulator-core.md), built now rather than by the first simulation;
	# without a compiler or headers the simulator runs its actor core, so a failure here is not an error
	-$(PY) -c 'from burstbuffer.simulator import _bridge; _bridge.load()' \
	  || echo "note: the simulator's bridge could not be built; the simulator will use its actor core"
	# its compiled ZeroMQ link (burstbuffer/simulator/transport.py), likewise; without it pyzmq's runs
	-$(PY) -c 'from burstbuffer.simulator import transport; transport.load_native()' \
	  || echo "note: the simulator's compiled ZeroMQ link could not be built; it will use pyzmq"
	# the energy module (simulate -E, docs/batsim.md), built now for the same reason; without it only -E fails
	-$(PY) -c 'from burstbuffer.simulator import energy; energy.load_native()' \
	  || echo "note: the simulator's energy module could not be built; simulate -E will be refused"
	touch $@

setup: system-deps $(VENV)/.installed
	@# the package's bytecode, compiled ahead: where PYTHONDONTWRITEBYTECODE is set, every simulator, worker and
	@# CLI process would otherwise compile the package's sources again (about a fifth of a small run's CPU)
	@$(PY) -m compileall -q burstbuffer >/dev/null

run: setup
	$(VENV)/bin/burstbuffer run

# The whole suite (CI's and the README's test command), with the Hypothesis profile `ci` (tests/conftest.py),
# in TEST_WORKERS processes (pytest-xdist; a module's tests stay together). Default 3 on the 2-core machine:
# many tests wait on a simulator, a real Batsim or a socket, and a third worker fills those waits
# (docs/testing.md: 2 workers leave a fifth of the 2 cores idle).
TEST_WORKERS ?= 3
test: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not asan"

# The edit-test loop: every module not marked slow, batsim, dask or docker (setup.cfg [tool:pytest] markers),
# with the Hypothesis profile `dev` (a tenth of the examples). docs/testing.md.
FAST_MARKERS := not slow and not batsim and not dask and not docker and not asan
test-fast: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-dev} $(PY) -m pytest -q -m "$(FAST_MARKERS)" --durations=10

# The compiled modules under AddressSanitizer (tests/test_asan.py, docs/testing.md): the simulator's bridge in the
# in-process link, its energy and ZeroMQ modules, the policies' C engines, built with BURSTBUFFER_SANITIZE=address
# into a cache folder of their own (minutes the first time), run with the sanitizer's runtime preloaded.
test-asan: setup
	$(PY) -m pytest -q -m asan tests/test_asan.py

# The documentation site (docs/, Sphinx + MyST) into docs/_build/html; every warning is an error (-W), a broken
# link or cross-reference included. Installs the `docs` extra (pinned by constraints.txt) on first use.
$(VENV)/.docs-installed: $(VENV)/.installed setup.cfg constraints.txt
	$(PY) -m pip install -q -c constraints.txt -e '.[docs]'
	touch $@

docs: setup $(VENV)/.docs-installed
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

# A study's verdict table for its docs page (docs/verdicts.md): `reproduce --study STUDY STUDY_ARGS --placebo` (nice'd;
# finished runs in STUDY_OUT/STUDY-table are kept, so a second call only re-judges), the real verdicts judged again on
# the same runs (--report-only), then those beside the placebo and reversed ones into docs/studies/verdicts/STUDY.inc
# (Markdown), which the study's page includes.
STUDY_OUT ?= out
study-table: setup
	nice -n 10 $(PY) -m burstbuffer reproduce --study $(STUDY) $(STUDY_ARGS) --placebo --output $(STUDY_OUT)/$(STUDY)-table -q
	$(PY) -m burstbuffer reproduce --study $(STUDY) $(STUDY_ARGS) --report-only --output $(STUDY_OUT)/$(STUDY)-table -q
	$(PY) benchmarks/verdict_table.py $(STUDY_OUT)/$(STUDY)-table --doc > docs/studies/verdicts/$(STUDY).inc

# Each study's claims as its source states them (docs/studies/claims/NAME.inc, included by the study pages):
# generated from the claims tables; tests/test_claims_sources.py fails when they differ.
claim-pages:
	$(PY) -m burstbuffer.reproduce.claim_pages docs/studies/claims

# The paper's table at the paper's scale: the whole KTH trace (28,453 jobs) and its 16 three-week parts, the eight
# policies of §4.2 (hours of CPU: one whole-trace run of a policy takes minutes, plan-1 to plan-3 the longest).
kopanski-table:
	$(MAKE) study-table STUDY=kopanski2021 STUDY_ARGS="--jobs all --parts --gantt-jobs 0"

clean:
	rm -rf $(VENV) *.egg-info out docs/_build

# constraints.txt: the versions `make setup` and docker/Dockerfile install (pip -c); regenerate after a
# change of setup.cfg's requirements, from a venv made by `make setup`.
constraints: setup
	( echo "# Versions installed by make setup and docker/Dockerfile (pip -c). Regenerate: make constraints"; \
	  $(PY) -m pip freeze --local --exclude-editable | grep -v '^burstbuffer' ) > constraints.txt

# The containers beside a real Batsim, run for real (docs/deployment.md §2): images built without a registry,
# the bundled 1000 jobs through docker/compose.yaml, the scheduler's jobs.csv compared with `burstbuffer run`.
# Skips (exit 0, with a message) without a local Batsim 4.2.1 build or a container engine.
docker-check: setup
	$(PY) docker/check.py

# `burstbuffer sweep --cluster slurm` on a real single-node Slurm (Debian's slurm-wlm + munge, configured in a
# scratch folder), its campaign compared with the local engine's (docs/deployment.md §4). Skips (exit 0, with a
# message) when the Slurm packages cannot be installed.
slurm-check: setup
	$(PY) slurm/check.py
