# client/: reap-client. Everything but cli/main.c goes into an archive that tests link too.
# The folders are its layers, lowest first (README.md's "Source layout" says what each holds):
# base (clocks, files, console lines, the one growth helper and the one hash table), model
# (the run model: plain data and pure functions), report (writers and offline tools that only
# read the model), session (one player's connection), load (the bots, the stages, the impaired
# network, the server's figures), cli (the command line and main.c).
CLIENT_DIRS := client/base client/model client/report client/session client/load client/cli
CLIENT_PKGS := libenet libprotobuf-c inih libuv jansson
CLIENT_SRCS := $(filter-out client/cli/main.c,$(foreach d,$(CLIENT_DIRS),$(wildcard $(d)/*.c)))
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
CLIENT_MAIN_OBJ := $(BUILD)/client/cli/main.o
CLIENT_LIB := $(BUILD)/libreap_client.a
CLIENT_BIN := $(BUILD)/reap-client
CLIENT_LIBS := $(call pc_libs,$(CLIENT_PKGS)) -lm
CLIENT_INCLUDES := $(CLIENT_DIRS:%=-I%)
CPPFLAGS_client = $(CLIENT_INCLUDES) -Iproto -I$(BUILD)/gen $(call pc_cflags,$(CLIENT_PKGS))

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
