# reap - top-level Makefile. One entry point; module rules live in */module.mk.
#
#   make            build build/reap-server, build/reap-client, build/libreap_gc.a
#   make run        install missing packages, build, start the server on deploy/reap.ini
#   make test       install missing packages, build, run every unit and integration test
#   make bench      build and run the benchmarks (figures printed and written to build/bench/)
#   make pacing-bench  UE's collector modes against frame-slack pacing on a 1M-object world
#                   (PACING_PROFILE=mmo: on a world profile's graph; PACING_ARGS="--props 0")
#   make streaming-bench  streaming levels under 200 roaming bots: UE's settings, sliced, paced
#   make travel-bench  UE's blocking server travel against reap's sliced travel, maps of 1M
#                   objects (TRAVEL_BENCH_ARGS="--travels 10 --map openworld --bots 0")
#   make asan|tsan  the test suites under AddressSanitizer+UBSan / ThreadSanitizer
#   make fuzz       mutation fuzzers of the wire decoder under ASan+UBSan (FUZZ_ROUNDS=...)
#   make install    PREFIX=/usr/local DESTDIR=  (binaries, config, systemd unit, man pages;
#                   also BINDIR, SYSCONFDIR, UNITDIR, MANDIR)
#   make deps       install the Debian packages the build and tests need
#   make man        regenerate deploy/man/*.1 from the binaries' --help (make test checks them)
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
BINDIR ?= $(PREFIX)/bin
# /usr keeps its configuration in /etc (the FHS); any other prefix in PREFIX/etc.
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
WERROR ?= -Werror
PKG_CONFIG ?= pkg-config
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes $(WERROR)

# A server that parses untrusted datagrams is built hardened even when nobody passes flags,
# as Debian's dpkg-buildflags would build it: a PIE, a stack protector, stack clash and (where
# the compiler has it) control-flow protection, full RELRO (-z relro -z now: BIND_NOW), and
# _FORTIFY_SOURCE=3. Fortify needs optimisation and sits badly with the sanitizers' own
# interceptors, so only the release variant gets it, and a packager who sets it (in CPPFLAGS or
# CFLAGS) keeps theirs. The packager's flags come after these, so they win.
cc_has = $(shell echo 'int x;' | $(CC) -Werror $(1) -x c -c -o /dev/null - 2>/dev/null && echo $(1))
HARDEN_CFLAGS := -fPIE -fstack-protector-strong $(call cc_has,-fstack-clash-protection) \
	$(call cc_has,-fcf-protection)
HARDEN_LDFLAGS := -pie -Wl,-z,relro,-z,now
HARDEN_CPPFLAGS :=
ifeq ($(VARIANT)$(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),release)
  ifneq ($(filter -O1 -O2 -O3 -Os -Ofast,$(OPT)),)
    ifeq ($(filter -O0,$(CFLAGS)),)
      HARDEN_CPPFLAGS := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3
    endif
  endif
endif

# CPPFLAGS, CFLAGS, LDFLAGS and LDLIBS are the packager's (dpkg-buildflags); they are added
# after ours, never replace them.
CPPFLAGS_BASE = -D_DEFAULT_SOURCE -DREAP_VERSION='"$(VERSION)"' -Igc/include $(HARDEN_CPPFLAGS) \
	$(CPPFLAGS)
CFLAGS_BASE = -std=c11 $(OPT) $(WARNINGS) $(SANFLAGS) $(HARDEN_CFLAGS) -MMD -MP -pthread
LDFLAGS_BASE = $(SANFLAGS) $(HARDEN_CFLAGS) $(HARDEN_LDFLAGS) -pthread $(LDFLAGS)

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

ALL_TARGETS :=
TEST_BINS :=
BENCH_BINS :=

.PHONY: all run test check bench asan tsan install install-data clean deps fuzz pacing-bench man \
	travel-bench
all: build-all

include gc/module.mk
-include proto/module.mk
-include server/module.mk
-include client/module.mk
include tests/module.mk

# LDLIBS goes last on every link line: each program links the protocol or the collector's
# libraries last.
PROTO_LIBS += $(LDLIBS)
GC_LIBS += $(LDLIBS)

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

# The big-world benchmark of UE's collector modes against frame-slack pacing (a few minutes).
pacing-bench: build-all
	tests/bench/pacing_bench.sh $(PACING_ARGS)

# Streaming levels under roaming players: UE's settings against sliced and paced collections
# (README "Streaming levels"; STREAMING_ARGS="--bots 100 --duration 30" shortens it).
.PHONY: streaming-bench
streaming-bench: build-all
	tests/bench/streaming_bench.sh $(STREAMING_ARGS)

# Server travel, blocking against sliced, one fresh server each (several minutes).
travel-bench: build-all
	tests/bench/travel_bench.sh $(TRAVEL_BENCH_ARGS)

bench-run: $(BENCH_BINS)
	@mkdir -p build/bench
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b build/bench || exit 1; done

install: all install-data
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/

# Everything but the binaries (the deploy test installs these into a scratch DESTDIR).
install-data:
	install -d $(DESTDIR)$(SYSCONFDIR)/reap $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 deploy/reap.ini $(DESTDIR)$(SYSCONFDIR)/reap/reap.ini
	@# The unit names the paths of this install, whatever PREFIX was.
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		deploy/reap-server.service.in > $(DESTDIR)$(UNITDIR)/reap-server.service
	chmod 644 $(DESTDIR)$(UNITDIR)/reap-server.service
	install -m 644 deploy/man/reap-server.1 deploy/man/reap-client.1 $(DESTDIR)$(MANDIR)/man1/

man: build-all
	deploy/man/regen.sh $(BUILD)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The standard churn scenario benchmark (README, "The standard churn benchmark"): LOADBENCH_BOTS, _DURATION,
# _LAYOUTS shorten it; LOADBENCH_PROFILE=shooter|mmo|deep|FILE churns a world profile's
# archetypes (LOADBENCH_SPAWN_MIX) instead of props. Prints a table; writes
# build/bench/loadbench.json and loadbench.svg (loadbench-PROFILE.* with a profile).
.PHONY: loadbench
loadbench: all
	flock /tmp/reap-bench.lock tests/bench/loadbench.sh $(BUILD) $(BUILD)/bench
