# The two commands of the README: `make run` and `make test`.  Both install
# missing Debian packages first (scripts/install-deps.sh is idempotent).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
# Tests at a time.  Most integration tests spend their time waiting
# (timeouts, retries, politeness delays, a browser), so three keep two
# cores busy; the fuzzers, which only compute, run two at a time.
CTEST_JOBS ?= 3
FUZZ_JOBS  ?= 2
# The libFuzzer harnesses of tests/fuzz/ (docs/development.md "Fuzzing"):
# `make test` runs each for FUZZ_TEST_SECONDS, `make fuzz` for
# FUZZ_SECONDS (FUZZ_TARGET=url runs one of them).
FUZZ_TEST_SECONDS ?= 20
FUZZ_SECONDS      ?= 300
FUZZ_TARGET       ?=
# `make install` (docs/operations.md "Installing"): PREFIX as for any
# package (/usr/local; /usr puts the configuration in /etc/sluice), and
# DESTDIR for a staged install.
PREFIX            ?= /usr/local

.PHONY: all deps build build-asan build-fuzz run test test-normal test-asan \
	test-fuzz fuzz format clean install deb

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

# The clang build of the fuzzers (the gcc builds are not touched).
build-fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSL_FUZZ=ON \
	    -DSL_FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)

# The build of the installed binary knows where its configuration is
# (SYSCONFDIR/sluice under PREFIX), so it is configured with PREFIX.
install: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j$(JOBS) --target sluice sluice-pdf
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# The Debian package, ../sluice_<version>_<arch>.deb (docs/operations.md
# "The Debian package").
deb: deps
	dpkg-buildpackage -b -us -uc

# Starts the server in the foreground with the default configuration
# (config/sluice.json, the same values as the built-in defaults).
run: build
	./scripts/run.sh $(BUILD)/sluice

test: test-normal test-asan test-fuzz

test-normal: build
	cd $(BUILD) && ctest --output-on-failure -j$(CTEST_JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j$(CTEST_JOBS)

# Every fuzzer for FUZZ_TEST_SECONDS (two at a time), and the web unit
# tests under clang's sanitizers.
test-fuzz: build-fuzz
	cd $(FUZZ_BUILD) && ctest --output-on-failure -j$(FUZZ_JOBS)

fuzz: build-fuzz
	cmake -S . -B $(FUZZ_BUILD) -DSL_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	cd $(FUZZ_BUILD) && ctest --output-on-failure -j$(FUZZ_JOBS) -L fuzz \
	    $(if $(FUZZ_TARGET),-R '^fuzz_$(FUZZ_TARGET)$$')

format:
	clang-format -i $$(git ls-files -co --exclude-standard -- '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
