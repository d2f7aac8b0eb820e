MAKEFLAGS += --no-print-directory
# The README's two commands: `make demo` and `make test`. Both install any
# missing Debian packages first (scripts/install-deps.sh), then build.
BUILD ?= build
SAN_BUILD ?= build-san
CLANG_BUILD ?= build-clang
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# Where `make install` puts bin/, lib/, include/, share/ (DESTDIR stages).
PREFIX ?= /usr/local

.PHONY: all deps build demo test test-san test-clang test-tsan bench fuzz bench-redis bench-cluster bench-python redis clean install uninstall

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh scripts/demo.sh $(BUILD)/amq $(BUILD)/amq-lab

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-san: deps
	@cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMQ_SANITIZE=ON -DAMQ_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	@cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 AMQ_TEST_QUICK=1 ctest --output-on-failure -j $(JOBS)

# The same suite built by clang (the fuzzing compiler), Release.
test-clang: deps
	@CC=clang cmake -S . -B $(CLANG_BUILD) -DCMAKE_BUILD_TYPE=Release -DAMQ_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(CLANG_BUILD) -j $(JOBS)
	@cd $(CLANG_BUILD) && AMQ_TEST_QUICK=1 ctest --output-on-failure -j $(JOBS)

# The concurrent tests under ThreadSanitizer.
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMQ_TSAN=ON -DAMQ_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 AMQ_TEST_QUICK=1 ctest --output-on-failure -L threads -j $(JOBS)

bench: build
	@$(BUILD)/bench/amq_bench $(BENCH_ARGS)

# The Redis module alone: $(BUILD)/modules/redis/amq-redis.so
redis: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target amq_redis
	@echo "$(BUILD)/modules/redis/amq-redis.so"

# Module throughput vs SET/GET and bits/item; updates docs/redis.md.
bench-redis: redis
	@/usr/bin/python3 bench/redis/bench_redis.py \
	    --module $(BUILD)/modules/redis/amq-redis.so --write docs/redis.md

# Sharded cascades against BF.* on clusters of 1, 3 and 6 primaries;
# updates docs/cluster.md.
bench-cluster: build redis
	@/usr/bin/python3 bench/redis/bench_cluster.py --build $(BUILD) \
	    --module $(BUILD)/modules/redis/amq-redis.so --write docs/cluster.md

# The Python binding on NumPy arrays and str lists, as ratios to a Python
# set and numpy.isin in the same run (docs/python.md).
bench-python: build
	@AMQ_LIBRARY=$(BUILD)/libamq.so PYTHONPATH=python \
	    /usr/bin/python3 bench/python_numpy.py $(BENCH_ARGS)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

# Removes what the last install from $(BUILD) installed (its manifest).
uninstall:
	@cmake -DMANIFEST=$(BUILD)/install_manifest.txt -P cmake/uninstall.cmake

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(CLANG_BUILD) $(TSAN_BUILD)
