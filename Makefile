# The two commands of the README: `make run` and `make test`.  Both install
# missing Debian packages first (scripts/install-deps.sh is idempotent).
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CTEST_JOBS ?= 2

.PHONY: all deps build build-asan run test test-normal test-asan format clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	    -DSL_SANITIZE=address,undefined >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

# Starts the server in the foreground with the default configuration
# (config/sluice.json, the same values as the built-in defaults).
run: build
	./scripts/run.sh $(BUILD)/sluice

test: test-normal test-asan

test-normal: build
	cd $(BUILD) && ctest --output-on-failure -j$(CTEST_JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j$(CTEST_JOBS)

format:
	clang-format -i $$(git ls-files -co --exclude-standard -- '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
