# tests/bench/: benchmarks, run by `make bench` (figures printed and written to build/bench/).
#
#   peers_bench  the hand-written floor, Boehm GC and Lua 5.4 on the standard graph -> peers.json
#   gc_bench     reap's collector on the same graph -> gc_core.json, gc_full.json, and the
#                reap/peer ratios from the peers.json the run before it wrote
#   churn_bench  bots and props churned through the collector: RSS and gc_heap_bytes after
#                warm-up, at the peak, after a collection and after malloc_trim -> churn.json
#   map_bench    the collector's hash tables: the longest insert growing to 2M keys -> map.json
#
# The order of BENCH_BINS is the order `make bench-run` runs them: peers first.
# Boehm and Lua are compiled in only when pkg-config finds them (deploy/install-deps.sh --bench
# installs them); without them peers_bench prints a note and their figures are null.

BENCH_OBJDIR := $(BUILD)/tests/bench
BENCH_COMMON_OBJS := $(BENCH_OBJDIR)/bench_graph.o $(BENCH_OBJDIR)/bench_util.o
BENCH_PEERS_OBJS := $(BENCH_OBJDIR)/peers_bench.o $(BENCH_OBJDIR)/floor_bench.o
BENCH_PEERS_LIBS := -lm
BENCH_PEERS_DEFS :=

ifeq ($(shell $(PKG_CONFIG) --exists bdw-gc && echo yes),yes)
  BENCH_PEERS_OBJS += $(BENCH_OBJDIR)/boehm_bench.o
  BENCH_PEERS_LIBS += $(call pc_libs,bdw-gc)
  BENCH_PEERS_DEFS += -DBENCH_HAVE_BOEHM
  $(BENCH_OBJDIR)/boehm_bench.o: CPPFLAGS_tests += $(call pc_cflags,bdw-gc)
endif
ifeq ($(shell $(PKG_CONFIG) --exists lua5.4 && echo yes),yes)
  BENCH_PEERS_OBJS += $(BENCH_OBJDIR)/lua_bench.o
  BENCH_PEERS_LIBS += $(call pc_libs,lua5.4)
  BENCH_PEERS_DEFS += -DBENCH_HAVE_LUA
  $(BENCH_OBJDIR)/lua_bench.o: CPPFLAGS_tests += $(call pc_cflags,lua5.4)
endif
$(BENCH_OBJDIR)/peers_bench.o: CPPFLAGS_tests += $(BENCH_PEERS_DEFS)

# peers_bench.o depends on which peers are present: a stamp named after them rebuilds it when
# a package is installed or removed.
BENCH_PEERS_STAMP := $(BENCH_OBJDIR)/peers$(subst $() ,,$(BENCH_PEERS_DEFS)).stamp
$(BENCH_PEERS_STAMP):
	@mkdir -p $(dir $@)
	@touch $@
$(BENCH_OBJDIR)/peers_bench.o: $(BENCH_PEERS_STAMP)

BENCH_PEERS_BIN := $(BENCH_OBJDIR)/peers_bench
BENCH_GC_BIN := $(BENCH_OBJDIR)/gc_bench

$(BENCH_PEERS_BIN): $(BENCH_PEERS_OBJS) $(BENCH_COMMON_OBJS)
	$(CC) $(LDFLAGS_BASE) $^ $(BENCH_PEERS_LIBS) -o $@

$(BENCH_GC_BIN): $(BENCH_OBJDIR)/gc_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $(BENCH_OBJDIR)/gc_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB) \
		$(GC_LIBS) -lm -o $@

# The peers alone, for trying them out before the collector links.
.PHONY: bench-peers
bench-peers: $(BENCH_PEERS_BIN)
	@mkdir -p build/bench
	$(BENCH_PEERS_BIN) build/bench

BENCH_CHURN_BIN := $(BENCH_OBJDIR)/churn_bench

$(BENCH_CHURN_BIN): $(BENCH_OBJDIR)/churn_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $(BENCH_OBJDIR)/churn_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB) \
		$(GC_LIBS) -lm -o $@

BENCH_BINS += $(BENCH_PEERS_BIN) $(BENCH_GC_BIN) $(BENCH_CHURN_BIN)

# Replication in a crowd, in one process (tests/bench/repl_bench.c): the server's CPU per
# connection and frame without the bots or the loop. Links the server's archive like a test.
BENCH_REPL_BIN := $(BENCH_OBJDIR)/repl_bench
$(BENCH_OBJDIR)/repl_bench.o: | $(TEST_PREREQS)
$(BENCH_REPL_BIN): $(BENCH_OBJDIR)/repl_bench.o $(TEST_ARCHIVES) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $< $(TEST_ARCHIVES) $(GC_LIB) $(TEST_EXT_LIBS) $(GC_LIBS) -lm -o $@

BENCH_BINS += $(BENCH_REPL_BIN)

# The collector's hash tables (tests/bench/map_bench.c): the longest insert while a table grows
# to 2M keys -> map.json; `map_bench mark` is a clustered mark to count under callgrind.
BENCH_MAP_BIN := $(BENCH_OBJDIR)/map_bench
$(BENCH_MAP_BIN): $(BENCH_OBJDIR)/map_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $(BENCH_OBJDIR)/map_bench.o $(BENCH_COMMON_OBJS) $(GC_LIB) \
		$(GC_LIBS) -lm -o $@

BENCH_BINS += $(BENCH_MAP_BIN)

# The flood benchmark: a hostile client beside a churn of honest bots; not part of
# `make bench` (it needs the server and client built): `make flood-bench`.
BENCH_FLOOD_BIN := $(BENCH_OBJDIR)/flood_client
$(BENCH_OBJDIR)/flood_client.o: CPPFLAGS_tests += $(CPPFLAGS_proto)
$(BENCH_OBJDIR)/flood_client.o: | $(PROTO_GEN_H)
$(BENCH_FLOOD_BIN): $(BENCH_OBJDIR)/flood_client.o $(CLIENT_LIB) $(PROTO_LIB)
	$(CC) $(LDFLAGS_BASE) $< $(CLIENT_LIB) $(PROTO_LIB) $(CLIENT_LIBS) $(PROTO_LIBS) -o $@

.PHONY: flood-bench
flood-bench: build-all $(BENCH_FLOOD_BIN)
	flock /tmp/reap-bench.lock tests/bench/flood_bench.sh $(BUILD) $(BUILD)/bench

# One mark of the standard graph under cachegrind, reap (1 worker) against the floor: the
# cache lines each touches per marked object and per reference (gc/README.md). Not part of
# `make bench` (it takes about a minute); run it under flock like any benchmark.
BENCH_PROBE_BIN := $(BENCH_OBJDIR)/mark_probe

$(BENCH_PROBE_BIN): $(BENCH_OBJDIR)/mark_probe.o $(BENCH_COMMON_OBJS) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $(BENCH_OBJDIR)/mark_probe.o $(BENCH_COMMON_OBJS) $(GC_LIB) \
		$(GC_LIBS) -lm -o $@

.PHONY: bench-cachegrind
bench-cachegrind: $(BENCH_PROBE_BIN)
	tests/bench/cachegrind_probe.sh $(BENCH_PROBE_BIN)

# 1 marker against 2 beside stress-ng --cpu 1, 10 runs (two workers should never lose to one).
.PHONY: bench-workers-hog
bench-workers-hog: $(BENCH_PROBE_BIN)
	flock /tmp/reap-bench.lock tests/bench/workers_beside_hog.sh $(BENCH_PROBE_BIN) 10
