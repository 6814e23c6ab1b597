/*
 * test_agones.c - reap-server against a stand-in for the Agones SDK sidecar: a small HTTP
 * server inside the test that records every request and answers as the real sidecar does
 * (Agones' SDK server behind its REST gateway): 200 with the list for list calls, 500 with the
 * SDK server's message for a duplicate or unknown value, a full or missing list or a feature
 * that is off, 404 for a path it does not serve (the /v1beta1 lists of an Agones before 1.41).
 * Ready comes once the game port answers, Health keeps coming whatever else is stuck, players
 * are added and removed as they join and leave, Shutdown follows `quit` and the server waits
 * for SIGTERM; a sidecar that is down at start is retried until it answers, and players are
 * served meanwhile.
 */
#include "harness.h"

#include <enet/enet.h>

#include "reap_msg.h"

enum {
    SIDECAR_MAX_CONNS = 16,
    SIDECAR_LOG_MAX = 1 << 16,
    SIDECAR_MAX_REQUESTS = 512,
    SIDECAR_MAX_VALUES = 16,
};

typedef struct sidecar_conn {
    int fd;
    char buf[4096];
    size_t len;
    bool stalled;         /* recorded, never answered */
} sidecar_conn;

typedef struct sidecar_request {
    double at;            /* harness_now() when it arrived */
    char line[256];       /* "POST /ready {}" */
} sidecar_request;

typedef struct sidecar {
    int listen_fd;
    unsigned port;
    bool listening;
    sidecar_conn conns[SIDECAR_MAX_CONNS];
    sidecar_request requests[SIDECAR_MAX_REQUESTS];
    int count;
    /* the GameServer as the sidecar sees it */
    const char *lists_version;  /* "v1beta1" (Agones 1.41+) or "v1alpha1" (older) */
    bool lists_enabled;         /* the CountsAndLists feature */
    bool has_players_list;      /* spec.lists.players in the GameServer */
    int capacity;
    char values[SIDECAR_MAX_VALUES][128];
    int value_count;
    const char *state;          /* status.state: "Ready", "Allocated" */
    bool stall_adds;            /* never answer addValue (a sidecar stuck on it) */
    bool lose_next_add_answer;  /* the next add lands but answers 500 (as after a timeout) */
} sidecar;

static sidecar sc;

/* Binds a free loopback port; listens only when listen_now (else connections are refused
 * until sidecar_listen). The GameServer has an empty players list of capacity 64. */
static void sidecar_open(sidecar *s, bool listen_now)
{
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int one = 1;

    memset(s, 0, sizeof *s);
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        s->conns[i].fd = -1;
    s->lists_version = "v1beta1";
    s->lists_enabled = true;
    s->has_players_list = true;
    s->capacity = 64;
    s->state = "Ready";
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_true(s->listen_fd >= 0);
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&sin, sizeof sin), 0);
    assert_int_equal(getsockname(s->listen_fd, (struct sockaddr *)&sin, &len), 0);
    s->port = ntohs(sin.sin_port);
    if (listen_now) {
        assert_int_equal(listen(s->listen_fd, 16), 0);
        s->listening = true;
    }
}

static void sidecar_listen(sidecar *s)
{
    assert_int_equal(listen(s->listen_fd, 16), 0);
    s->listening = true;
}

static void sidecar_close(sidecar *s)
{
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        if (s->conns[i].fd >= 0)
            close(s->conns[i].fd);
    close(s->listen_fd);
}

static void sidecar_add_value(sidecar *s, const char *value)
{
    assert_true(s->value_count < SIDECAR_MAX_VALUES);
    snprintf(s->values[s->value_count++], sizeof s->values[0], "%s", value);
}

static int sidecar_value_index(const sidecar *s, const char *value)
{
    for (int i = 0; i < s->value_count; i++)
        if (strcmp(s->values[i], value) == 0)
            return i;
    return -1;
}

/* The list as the REST gateway writes it (int64 as a string). */
static void sidecar_list_json(const sidecar *s, char *out, size_t out_size)
{
    size_t n = (size_t)snprintf(out, out_size, "{\"name\":\"players\",\"capacity\":\"%d\","
                                "\"values\":[", s->capacity);
    for (int i = 0; i < s->value_count && n < out_size; i++)
        n += (size_t)snprintf(out + n, out_size - n, "%s\"%s\"", i ? "," : "", s->values[i]);
    if (n < out_size)
        snprintf(out + n, out_size - n, "]}");
}

static void sidecar_answer(sidecar_conn *c, int status, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n", status,
                     status == 200 ? "OK" : status == 404 ? "Not Found"
                                                          : "Internal Server Error",
                     strlen(body));

    if (write(c->fd, head, (size_t)n) < 0 || write(c->fd, body, strlen(body)) < 0) {
        /* the server went away: nothing to answer */
    }
}

/* An SDK server error as the gateway maps a plain error: gRPC Unknown (2), HTTP 500. */
static void sidecar_error(sidecar_conn *c, const char *message)
{
    char body[512];

    snprintf(body, sizeof body, "{\"code\":2,\"message\":\"%s\",\"details\":[]}", message);
    sidecar_answer(c, 500, body);
}

/* The list routes of Agones' SDK server: GET, addValue, removeValue. */
static void sidecar_lists(sidecar *s, sidecar_conn *c, const char *method, const char *route,
                          const char *body)
{
    char value[128] = "", msg[256], list[2048];
    const char *v = strstr(body, "\"value\":\"");

    if (v != NULL)
        sscanf(v + 9, "%127[^\"]", value);
    if (!s->lists_enabled) {
        sidecar_error(c, "CountsAndLists not enabled");
        return;
    }
    if (!s->has_players_list) {
        sidecar_error(c, "not found. players List not found");
        return;
    }
    if (strcmp(method, "GET") == 0 && strcmp(route, "/lists/players") == 0) {
        sidecar_list_json(s, list, sizeof list);
        sidecar_answer(c, 200, list);
    } else if (strcmp(method, "POST") == 0 && strcmp(route, "/lists/players:addValue") == 0) {
        if (sidecar_value_index(s, value) >= 0) {
            snprintf(msg, sizeof msg, "already exists. Value: %s already in List: players",
                     value);
            sidecar_error(c, msg);
        } else if (s->value_count >= s->capacity) {
            snprintf(msg, sizeof msg, "out of range. No available capacity. Current Capacity: "
                     "%d, List Size: %d", s->capacity, s->value_count);
            sidecar_error(c, msg);
        } else if (s->lose_next_add_answer) {
            s->lose_next_add_answer = false;
            sidecar_add_value(s, value);
            sidecar_error(c, "transport is closing");
        } else {
            sidecar_add_value(s, value);
            sidecar_list_json(s, list, sizeof list);
            sidecar_answer(c, 200, list);
        }
    } else if (strcmp(method, "POST") == 0 && strcmp(route, "/lists/players:removeValue") == 0) {
        int i = sidecar_value_index(s, value);
        if (i < 0) {
            snprintf(msg, sizeof msg, "not found. Value: %s not found in List: players", value);
            sidecar_error(c, msg);
        } else {
            memmove(s->values[i], s->values[i + 1],
                    (size_t)(s->value_count - i - 1) * sizeof s->values[0]);
            s->value_count--;
            sidecar_list_json(s, list, sizeof list);
            sidecar_answer(c, 200, list);
        }
    } else {
        sidecar_answer(c, 404, "{\"code\":5,\"message\":\"Not Found\",\"details\":[]}");
    }
}

/* A complete request in c->buf: record it, answer as the real sidecar would, close. */
static void sidecar_serve(sidecar *s, sidecar_conn *c)
{
    char method[16] = "", path[128] = "", prefix[32];
    const char *end = strstr(c->buf, "\r\n\r\n");
    const char *cl = strstr(c->buf, "\r\nContent-Length:") /* as curl spells it */;
    size_t body_len = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;
    char body[1024];

    if (c->stalled || end == NULL || c->len < (size_t)(end + 4 - c->buf) + body_len)
        return; /* not complete yet */
    sscanf(c->buf, "%15s %127s", method, path);
    snprintf(body, sizeof body, "%.*s", (int)body_len, end + 4);
    if (s->count < SIDECAR_MAX_REQUESTS) {
        sidecar_request *r = &s->requests[s->count++];
        r->at = harness_now();
        snprintf(r->line, sizeof r->line, "%s %s %.100s", method, path, body);
    }
    snprintf(prefix, sizeof prefix, "/%s/lists/", s->lists_version);
    if (s->stall_adds && strstr(path, ":addValue") != NULL) {
        c->stalled = true;
        return;
    }
    if ((strcmp(method, "POST") == 0 &&
         (strcmp(path, "/ready") == 0 || strcmp(path, "/health") == 0 ||
          strcmp(path, "/shutdown") == 0)) ||
        (strcmp(method, "PUT") == 0 && strcmp(path, "/metadata/label") == 0)) {
        sidecar_answer(c, 200, "{}");
    } else if (strcmp(method, "GET") == 0 && strcmp(path, "/gameserver") == 0) {
        char gs[256];
        snprintf(gs, sizeof gs, "{\"object_meta\":{\"name\":\"reap-test\"},\"status\":{"
                 "\"state\":\"%s\",\"address\":\"127.0.0.1\"}}", s->state);
        sidecar_answer(c, 200, gs);
    } else if (strncmp(path, prefix, strlen(prefix)) == 0) {
        sidecar_lists(s, c, method, path + strlen(prefix) - strlen("/lists/"), body);
    } else {
        sidecar_answer(c, 404, "{\"code\":5,\"message\":\"Not Found\",\"details\":[]}");
    }
    close(c->fd);
    c->fd = -1;
    c->len = 0;
}

/* Serves the sidecar and pumps the server's output for about wait_ms. */
static void sidecar_pump(sidecar *s, harness_server *srv, int wait_ms)
{
    struct pollfd pfds[SIDECAR_MAX_CONNS + 1];
    int n = 0;

    if (s->listening)
        pfds[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        if (s->conns[i].fd >= 0)
            pfds[n++] = (struct pollfd){ s->conns[i].fd, POLLIN, 0 };
    if (n > 0)
        poll(pfds, (nfds_t)n, wait_ms);
    if (s->listening) {
        int fd;
        while ((fd = accept(s->listen_fd, NULL, NULL)) >= 0) {
            int slot = -1;
            for (int i = 0; i < SIDECAR_MAX_CONNS && slot < 0; i++)
                if (s->conns[i].fd < 0)
                    slot = i;
            if (slot < 0) {
                close(fd);
                continue;
            }
            s->conns[slot].fd = fd;
            s->conns[slot].len = 0;
            s->conns[slot].stalled = false;
        }
    }
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++) {
        sidecar_conn *c = &s->conns[i];
        ssize_t got;

        if (c->fd < 0)
            continue;
        got = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, MSG_DONTWAIT);
        if (got == 0) {
            close(c->fd);
            c->fd = -1;
            c->stalled = false;
            c->len = 0;
            continue;
        }
        if (got > 0) {
            c->len += (size_t)got;
            c->buf[c->len] = '\0';
            sidecar_serve(s, c);
        }
    }
    if (srv != NULL)
        harness_proc_pump(&srv->proc, 0);
}

/* Index of the first request from `from` on that starts with prefix (and holds `holding`,
 * when not NULL), or -1. */
static int sidecar_find(const sidecar *s, int from, const char *prefix, const char *holding)
{
    for (int i = from; i < s->count; i++)
        if (strncmp(s->requests[i].line, prefix, strlen(prefix)) == 0 &&
            (holding == NULL || strstr(s->requests[i].line, holding) != NULL))
            return i;
    return -1;
}

/* Serves until such a request arrives; its index. Fails the test at the deadline. */
static int sidecar_wait(sidecar *s, harness_server *srv, const char *prefix, const char *holding,
                        double timeout)
{
    double deadline = harness_now() + timeout;
    int i;

    while ((i = sidecar_find(s, 0, prefix, holding)) < 0) {
        if (harness_now() >= deadline) {
            fprintf(stderr, "requests seen:\n");
            for (int k = 0; k < s->count; k++)
                fprintf(stderr, "  %s\n", s->requests[k].line);
            fail_msg("no '%s%s%s' within %g s; server printed:\n%s", prefix,
                     holding ? " ... " : "", holding ? holding : "", timeout,
                     srv ? srv->proc.out : "");
        }
        sidecar_pump(s, srv, 20);
    }
    return i;
}

/* Runs reap-client to completion while the sidecar keeps serving. */
static int run_client_serving(sidecar *s, harness_server *srv, const char *const *args)
{
    harness_proc c;
    double deadline = harness_now() + 30.0;
    int status;

    harness_proc_start(&c, "reap-client", args);
    while (!c.exited && harness_now() < deadline) {
        sidecar_pump(s, srv, 20);
        harness_proc_pump(&c, 0);
    }
    if (!c.exited)
        fail_msg("reap-client did not finish; it printed:\n%s", c.out);
    status = c.status;
    harness_proc_free(&c);
    return status;
}


static int count_text(const char *haystack, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Counts the requests from `from` on that start with prefix (and hold `holding`). */
static int sidecar_count(const sidecar *s, int from, const char *prefix, const char *holding)
{
    int n = 0;

    for (int i = from; i >= 0 && (i = sidecar_find(s, i, prefix, holding)) >= 0; i++)
        n++;
    return n;
}

/* Waits for the n-th request (1-based) from `from` on that starts with prefix; its index. */
static int sidecar_wait_nth(sidecar *s, harness_server *srv, int from, const char *prefix,
                            int n, double timeout)
{
    double deadline = harness_now() + timeout;

    for (;;) {
        int seen = 0;
        for (int i = from; (i = sidecar_find(s, i, prefix, NULL)) >= 0; i++)
            if (++seen == n)
                return i;
        if (harness_now() >= deadline)
            fail_msg("only %d '%s' after request %d within %g s; server printed:\n%s", seen,
                     prefix, from, timeout, srv->proc.out);
        sidecar_pump(s, srv, 20);
    }
}

/* Serves the sidecar until the server has printed text; false at the deadline. */
static bool sidecar_wait_text(sidecar *s, harness_server *srv, const char *text, double timeout)
{
    double deadline = harness_now() + timeout;

    while (strstr(srv->proc.out, text) == NULL) {
        if (harness_now() >= deadline)
            return false;
        sidecar_pump(s, srv, 20);
    }
    return true;
}

/* A hand-driven ENet client: says hello with a matchmaker's player id, then goodbye. */
static void raw_player(sidecar *s, harness_server *srv, const char *matchmaker_id)
{
    ENetHost *host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;
    double deadline = harness_now() + 10.0;
    bool connected = false, welcomed = false, gone = false;
    uint8_t buf[512];
    size_t len;
    ENetAddress addr;
    ENetPeer *peer;
    ENetEvent ev;

    assert_non_null(host);
    enet_address_set_host_ip(&addr, "127.0.0.1");
    addr.port = (enet_uint16)srv->port;
    peer = enet_host_connect(host, &addr, MSG_CHANNEL_COUNT, 0);
    assert_non_null(peer);
    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = "mm";
    hello.matchmaker_player_id = (char *)matchmaker_id;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    assert_int_equal(msg_encode(&env, buf, sizeof buf, &len), MSG_OK);
    while (!gone && harness_now() < deadline) {
        sidecar_pump(s, srv, 0);
        if (enet_host_service(host, &ev, 10) <= 0)
            continue;
        if (ev.type == ENET_EVENT_TYPE_CONNECT && !connected) {
            connected = true;
            enet_peer_send(peer, MSG_CHANNEL_CONTROL,
                           enet_packet_create(buf, len, ENET_PACKET_FLAG_RELIABLE));
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            if (!welcomed) {
                welcomed = true; /* the first answer to a valid hello is the Welcome */
                enet_peer_disconnect(peer, 0);
            }
            enet_packet_destroy(ev.packet);
        } else if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
            gone = true;
        }
    }
    enet_host_destroy(host);
    if (!welcomed || !gone)
        fail_msg("the raw player was not welcomed and let go; server printed:\n%s",
                 srv->proc.out);
}

static void start_with_sidecar(harness_server *srv, unsigned port, const char *const *extra)
{
    char env[16];

    snprintf(env, sizeof env, "%u", port);
    setenv("AGONES_SDK_HTTP_PORT", env, 1);
    harness_server_start(srv, extra);
    unsetenv("AGONES_SDK_HTTP_PORT");
}

static void test_ready_health_players_and_shutdown_reach_the_sidecar(void **state)
{
    harness_server srv;
    char reply[256];

    (void)state;
    sidecar_open(&sc, true);
    start_with_sidecar(&srv, sc.port, NULL);

    /* The list is asked for first, then Ready with labels saying what this server is, then
     * health pings. */
    int ready = sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);
    assert_string_equal(sc.requests[ready].line, "POST /ready {}");
    int probe = sidecar_find(&sc, 0, "GET /v1beta1/lists/players", NULL);
    assert_true(probe >= 0 && probe < ready);
    int label = sidecar_find(&sc, 0, "PUT /metadata/label", "\"key\":\"reap-version\"");
    assert_true(label >= 0 && label < ready);
    int first = sidecar_wait(&sc, &srv, "POST /health", NULL, 10.0);
    double deadline = sc.requests[first].at + 10.0;
    int second = -1;
    while (second < 0 && harness_now() < deadline) {
        sidecar_pump(&sc, &srv, 20);
        second = sidecar_find(&sc, first + 1, "POST /health", NULL);
    }
    assert_true(second > first);
    assert_true(sidecar_wait_text(&sc, &srv, "capacity 64, 0 value(s)", 5.0));

    /* A player's join and leave: the list holds "<id>-ana" while ana plays. */
    const char *args[] = { "--server", srv.endpoint, "--name", "ana", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    int add = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:addValue", "-ana\"", 10.0);
    int rm = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "-ana\"", 10.0);
    assert_true(add < rm);
    assert_non_null(strstr(sc.requests[add].line, "{\"value\":\"1-ana\"}"));
    assert_int_equal(sc.value_count, 0);

    /* quit: the goodbye, then Shutdown; the server stays up (health keeps coming) until
     * Agones sends SIGTERM. */
    assert_int_equal(harness_console(&srv, "quit", reply, sizeof reply), 200);
    int shutdown = sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);
    kill(srv.proc.pid, SIGUSR1); /* the worlds are gone: nothing to report, nothing breaks */
    assert_true(sidecar_wait_text(&sc, &srv, "waiting for SIGTERM; ignored", 10.0));
    sidecar_wait_nth(&sc, &srv, shutdown + 1, "POST /health", 2, 10.0);
    assert_false(srv.proc.exited);
    assert_non_null(strstr(srv.proc.out, "staying up until SIGTERM"));
    kill(srv.proc.pid, SIGTERM);
    while (!srv.proc.exited && !harness_proc_wait(&srv.proc, 0.05))
        sidecar_pump(&sc, &srv, 20);
    assert_int_equal(srv.proc.status, 0);
    assert_int_equal(sidecar_count(&sc, 0, "POST /shutdown", NULL), 1);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_sidecar_down_at_start_is_retried_and_players_are_served_meanwhile(
    void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, false); /* the port is taken but refuses connections */
    start_with_sidecar(&srv, sc.port, NULL);
    assert_true(harness_proc_wait_for_text(&srv.proc, "unreachable", 10.0));

    const char *args[] = { "--server", srv.endpoint, "--name", "bo", "--spawn", "3", "--hold",
                           "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    assert_false(srv.proc.exited);

    sidecar_listen(&sc);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 15.0);
    sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:addValue", "bo", 10.0);
    sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "bo", 10.0);
    assert_true(harness_proc_wait_for_text(&srv.proc, "agones: Ready", 5.0));
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_health_pings_go_on_while_a_list_call_hangs(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    sc.stall_adds = true;
    start_with_sidecar(&srv, sc.port, NULL);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    const char *args[] = { "--server", srv.endpoint, "--name", "cy", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    int add = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:addValue", "cy", 10.0);

    /* No addValue is ever answered, yet the pings keep arriving. */
    sidecar_wait_nth(&sc, &srv, add + 1, "POST /health", 3, 15.0);
    assert_int_equal(sc.value_count, 0);
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_an_add_that_landed_but_failed_is_retried_once_and_then_done(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    sc.lose_next_add_answer = true;
    start_with_sidecar(&srv, sc.port, NULL);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    const char *args[] = { "--server", srv.endpoint, "--name", "gu", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    int rm = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "gu", 15.0);

    /* A 500 the SDK server does not word as done: retried; the retry meets "already
     * exists", which is done; the leave then removes the value. */
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players:addValue", "gu"), 2);
    assert_true(sidecar_find(&sc, rm + 1, "POST /v1beta1/lists/players:addValue", "gu") < 0);
    assert_int_equal(sc.value_count, 0);
    assert_non_null(strstr(srv.proc.out, "transport is closing"));
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_full_list_drops_the_add_and_the_remove_of_it_is_done(void **state)
{
    harness_server srv;
    char reply[256];

    (void)state;
    sidecar_open(&sc, true);
    sc.capacity = 1;
    sidecar_add_value(&sc, "someone-else");
    start_with_sidecar(&srv, sc.port, NULL);
    assert_true(sidecar_wait_text(&sc, &srv, "--max-players 64 exceeds the players list's "
                                  "capacity 1", 10.0));

    const char *args[] = { "--server", srv.endpoint, "--name", "di", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    assert_int_equal(harness_console(&srv, "quit", reply, sizeof reply), 200);
    int shutdown = sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);

    /* One add (refused: no capacity), one remove (refused: not found), neither retried, and
     * the queue moved on to Shutdown. */
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players:addValue", "di"), 1);
    int rm = sidecar_find(&sc, 0, "POST /v1beta1/lists/players:removeValue", "di");
    assert_true(rm >= 0 && rm < shutdown);
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players:removeValue", "di"), 1);
    assert_non_null(strstr(srv.proc.out, "the players list is full"));
    assert_string_equal(sc.values[0], "someone-else");
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_matchmakers_player_id_from_the_allocation_is_honoured(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    sidecar_add_value(&sc, "match-7f3a"); /* the GameServerAllocation's addValues */
    start_with_sidecar(&srv, sc.port, NULL);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    raw_player(&sc, &srv, "match-7f3a");
    sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "match-7f3a", 10.0);

    /* The add met "already exists" and was done with at once; the leave removed the id. */
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players:addValue",
                                   "{\"value\":\"match-7f3a\"}"), 1);
    assert_int_equal(sc.value_count, 0);
    assert_null(strstr(srv.proc.out, "retrying"));
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

/* A GameServer whose list calls all fail the same way: one warning, no player calls. */
static void check_players_go_unlisted(bool lists_enabled, bool has_list, const char *warning)
{
    harness_server srv;
    char reply[256];

    sidecar_open(&sc, true);
    sc.lists_enabled = lists_enabled;
    sc.has_players_list = has_list;
    start_with_sidecar(&srv, sc.port, NULL);
    assert_true(sidecar_wait_text(&sc, &srv, warning, 10.0));

    const char *args[] = { "--server", srv.endpoint, "--name", "ed", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    assert_int_equal(harness_console(&srv, "quit", reply, sizeof reply), 200);
    sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);

    /* Everything before Shutdown went out in order: no player call among it. */
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players", NULL), 0);
    assert_int_equal(count_text(srv.proc.out, warning), 1);
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_gameserver_without_a_players_list_is_said_once_and_players_still_play(
    void **state)
{
    (void)state;
    check_players_go_unlisted(true, false, "has no 'players' list");
}

static void test_lists_not_enabled_are_said_once_and_players_still_play(void **state)
{
    (void)state;
    check_players_go_unlisted(false, true, "CountsAndLists feature is not enabled");
}

static void test_an_agones_before_1_41_gets_the_v1alpha1_lists(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    sc.lists_version = "v1alpha1"; /* /v1beta1/... is a path it does not serve: 404 */
    start_with_sidecar(&srv, sc.port, NULL);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    const char *args[] = { "--server", srv.endpoint, "--name", "fa", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    sidecar_wait(&sc, &srv, "POST /v1alpha1/lists/players:removeValue", "fa", 10.0);

    int beta = sidecar_find(&sc, 0, "GET /v1beta1/lists/players", NULL);
    int alpha = sidecar_find(&sc, 0, "GET /v1alpha1/lists/players", NULL);
    assert_true(beta >= 0 && alpha > beta);
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1alpha1/lists/players:addValue", "fa"), 1);
    assert_int_equal(sidecar_count(&sc, 0, "POST /v1beta1/lists/players:", NULL), 0);
    assert_non_null(strstr(srv.proc.out, "before 1.41"));
    assert_int_equal(sc.value_count, 0);
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_an_allocated_server_left_empty_asks_for_shutdown_and_waits_for_sigterm(
    void **state)
{
    harness_server srv;
    const char *extra[] = { "--agones-shutdown-idle", "1", NULL };

    (void)state;
    sidecar_open(&sc, true);
    start_with_sidecar(&srv, sc.port, extra);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    /* Ready (not Allocated): polled, never shut down. */
    int polls = sidecar_wait_nth(&sc, &srv, 0, "GET /gameserver", 3, 15.0);
    assert_true(sidecar_find(&sc, 0, "POST /shutdown", NULL) < 0);

    /* Allocated with nobody on it: Shutdown, and the process stays until SIGTERM. */
    sc.state = "Allocated";
    int shutdown = sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 15.0);
    assert_true(shutdown > polls);
    sidecar_wait_nth(&sc, &srv, shutdown + 1, "POST /health", 1, 10.0);
    assert_false(srv.proc.exited);
    assert_non_null(strstr(srv.proc.out, "--agones-shutdown-idle"));
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_sigterm_sends_shutdown_after_the_goodbye(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    start_with_sidecar(&srv, sc.port, NULL);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    kill(srv.proc.pid, SIGTERM);

    sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);
    assert_true(harness_proc_wait(&srv.proc, 10.0));
    assert_int_equal(srv.proc.status, 0);
    assert_non_null(strstr(srv.proc.out, "final full purge"));
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_bad_sidecar_port_is_refused_by_name(void **state)
{
    harness_proc p;
    const char *args[] = { "--port", "0", "--admin-port", "0", NULL };

    (void)state;
    setenv("AGONES_SDK_HTTP_PORT", "nine", 1);
    int rc = harness_run("reap-server", args, 10.0, &p);
    unsetenv("AGONES_SDK_HTTP_PORT");

    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(p.out, "AGONES_SDK_HTTP_PORT"));
    assert_non_null(strstr(p.out, "'nine'"));
    harness_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_health_players_and_shutdown_reach_the_sidecar),
        cmocka_unit_test(test_a_sidecar_down_at_start_is_retried_and_players_are_served_meanwhile),
        cmocka_unit_test(test_health_pings_go_on_while_a_list_call_hangs),
        cmocka_unit_test(test_an_add_that_landed_but_failed_is_retried_once_and_then_done),
        cmocka_unit_test(test_a_full_list_drops_the_add_and_the_remove_of_it_is_done),
        cmocka_unit_test(test_a_matchmakers_player_id_from_the_allocation_is_honoured),
        cmocka_unit_test(
            test_a_gameserver_without_a_players_list_is_said_once_and_players_still_play),
        cmocka_unit_test(test_lists_not_enabled_are_said_once_and_players_still_play),
        cmocka_unit_test(test_an_agones_before_1_41_gets_the_v1alpha1_lists),
        cmocka_unit_test(
            test_an_allocated_server_left_empty_asks_for_shutdown_and_waits_for_sigterm),
        cmocka_unit_test(test_sigterm_sends_shutdown_after_the_goodbye),
        cmocka_unit_test(test_a_bad_sidecar_port_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
