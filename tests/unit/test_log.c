/*
 * test_log.c - log lines as operators' tools read them: JSON objects that parse, journald
 * priority prefixes only when stderr is the journal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "json.h"
#include "log.h"

static int reset(void **state)
{
    (void)state;
    unsetenv("JOURNAL_STREAM");
    log_set_format(LOG_FORMAT_TEXT);
    return 0;
}

static void test_a_json_line_has_time_level_component_and_message(void **state)
{
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);

    log_format_line(LOG_WARN, "gc: settings refused", NULL, 0, line, sizeof line);

    assert_int_equal(line[0], '{');
    assert_int_equal(line[strlen(line) - 1], '}');
    assert_non_null(strstr(line, "\"time\":\"20"));
    assert_non_null(strstr(line, "\"level\":\"warn\""));
    assert_non_null(strstr(line, "\"component\":\"gc\""));
    assert_non_null(strstr(line, "\"message\":\"settings refused\""));
}

static void test_a_json_message_escapes_quotes_newlines_and_control_bytes(void **state)
{
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);

    log_format_line(LOG_INFO, "player \"a\\b\"\nleft\x01", NULL, 0, line, sizeof line);

    assert_non_null(strstr(line, "\"message\":\"player \\\"a\\\\b\\\"\\nleft\\u0001\"}"));
    assert_non_null(strstr(line, "\"component\":\"engine\""));
}

static void test_text_lines_carry_a_priority_only_when_stderr_is_the_journal(void **state)
{
    struct stat st;
    char env[64], line[512];

    (void)state;
    log_set_format(LOG_FORMAT_TEXT);
    log_format_line(LOG_ERROR, "boom", NULL, 0, line, sizeof line);
    assert_int_not_equal(line[0], '<');

    assert_int_equal(fstat(STDERR_FILENO, &st), 0);
    snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", env, 1);
    log_set_format(LOG_FORMAT_TEXT);

    log_format_line(LOG_ERROR, "boom", NULL, 0, line, sizeof line);
    assert_true(log_to_journal());
    assert_memory_equal(line, "<3>", 3);
    log_format_line(LOG_WARN, "hm", NULL, 0, line, sizeof line);
    assert_memory_equal(line, "<4>", 3);
}

static void test_a_journal_stream_that_is_not_stderr_adds_no_prefix(void **state)
{
    (void)state;
    setenv("JOURNAL_STREAM", "1:1", 1);

    log_set_format(LOG_FORMAT_TEXT);

    assert_false(log_to_journal());
}

static void test_json_escape_never_overflows_its_buffer(void **state)
{
    char small[8];

    (void)state;
    size_t n = json_escape(small, sizeof small, "ab\"cd\"ef");

    assert_true(n < sizeof small);
    assert_string_equal(small, "ab\\\"cd"); /* the next escape would not fit */
}


static void test_an_events_fields_follow_as_json_properties_and_not_in_text(void **state)
{
    const log_field fields[] = { { "cvar", "gc.MinGCClusterSize" }, { "value", "7\"" } };
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);
    log_format_line(LOG_INFO, "console: gc.MinGCClusterSize set to 7", fields, 2, line,
                    sizeof line);

    assert_non_null(strstr(line, ",\"cvar\":\"gc.MinGCClusterSize\",\"value\":\"7\\\"\"}"));

    log_set_format(LOG_FORMAT_TEXT);
    log_format_line(LOG_INFO, "console: gc.MinGCClusterSize set to 7", fields, 2, line,
                    sizeof line);
    assert_null(strstr(line, "\"cvar\""));
}

static void test_a_json_line_cut_short_is_still_one_whole_object(void **state)
{
    const log_field fields[] = { { "player", "ana" } };
    char line[100];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);

    log_format_line(LOG_INFO, "a \"message\" far longer than the line it has to fit in, by a lot",
                    fields, 1, line, sizeof line);

    assert_true(strlen(line) < sizeof line);
    assert_memory_equal(line + strlen(line) - 2, "\"}", 2); /* the message string is closed */
    assert_non_null(strstr(line, "\"component\":\"engine\",\"message\":\"a \\\"message\\\" f"));
    assert_null(strstr(line, "player")); /* no room left for it */
}

static void test_every_json_line_has_a_component(void **state)
{
    static const char *const lines[][2] = {
        { "reap-server 0.1.0: 1 world(s) at 30 Hz", "engine" },
        { "listening on udp 0.0.0.0:7777", "net" },
        { "admin on http://127.0.0.1:7780 (GET /)", "admin" },
        { "stopping (SIGTERM)", "engine" },
        { "stopped", "engine" },
        { "deploy/reap.ini:3: unknown key", "config" },
        { "World0: 100 persistent props", "world" },
    };
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char want[64];

        log_format_line(LOG_INFO, lines[i][0], NULL, 0, line, sizeof line);
        snprintf(want, sizeof want, "\"component\":\"%s\"", lines[i][1]);
        if (strstr(line, want) == NULL)
            fail_msg("'%s' -> %s, expected %s", lines[i][0], line, want);
    }
}

static void test_a_signal_is_a_field_not_a_component(void **state)
{
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);
    log_format_line(LOG_INFO, "SIGHUP: re-read deploy/reap.ini: 1 console variable(s) changed",
                    NULL, 0, line, sizeof line);

    assert_non_null(strstr(line, "\"component\":\"engine\""));
    assert_non_null(strstr(line, "\"signal\":\"SIGHUP\""));
    assert_null(strstr(line, "\"component\":\"SIGHUP\""));
}

static void test_join_and_leave_lines_carry_the_player_and_world_as_fields(void **state)
{
    char line[512];

    (void)state;
    log_set_format(LOG_FORMAT_JSON);
    log_format_line(LOG_INFO, "player 7 'bot-3' joined World1 from 127.0.0.1:5000", NULL, 0,
                    line, sizeof line);
    assert_non_null(strstr(line, "\"component\":\"net\""));
    assert_non_null(strstr(line, "\"player\":\"7\""));
    assert_non_null(strstr(line, "\"world\":\"World1\""));

    log_format_line(LOG_INFO, "player 7 'bot-3' left World1 (timeout); destroyed its pawn", NULL,
                    0, line, sizeof line);
    assert_non_null(strstr(line, "\"player\":\"7\""));
    assert_non_null(strstr(line, "\"world\":\"World1\""));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, reset, reset)
    const struct CMUnitTest tests[] = {
        T(test_a_json_line_has_time_level_component_and_message),
        T(test_a_json_message_escapes_quotes_newlines_and_control_bytes),
        T(test_text_lines_carry_a_priority_only_when_stderr_is_the_journal),
        T(test_a_journal_stream_that_is_not_stderr_adds_no_prefix),
        T(test_json_escape_never_overflows_its_buffer),
        T(test_an_events_fields_follow_as_json_properties_and_not_in_text),
        T(test_every_json_line_has_a_component),
        T(test_a_signal_is_a_field_not_a_component),
        T(test_join_and_leave_lines_carry_the_player_and_world_as_fields),
        T(test_a_json_line_cut_short_is_still_one_whole_object),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
