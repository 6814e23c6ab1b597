# reap - top-level Makefile. One entry point; module rules live in */module.mk.
#
#   make            build build/reap-server, build/reap-client, build/libreap_gc.a
#   make run        install missing packages, build, start the server on deploy/reap.ini
#   make test       install missing packages, build, run every unit and integration test
#   make bench      build and run the benchmarks (figures printed and written to build/bench/)
#   make asan|tsan  the test suites under AddressSanitizer+UBSan / ThreadSanitizer
#   make fuzz       mutation fuzzers of the wire decoder under ASan+UBSan (FUZZ_ROUNDS=...)
#   make install    PREFIX=/usr/local DESTDIR=  (binaries, config, systemd unit, man pages;
#                   also BINDIR, SYSCONFDIR, UNITDIR, MANDIR)
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
BINDIR ?= $(PREFIX)/bin
# /usr keeps its configuration in /etc (the FHS); any other prefix in PREFIX/etc.
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
WERROR ?= -Werror
PKG_CONFIG ?= pkg-config
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes $(WERROR)
# CPPFLAGS, CFLAGS, LDFLAGS and LDLIBS are the packager's (dpkg-buildflags: fortify, relro,
# BIND_NOW); they are added to ours, never replace them.
CPPFLAGS_BASE = -D_DEFAULT_SOURCE -DREAP_VERSION='"$(VERSION)"' -Igc/include $(CPPFLAGS)
CFLAGS_BASE = -std=c11 $(OPT) $(WARNINGS) $(SANFLAGS) -MMD -MP -pthread
LDFLAGS_BASE = $(SANFLAGS) -pthread $(LDFLAGS)

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

ALL_TARGETS :=
TEST_BINS :=
BENCH_BINS :=

.PHONY: all run test check bench asan tsan install install-data clean deps fuzz
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

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The standard churn scenario benchmark (DESIGN.md section 5): LOADBENCH_BOTS, _DURATION,
# _LAYOUTS shorten it. Prints a table; writes build/bench/loadbench.json and loadbench.svg.
.PHONY: loadbench
loadbench: all
	flock /tmp/reap-bench.lock tests/bench/loadbench.sh $(BUILD) $(BUILD)/bench
