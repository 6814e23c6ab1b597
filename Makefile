# reap - top-level Makefile. One entry point; module rules live in */module.mk.
#
#   make            build build/reap-server, build/reap-client, build/libreap_gc.a
#   make run        install missing packages, build, start the server on deploy/reap.ini
#   make test       install missing packages, build, run every unit and integration test
#   make bench      build and run the benchmarks (figures printed and written to build/bench/)
#   make asan|tsan  the test suites under AddressSanitizer+UBSan / ThreadSanitizer
#   make fuzz       mutation fuzzers of the wire decoder under ASan+UBSan (FUZZ_ROUNDS=...)
#   make install    PREFIX=/usr/local DESTDIR=  (binaries, config, systemd unit)
#   make deps       install the Debian packages the build and tests need
#
# Variants build into their own folders so objects never mix: build/, build/asan/, build/tsan/.

VARIANT ?= release
ifeq ($(VARIANT),asan)
  BUILD ?= build/asan
  SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  OPT ?= -O1 -g
else ifeq ($(VARIANT),tsan)
  BUILD ?= build/tsan
  SANFLAGS = -fsanitize=thread -fno-omit-frame-pointer
  OPT ?= -O1 -g
else
  BUILD ?= build
  SANFLAGS =
  OPT ?= -O2 -g
endif

CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
WERROR ?= -Werror
PKG_CONFIG ?= pkg-config
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes $(WERROR)
CPPFLAGS_BASE = -D_DEFAULT_SOURCE -DREAP_VERSION='"$(VERSION)"' -Igc/include
CFLAGS_BASE = -std=c11 $(OPT) $(WARNINGS) $(SANFLAGS) -MMD -MP -pthread
LDFLAGS_BASE = $(SANFLAGS) -pthread

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

ALL_TARGETS :=
TEST_BINS :=
BENCH_BINS :=

.PHONY: all run test check bench asan tsan install clean deps fuzz
all: build-all

include gc/module.mk
-include proto/module.mk
-include server/module.mk
-include client/module.mk
include tests/module.mk

build-all: $(ALL_TARGETS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_BASE) $(CPPFLAGS_$(firstword $(subst /, ,$<))) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

deps:
	deploy/install-deps.sh

# The two commands of the README: both install what is missing first.
run: deps
	$(MAKE) all
	$(RUN_COMMAND)

test: deps
	$(MAKE) all
	$(MAKE) check

check: $(TEST_BINS) $(ALL_TARGETS)
	@tests/run-tests.sh $(BUILD) $(TEST_BINS)

asan:
	deploy/install-deps.sh
	$(MAKE) VARIANT=asan check

tsan:
	deploy/install-deps.sh
	$(MAKE) VARIANT=tsan check

bench:
	deploy/install-deps.sh --bench
	$(MAKE) bench-run

fuzz:
	deploy/install-deps.sh
	$(MAKE) VARIANT=asan fuzz-run

bench-run: $(BENCH_BINS)
	@mkdir -p build/bench
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b build/bench || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/etc/reap
	install -m 755 $(INSTALL_BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 deploy/reap.ini $(DESTDIR)$(PREFIX)/etc/reap/reap.ini
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 644 deploy/reap-server.service $(DESTDIR)$(PREFIX)/lib/systemd/system/

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The standard churn scenario benchmark (DESIGN.md section 5): LOADBENCH_BOTS, _DURATION,
# _LAYOUTS shorten it. Prints a table; writes build/bench/loadbench.json and loadbench.svg.
.PHONY: loadbench
loadbench: all
	flock /tmp/reap-bench.lock tests/bench/loadbench.sh $(BUILD) $(BUILD)/bench
