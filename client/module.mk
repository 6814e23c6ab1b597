# client/: reap-client. Everything but main.c goes into an archive that tests link too.
CLIENT_PKGS := libenet libprotobuf-c inih libuv jansson
CLIENT_SRCS := $(filter-out client/main.c,$(wildcard client/*.c))
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
CLIENT_MAIN_OBJ := $(BUILD)/client/main.o
CLIENT_LIB := $(BUILD)/libreap_client.a
CLIENT_BIN := $(BUILD)/reap-client
CLIENT_LIBS := $(call pc_libs,$(CLIENT_PKGS)) -lm
CPPFLAGS_client = -Iclient -Iproto -I$(BUILD)/gen $(call pc_cflags,$(CLIENT_PKGS))

ALL_TARGETS += $(CLIENT_LIB) $(CLIENT_BIN)
INSTALL_BINS += $(CLIENT_BIN)
# The client archive uses proto: it goes before it on the link line.
TEST_ARCHIVES := $(CLIENT_LIB) $(TEST_ARCHIVES)
TEST_EXT_LIBS += $(CLIENT_LIBS)

$(CLIENT_OBJS) $(CLIENT_MAIN_OBJ): | $(PROTO_GEN_H)

$(CLIENT_LIB): $(CLIENT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLIENT_BIN): $(CLIENT_MAIN_OBJ) $(CLIENT_LIB) $(PROTO_LIB)
	$(CC) $(LDFLAGS_BASE) $(CLIENT_MAIN_OBJ) $(CLIENT_LIB) $(PROTO_LIB) $(CLIENT_LIBS) \
		$(PROTO_LIBS) -o $@
