# server/: reap-server. Everything but main.c goes into an archive that tests link too.
# The folders are its layers, lowest first (README.md's "Source layout" says what each holds):
# base, world, net, ops (what the engine drives: Agones, systemd, the dashboard's ring), engine,
# admin (the console and admin HTTP, which read the engine).
SERVER_DIRS := server/base server/world server/net server/ops server/engine server/admin
SERVER_PKGS := libuv libenet libprotobuf-c inih libmicrohttpd libcurl libsystemd
SERVER_SRCS := $(foreach d,$(SERVER_DIRS),$(wildcard $(d)/*.c))
SERVER_OBJS := $(SERVER_SRCS:%.c=$(BUILD)/%.o)
SERVER_MAIN_OBJ := $(BUILD)/server/main.o
SERVER_LIB := $(BUILD)/libreap_server.a
SERVER_BIN := $(BUILD)/reap-server
SERVER_LIBS := $(call pc_libs,$(SERVER_PKGS)) -lm
SERVER_INCLUDES := $(SERVER_DIRS:%=-I%)
CPPFLAGS_server = $(SERVER_INCLUDES) -Iproto -I$(BUILD)/gen $(call pc_cflags,$(SERVER_PKGS))
# The sanitizer builds also check the engine's and replication's invariants (REAP_ASSERT in
# server/reap_assert.h).
ifneq ($(filter asan tsan,$(VARIANT)),)
  CPPFLAGS_server += -DREAP_CHECKS
endif

ALL_TARGETS += $(SERVER_LIB) $(SERVER_BIN)
INSTALL_BINS += $(SERVER_BIN)
# The server archive uses proto and gc: it goes before them on the link line.
TEST_ARCHIVES := $(SERVER_LIB) $(TEST_ARCHIVES)
TEST_EXT_LIBS += $(SERVER_LIBS)
RUN_COMMAND = $(SERVER_BIN) --config deploy/reap.ini

# The dashboard page is compiled into the server from server/ops/dashboard/index.html.
DASHBOARD_PAGE_C := $(BUILD)/gen/dashboard_page.c
SERVER_OBJS += $(BUILD)/gen/dashboard_page.o

$(SERVER_OBJS) $(SERVER_MAIN_OBJ): | $(PROTO_GEN_H)

$(DASHBOARD_PAGE_C): server/ops/dashboard/index.html server/ops/dashboard/embed.sh
	@mkdir -p $(dir $@)
	sh server/ops/dashboard/embed.sh server/ops/dashboard/index.html dashboard_page_html > $@.tmp
	mv $@.tmp $@

$(BUILD)/gen/dashboard_page.o: $(DASHBOARD_PAGE_C)
	$(CC) $(CPPFLAGS_BASE) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

$(SERVER_LIB): $(SERVER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SERVER_BIN): $(SERVER_MAIN_OBJ) $(SERVER_LIB) $(PROTO_LIB) $(GC_LIB)
	$(CC) $(LDFLAGS_BASE) $(SERVER_MAIN_OBJ) $(SERVER_LIB) $(PROTO_LIB) $(GC_LIB) \
		$(SERVER_LIBS) $(PROTO_LIBS) $(GC_LIBS) -o $@
