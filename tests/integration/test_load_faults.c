/*
 * test_load_faults.c - the load tester when the world fails it, with the real binaries on
 * loopback: a server killed mid-run is said at once and in the summary, and the run exits 1; a
 * server restarted on the same port is said too; a load tester killed with SIGKILL leaves a
 * report that merge and compare read and that says it is partial; a disk with little room
 * (a small tmpfs) still gets report.json, names what it could not write and exits 3; and a
 * server that answers every Hello "busy, retry after" (a hand-driven ENet host here) is
 * counted as refusing, not failing, and is not asked again before it said.
 */
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

#include <enet/enet.h>

#include "reap_msg.h"

enum { EXIT_FAILED = 1, EXIT_FILES = 3 };

static void start(harness_server *s, const char *const *extra)
{
    harness_server_start(s, extra);
    harness_wait_metric(s, "reap_frame", HARNESS_GE, 2, 10.0);
}

/* The number after `prefix` in text, or -1. */
static double number_after(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);

    return p != NULL ? strtod(p + strlen(prefix), NULL) : -1;
}

/* Waits until the client printed text, reading the server's log meanwhile (a server whose
 * log pipe fills up stops); false at the deadline or when the client exited first. */
static bool wait_text_beside(harness_proc *run, harness_server *s, const char *text,
                             double timeout)
{
    double deadline = harness_now() + timeout;

    while (harness_now() < deadline && strstr(run->out, text) == NULL && !run->exited) {
        harness_proc_pump(run, 20);
        if (s != NULL)
            harness_proc_pump(&s->proc, 0);
    }
    return strstr(run->out, text) != NULL;
}

/* Waits for the client to exit, reading the server's log meanwhile; fails at the deadline. */
static void wait_exit_beside(harness_proc *run, harness_server *s, double timeout)
{
    double deadline = harness_now() + timeout;

    while (!run->exited && harness_now() < deadline) {
        harness_proc_pump(run, 20);
        if (s != NULL)
            harness_proc_pump(&s->proc, 0);
    }
    harness_proc_pump(run, 0);
    if (!run->exited)
        fail_msg("reap-client did not finish within %g s:\n%s", timeout, run->out);
}

/* Waits (with the client's output read meanwhile) until path holds text; false at the
 * deadline. */
static bool wait_for_file_text(harness_proc *p, const char *path, const char *text,
                               double timeout)
{
    double deadline = harness_now() + timeout;

    while (harness_now() < deadline) {
        char *body = read_text_file(path);
        bool found = body != NULL && strstr(body, text) != NULL;

        free(body);
        if (found)
            return true;
        harness_proc_pump(p, 50);
        if (p->exited)
            return false;
    }
    return false;
}

static void test_a_server_killed_mid_run_is_said_at_once_and_the_run_exits_1(void **state)
{
    char out_dir[] = "/tmp/reap-load-faults-XXXXXX";
    harness_server s;
    harness_proc run;
    double started, killed, from;
    char *json, *csv, path[300];

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, NULL);
    const char *args[] = { "--server", s.endpoint, "--bots", "8", "--duration", "8", "--hold",
                           "1", "--timeout", "2", "--seed", "3", "--out", out_dir,
                           "--no-progress", NULL };
    started = harness_now();
    harness_proc_start(&run, "reap-client", args);
    if (!wait_text_beside(&run, &s, "[  2.0s]", 20.0))
        fail_msg("no progress line at 2 s:\n%s", run.out);

    killed = harness_now();
    harness_proc_kill(&s.proc);

    if (!wait_text_beside(&run, NULL, "the server stopped answering at", 10.0))
        fail_msg("the loss was not said while the run went:\n%s", run.out);
    wait_exit_beside(&run, NULL, 30.0);
    if (run.status != EXIT_FAILED)
        fail_msg("expected exit %d, got %d:\n%s", EXIT_FAILED, run.status, run.out);
    /* the summary names the moment, and how much of the run had no server */
    from = number_after(run.out, "server lost: the server stopped answering at ");
    if (from < 0 || strstr(run.out, " s of the run had no server") == NULL)
        fail_msg("the summary does not say when the server went:\n%s", run.out);
    /* the client's clock starts a little after ours: the moment is the kill's, within 1 s */
    if (from > killed - started + 0.2 || from < killed - started - 1.0)
        fail_msg("the server was killed %.2f s in, the summary says %.1f s:\n%s",
                 killed - started, from, run.out);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"server_outages\": [{\"from_seconds\": "));
    assert_non_null(strstr(json, "\"to_seconds\": null}]"));
    assert_true(json_int(json, "server_lost") == 1);
    snprintf(path, sizeof path, "%s/timeline.csv", out_dir);
    csv = read_text_file(path);
    assert_non_null(csv);
    assert_true(strlen(csv) > 3 && strcmp(csv + strlen(csv) - 3, ",1\n") == 0);
    free(json);
    free(csv);
    harness_proc_free(&run);
    harness_server_free(&s);
    remove_dir(out_dir);
}

static void test_a_server_restarted_on_the_same_port_is_said_to_answer_again(void **state)
{
    char out_dir[] = "/tmp/reap-load-faults-XXXXXX", port[16];
    harness_server s, again;
    harness_proc run;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, NULL);
    snprintf(port, sizeof port, "%u", s.port);
    const char *args[] = { "--server", s.endpoint, "--bots", "8", "--duration", "14", "--hold",
                           "1", "--timeout", "2", "--seed", "4", "--out", out_dir,
                           "--no-progress", NULL };
    const char *const same_port[] = { "--port", port, NULL };
    harness_proc_start(&run, "reap-client", args);
    if (!wait_text_beside(&run, &s, "[  2.0s]", 20.0))
        fail_msg("no progress line at 2 s:\n%s", run.out);
    harness_proc_kill(&s.proc);
    if (!wait_text_beside(&run, NULL, "the server stopped answering at", 10.0))
        fail_msg("the loss was not said:\n%s", run.out);

    start(&again, same_port);

    if (!wait_text_beside(&run, &again, "the server answers again at", 15.0))
        fail_msg("the server that came back was not said:\n%s", run.out);
    wait_exit_beside(&run, &again, 30.0);
    assert_int_equal(run.status, EXIT_FAILED);
    assert_non_null(strstr(run.out, "server lost: the server stopped answering at "));
    assert_non_null(strstr(run.out, " and answered again at "));
    assert_int_equal(harness_server_stop(&again), 0);
    harness_server_free(&again);
    harness_server_free(&s);
    harness_proc_free(&run);
    remove_dir(out_dir);
}

static void test_a_run_killed_with_sigkill_leaves_a_partial_report_merge_and_compare_read(
    void **state)
{
    char out_dir[] = "/tmp/reap-load-faults-XXXXXX", merged[] = "/tmp/reap-load-faults-XXXXXX";
    char cmp[] = "/tmp/reap-load-faults-XXXXXX", path[300];
    harness_server s;
    harness_proc run, m, c;
    char *csv, *html;
    int lines = 0;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    assert_non_null(mkdtemp(merged));
    assert_non_null(mkdtemp(cmp));
    start(&s, NULL);
    const char *args[] = { "--server", s.endpoint, "--bots", "5", "--duration", "60", "--hold",
                           "1", "--checkpoint", "1", "--seed", "5", "--out", out_dir,
                           "--no-progress", NULL };
    harness_proc_start(&run, "reap-client", args);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    /* a checkpoint with joins in it, three seconds into the run */
    if (!wait_for_file_text(&run, path, "\"elapsed_seconds\": 3.", 30.0))
        fail_msg("no checkpoint 3 s into the run:\n%s", run.out);

    harness_proc_kill(&run);
    assert_int_equal(run.status, 128 + SIGKILL);

    const char *merge_args[] = { "merge", out_dir, "--out", merged, NULL };
    if (harness_run("reap-client", merge_args, 30.0, &m) != 0)
        fail_msg("merge refused the killed run's report:\n%s", m.out);
    assert_non_null(strstr(m.out, "partial: this report is a checkpoint of a run that did not "
                                  "finish: it stops at "));
    snprintf(path, sizeof path, "%s/report.html", merged);
    html = read_text_file(path);
    assert_non_null(html);
    assert_non_null(strstr(html, "Partial report"));
    const char *compare_args[] = { "compare", out_dir, merged, "--out", cmp, NULL };
    if (harness_run("reap-client", compare_args, 30.0, &c) != 0)
        fail_msg("compare refused the killed run's report:\n%s", c.out);
    assert_non_null(strstr(c.out, "s, partial) vs new"));
    /* the CSV has the seconds up to the kill, each row whole */
    snprintf(path, sizeof path, "%s/timeline.csv", out_dir);
    csv = read_text_file(path);
    assert_non_null(csv);
    for (char *p = csv; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_true(lines >= 1 + 3);
    assert_true(csv[strlen(csv) - 1] == '\n');
    free(csv);
    free(html);
    harness_proc_free(&run);
    harness_proc_free(&m);
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
    remove_dir(out_dir);
    remove_dir(merged);
    remove_dir(cmp);
}

/* Bytes of a file, or 0. */
static size_t file_size(const char *dir, const char *name)
{
    char path[300];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static void test_a_disk_with_little_room_still_gets_report_json_and_exit_3(void **state)
{
    char sizing[] = "/tmp/reap-load-faults-XXXXXX", mnt[] = "/tmp/reap-load-faults-XXXXXX";
    char keep[] = "/tmp/reap-load-faults-XXXXXX", client[300], script[1200], path[300];
    char merged_dir[64];
    harness_server s;
    harness_proc probe, sized, run;
    char *rc_text, *merge_log;
    size_t pages;

    (void)state;
    const char *probe_args[] = { "-rm", "true", NULL };
    harness_proc_start_cmd(&probe, "unshare", probe_args, NULL);
    if (!harness_proc_wait(&probe, 10.0) || probe.status != 0) {
        harness_proc_free(&probe);
        skip(); /* no user and mount namespaces here: no tmpfs of our own */
        return;
    }
    harness_proc_free(&probe);
    assert_non_null(mkdtemp(sizing));
    assert_non_null(mkdtemp(mnt));
    assert_non_null(mkdtemp(keep));
    start(&s, NULL);
    /* The same run on a roomy disk says what its data takes. */
    const char *args[] = { "--server", s.endpoint, "--bots", "4", "--duration", "3", "--hold",
                           "1", "--seed", "6", "--out", sizing, "--quiet", NULL };
    assert_int_equal(run_client_beside(&s, args, 30.0, &sized), 0);
    pages = (file_size(sizing, "report.json") + 4095) / 4096 +
            (file_size(sizing, "report.dat") + 4095) / 4096 +
            (file_size(sizing, "timeline.csv") + 4095) / 4096 + 2;
    assert_true(file_size(sizing, "report.html") > 4 * 4096); /* it cannot fit in the slack */

    /* A tmpfs with room for the data and two pages more: report.json first, then what fits. */
    snprintf(client, sizeof client, "%s/reap-client", harness_build_dir());
    snprintf(script, sizeof script,
             "mount -t tmpfs -o size=%zuk tmpfs '%s' || exit 100; "
             "'%s' --server %s --bots 4 --duration 3 --hold 1 --seed 6 --out '%s/out' "
             "--quiet; echo $? > '%s/client.rc'; "
             "'%s' merge '%s/out' --out '%s/merged' > '%s/merge.log' 2>&1; "
             "echo $? >> '%s/client.rc'",
             pages * 4, mnt, client, s.endpoint, mnt, keep, client, mnt, keep, keep, keep);
    const char *sh_args[] = { "-rm", "sh", "-c", script, NULL };
    harness_proc_start_cmd(&run, "unshare", sh_args, NULL);
    wait_exit_beside(&run, &s, 60.0);
    if (run.status == 100) {
        harness_proc_free(&run);
        harness_proc_free(&sized);
        harness_server_free(&s);
        skip(); /* tmpfs cannot be mounted here */
        return;
    }

    snprintf(path, sizeof path, "%s/client.rc", keep);
    rc_text = read_text_file(path);
    assert_non_null(rc_text);
    if (atoi(rc_text) != EXIT_FILES)
        fail_msg("expected exit %d on a full disk (%zu KiB), got %s:\n%s", EXIT_FILES, pages * 4,
                 rc_text, run.out);
    /* the report came first and merge reads it; what did not fit is named */
    if (atoi(strchr(rc_text, '\n') + 1) != 0) {
        snprintf(path, sizeof path, "%s/merge.log", keep);
        merge_log = read_text_file(path);
        fail_msg("merge could not read the report on the full disk:\n%s", merge_log);
    }
    assert_non_null(strstr(run.out, "/out/report.html': No space left on device"));
    assert_non_null(strstr(run.out, "files not written ("));
    assert_null(strstr(run.out, "report.json':"));
    free(rc_text);
    harness_proc_free(&sized);
    harness_proc_free(&run);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
    remove_dir(sizing);
    rmdir(mnt);
    snprintf(merged_dir, sizeof merged_dir, "%s/merged", keep);
    remove_dir(merged_dir);
    remove_dir(keep);
}

/* ---- a server that is always busy ---------------------------------------------------------- */

enum { BUSY_RETRY_MS = 1500, BUSY_HELLOS_MAX = 64 };

typedef struct busy_server {
    ENetHost *host;
    unsigned port;
    struct { char name[32]; double at; } hellos[BUSY_HELLOS_MAX];
    int n_hellos;
} busy_server;

/* Answers every Hello with ERROR_CODE_BUSY, retry_after_ms and disconnect, as an admission
 * controller does, and closes the connection after it. */
static void busy_server_service(busy_server *b, int wait_ms)
{
    static uint8_t arena_buf[65536];
    ENetEvent ev;

    while (enet_host_service(b->host, &ev, wait_ms) > 0) {
        wait_ms = 0;
        if (ev.type != ENET_EVENT_TYPE_RECEIVE)
            continue;
        msg_arena arena;
        Reap__Envelope *env, reply = REAP__ENVELOPE__INIT;
        Reap__Error error = REAP__ERROR__INIT;
        uint8_t out[512];
        size_t len;

        msg_arena_init(&arena, arena_buf, sizeof arena_buf);
        if (msg_decode(&arena, ev.packet->data, ev.packet->dataLength, 0, &env) == MSG_OK &&
            env->body_case == REAP__ENVELOPE__BODY_HELLO && b->n_hellos < BUSY_HELLOS_MAX) {
            snprintf(b->hellos[b->n_hellos].name, sizeof b->hellos[0].name, "%s",
                     env->hello->player_name);
            b->hellos[b->n_hellos++].at = harness_now();
            error.code = REAP__ERROR_CODE__ERROR_CODE_BUSY;
            error.text = (char *)"the server is busy: try again in 1.5 s";
            error.request_seq = env->seq;
            error.disconnect = true;
            error.retry_after_ms = BUSY_RETRY_MS;
            reply.seq = env->seq;
            reply.body_case = REAP__ENVELOPE__BODY_ERROR;
            reply.error = &error;
            assert_int_equal(msg_encode(&reply, out, sizeof out, &len), MSG_OK);
            enet_peer_send(ev.peer, MSG_CHANNEL_CONTROL,
                           enet_packet_create(out, len, ENET_PACKET_FLAG_RELIABLE));
            enet_peer_disconnect_later(ev.peer, 0);
        }
        enet_packet_destroy(ev.packet);
    }
}

static void test_a_busy_server_is_a_refusal_and_is_asked_again_only_when_it_said(void **state)
{
    char out_dir[] = "/tmp/reap-load-faults-XXXXXX", endpoint[64], path[300];
    ENetAddress address = { .port = 0 };
    busy_server b = { 0 };
    harness_proc run;
    char *json;
    int comebacks = 0;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    assert_int_equal(enet_initialize(), 0);
    enet_address_set_host_ip(&address, "127.0.0.1");
    b.host = enet_host_create(&address, 32, MSG_CHANNEL_COUNT, 0, 0);
    assert_non_null(b.host);
    b.port = b.host->address.port;
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%u", b.port);
    const char *args[] = { "--server", endpoint, "--bots", "2", "--duration", "6", "--timeout",
                           "2", "--seed", "7", "--out", out_dir, "--no-progress", NULL };
    harness_proc_start(&run, "reap-client", args);

    double deadline = harness_now() + 30.0;
    while (!run.exited && harness_now() < deadline) {
        busy_server_service(&b, 5);
        harness_proc_pump(&run, 0);
    }
    if (!run.exited)
        fail_msg("the run did not end:\n%s", run.out);

    /* no bot ever joined: exit 1, and the summary says the server refused, not failed */
    assert_int_equal(run.status, EXIT_FAILED);
    assert_non_null(strstr(run.out, "the server refused every visit"));
    assert_non_null(strstr(run.out, "times the server answered \"busy, retry after\""));
    assert_true(b.n_hellos >= 4);
    /* each bot came back no sooner than the server said (and not much later): each hello
     * against the same bot's next one */
    for (int i = 0; i < b.n_hellos; i++)
        for (int k = i + 1; k < b.n_hellos; k++) {
            if (strcmp(b.hellos[i].name, b.hellos[k].name) != 0)
                continue;
            double gap = b.hellos[k].at - b.hellos[i].at;
            if (gap < BUSY_RETRY_MS * 1e-3 - 0.05 || gap > BUSY_RETRY_MS * 1.25e-3 + 1.0)
                fail_msg("%s came back %.3f s after a busy answer that said %d ms:\n%s",
                         b.hellos[i].name, gap, BUSY_RETRY_MS, run.out);
            comebacks++;
            break;
        }
    assert_true(comebacks >= 2);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_true(json_int(json, "refused_busy") >= b.n_hellos - 2);
    assert_true(json_int(json, "refused_busy") <= b.n_hellos);
    assert_true(json_int(json, "errors") == 0);
    free(json);
    harness_proc_free(&run);
    enet_host_destroy(b.host);
    enet_deinitialize();
    remove_dir(out_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_server_killed_mid_run_is_said_at_once_and_the_run_exits_1),
        cmocka_unit_test(test_a_server_restarted_on_the_same_port_is_said_to_answer_again),
        cmocka_unit_test(test_a_run_killed_with_sigkill_leaves_a_partial_report_merge_and_compare_read),
        cmocka_unit_test(test_a_disk_with_little_room_still_gets_report_json_and_exit_3),
        cmocka_unit_test(test_a_busy_server_is_a_refusal_and_is_asked_again_only_when_it_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
