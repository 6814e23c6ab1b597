# tests/: one executable per unit-test area (cmocka), integration tests that drive the real
# binaries on loopback, and benchmarks (tests/bench/module.mk).
#
# Every test links the collector's testing hooks and whatever libraries the other modules
# add to TEST_ARCHIVES / TEST_EXT_LIBS (server and client code minus their main()).
TEST_UNIT_SRCS := $(wildcard tests/unit/test_*.c)
TEST_INTEG_SRCS := $(wildcard tests/integration/test_*.c)
TEST_SRCS := $(TEST_UNIT_SRCS) $(TEST_INTEG_SRCS)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
TEST_UNIT_BINS := $(TEST_UNIT_SRCS:%.c=$(BUILD)/%)
TEST_INTEG_BINS := $(TEST_INTEG_SRCS:%.c=$(BUILD)/%)
TEST_BINS += $(TEST_UNIT_BINS) $(TEST_INTEG_BINS)
CPPFLAGS_tests = -Igc $(SERVER_INCLUDES) $(CLIENT_INCLUDES) -Itests -I$(BUILD)/gen \
	$(call pc_cflags,cmocka libuv libenet libprotobuf-c)

$(TEST_OBJS): | $(TEST_PREREQS)

$(TEST_UNIT_BINS) $(TEST_INTEG_BINS): $(BUILD)/%: $(BUILD)/%.o $(GC_TESTING_LIB) $(TEST_ARCHIVES) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $< $(GC_TESTING_LIB) $(TEST_ARCHIVES) $(GC_LIB) \
		$(TEST_EXT_LIBS) $(GC_LIBS) $(call pc_libs,cmocka) -o $@

-include tests/bench/module.mk
-include tests/fuzz/module.mk

# tests/wire/wire_capture: plays the session of the README's wire examples against a server
# and saves the packets (tests/docs/wire_examples.py); built with the test that runs it.
WIRE_CAPTURE := $(BUILD)/tests/wire/wire_capture
$(BUILD)/tests/wire/wire_capture.o: | $(TEST_PREREQS)
$(WIRE_CAPTURE): $(BUILD)/tests/wire/wire_capture.o $(PROTO_LIB)
	$(CC) $(LDFLAGS_BASE) $< $(PROTO_LIB) $(PROTO_LIBS) $(call pc_libs,libenet) -lm -o $@
$(BUILD)/tests/integration/test_wire_contract: | $(WIRE_CAPTURE)
