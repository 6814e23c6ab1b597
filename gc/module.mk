# gc/: the collector library. Depends on libc, C11 atomics and libuv's thread primitives only.
GC_SRCS := $(filter-out gc/gc_testing.c,$(wildcard gc/*.c))
GC_OBJS := $(GC_SRCS:%.c=$(BUILD)/%.o)
GC_LIB := $(BUILD)/libreap_gc.a
GC_TESTING_LIB := $(BUILD)/libreap_gc_testing.a
GC_LIBS := $(call pc_libs,libuv) -lm
CPPFLAGS_gc = $(call pc_cflags,libuv)
# The sanitizer builds also check the collector's invariants (GC_ASSERT in gc_internal.h).
ifneq ($(filter asan tsan,$(VARIANT)),)
  CPPFLAGS_gc += -DGC_CHECKS
endif

ALL_TARGETS += $(GC_LIB)

$(GC_LIB): $(GC_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(GC_TESTING_LIB): $(BUILD)/gc/gc_testing.o
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
