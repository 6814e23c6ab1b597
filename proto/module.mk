# proto/: the wire protocol. protoc-c turns proto/reap.proto into C under $(BUILD)/gen/ at
# build time (never into the source tree); proto/reap_msg.c wraps it with the size limit, the
# decode arena and body validation. The archive is shared by the server, the client and tests.
PROTO_GEN_DIR := $(BUILD)/gen
PROTO_GEN_C := $(PROTO_GEN_DIR)/reap.pb-c.c
PROTO_GEN_H := $(PROTO_GEN_DIR)/reap.pb-c.h
PROTO_SRCS := $(wildcard proto/*.c)
PROTO_OBJS := $(PROTO_SRCS:%.c=$(BUILD)/%.o) $(PROTO_GEN_DIR)/reap.pb-c.o
PROTO_LIB := $(BUILD)/libreap_proto.a
PROTO_LIBS := $(call pc_libs,libprotobuf-c)
PROTOC_C ?= protoc-c
CPPFLAGS_proto = -Iproto -I$(PROTO_GEN_DIR) $(call pc_cflags,libprotobuf-c)

ALL_TARGETS += $(PROTO_LIB)
# Link order: archives that use proto come first (server and client prepend themselves).
TEST_ARCHIVES += $(PROTO_LIB)
TEST_EXT_LIBS += $(PROTO_LIBS)
TEST_PREREQS += $(PROTO_GEN_H)

# Tests include reap_msg.h next to the generated header.
$(BUILD)/tests/%.o: CPPFLAGS_tests += -Iproto

$(PROTO_GEN_C) $(PROTO_GEN_H) &: proto/reap.proto
	@mkdir -p $(PROTO_GEN_DIR)
	$(PROTOC_C) --c_out=$(PROTO_GEN_DIR) --proto_path=proto $<

# The descriptor set lets a test decode packets with an independent decoder in Python.
PROTO_DESC := $(PROTO_GEN_DIR)/reap.desc
TEST_PREREQS += $(PROTO_DESC)
$(PROTO_DESC): proto/reap.proto
	@mkdir -p $(PROTO_GEN_DIR)
	$(PROTOC_C) --descriptor_set_out=$@ --proto_path=proto $<

$(PROTO_GEN_DIR)/reap.pb-c.o: $(PROTO_GEN_C)
	$(CC) $(CPPFLAGS_BASE) $(CPPFLAGS_proto) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

$(PROTO_OBJS): | $(PROTO_GEN_H)

$(PROTO_LIB): $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
