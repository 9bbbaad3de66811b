# The commands a newcomer uses. `make run` and `make test` install what is missing, configure and build first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test run bench clean

all: build

deps:
	@bash scripts/deps.sh

# Configuring again is cheap (seconds) and picks up changed flags; tests are always part of the build.
configure: deps
	cmake -S . -B $(BUILD_DIR) -DTREERING_BUILD_TESTS=ON $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j $(JOBS)

# The main job: the default cluster, then tree vs ring on it along the paper's axis (80k -> 5.12M tokens).
run: build
	$(BUILD_DIR)/bin/treering topo show dgx-h100 --nodes 16
	@echo
	$(BUILD_DIR)/bin/treering predict --cluster dgx-h100 --nodes 16 --seq-len 80k:5.12M:x4

# Speed figures (not tests): the model's configurations per second.
bench: build
	$(BUILD_DIR)/bin/bench_predict
	$(BUILD_DIR)/bin/bench_flows
	$(BUILD_DIR)/bin/bench_replay

clean:
	rm -rf $(BUILD_DIR)
