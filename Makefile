# The commands a newcomer uses. `make run` and `make test` install what is missing, configure and build first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test run clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The main job. Until the tree-vs-ring comparison exists, it shows the default cluster.
run: build
	$(BUILD_DIR)/bin/treering topo show dgx-h100 --nodes 16

clean:
	rm -rf $(BUILD_DIR)
