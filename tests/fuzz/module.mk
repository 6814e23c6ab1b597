# tests/fuzz/: mutation fuzzers, run by `make fuzz` under AddressSanitizer + UBSan.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:%.c=$(BUILD)/%)
FUZZ_ROUNDS ?= 200000

$(FUZZ_BINS): $(BUILD)/%: $(BUILD)/%.o $(PROTO_LIB)
	$(CC) $(LDFLAGS_BASE) $< $(PROTO_LIB) $(PROTO_LIBS) -o $@

$(FUZZ_SRCS:%.c=$(BUILD)/%.o): | $(TEST_PREREQS)

fuzz-run: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do $$f $(FUZZ_ROUNDS) || exit 1; done
