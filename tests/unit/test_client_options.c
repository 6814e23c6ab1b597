/*
 * test_client_options.c - reap-client's command line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static client_options_result parse(client_options *o, int argc, char **argv, char *err)
{
    client_options_default(o);
    err[0] = '\0';
    return client_options_parse(o, argc, argv, err, 256);
}

static void test_a_full_command_line_is_parsed(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--world", "World1",
                     "--spawn", "20", "--hold=1.5", "--disconnect", "abrupt" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_OK);

    assert_string_equal(o.host, "127.0.0.1");
    assert_int_equal(o.port, 7777);
    assert_string_equal(o.world, "World1");
    assert_int_equal(o.spawn, 20);
    assert_true(o.hold == 1.5);
    assert_int_equal(o.disconnect, CLIENT_DISCONNECT_ABRUPT);
}

static void test_the_server_endpoint_is_required(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--spawn", "1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--server"));
}

static void test_an_endpoint_without_a_valid_port_is_refused(void **state)
{
    char host[64], err[256];
    uint16_t port;

    (void)state;
    assert_false(client_parse_endpoint("localhost", host, sizeof host, &port, err, sizeof err));
    assert_false(client_parse_endpoint("localhost:", host, sizeof host, &port, err, sizeof err));
    assert_false(client_parse_endpoint("localhost:0", host, sizeof host, &port, err, sizeof err));
    assert_false(client_parse_endpoint("localhost:65536", host, sizeof host, &port, err,
                                       sizeof err));
    assert_false(client_parse_endpoint(":7777", host, sizeof host, &port, err, sizeof err));
    assert_true(client_parse_endpoint("localhost:7777", host, sizeof host, &port, err,
                                      sizeof err));
    assert_string_equal(host, "localhost");
    assert_int_equal(port, 7777);
}

static void test_a_bad_disconnect_mode_lists_the_accepted_ones(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "--disconnect", "rude" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "graceful or abrupt"));
}

static void test_negative_or_non_numeric_counts_and_times_are_refused(void **state)
{
    client_options o;
    char *spawn[] = { "reap-client", "--server", "h:1", "--spawn", "-3" };
    char *hold[] = { "reap-client", "--server", "h:1", "--hold", "soon" };
    char *timeout[] = { "reap-client", "--server", "h:1", "--timeout", "0" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(spawn), spawn, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--spawn"));
    assert_int_equal(parse(&o, ARGC(hold), hold, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--hold"));
    assert_int_equal(parse(&o, ARGC(timeout), timeout, err), CLIENT_OPTIONS_ERROR);
}

static void test_an_unknown_flag_is_named(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "--bogus" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--bogus"));
}

static void test_help_and_version_need_no_server(void **state)
{
    client_options o;
    char *help[] = { "reap-client", "--help" };
    char *version[] = { "reap-client", "--version" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(help), help, err), CLIENT_OPTIONS_EXIT);
    assert_int_equal(parse(&o, ARGC(version), version, err), CLIENT_OPTIONS_EXIT);
    assert_non_null(strstr(client_options_usage(), "--disconnect"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_full_command_line_is_parsed),
        cmocka_unit_test(test_the_server_endpoint_is_required),
        cmocka_unit_test(test_an_endpoint_without_a_valid_port_is_refused),
        cmocka_unit_test(test_a_bad_disconnect_mode_lists_the_accepted_ones),
        cmocka_unit_test(test_negative_or_non_numeric_counts_and_times_are_refused),
        cmocka_unit_test(test_an_unknown_flag_is_named),
        cmocka_unit_test(test_help_and_version_need_no_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
