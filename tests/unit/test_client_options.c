/*
 * test_client_options.c - reap-client's command line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

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

    assert_string_equal(o.session.host, "127.0.0.1");
    assert_int_equal(o.session.port, 7777);
    assert_string_equal(o.session.world, "World1");
    assert_int_equal(o.session.spawn, 20);
    assert_true(o.session.hold == 1.5);
    assert_int_equal(o.session.disconnect, CLIENT_DISCONNECT_ABRUPT);
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

static void test_an_unknown_flag_given_last_is_called_unknown(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "--bots", "2", "--duration", "1",
                     "--frobnicate" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "unknown option '--frobnicate'"));
    assert_null(strstr(err, "needs a value"));
}

static void test_a_flag_whose_value_is_the_next_flag_needs_a_value(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "--bots", "2" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "option '--server' needs a value"));
}

static void test_short_help_and_version_flags_work(void **state)
{
    client_options o;
    char *help[] = { "reap-client", "-h" };
    char *version[] = { "reap-client", "-V" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(help), help, err), CLIENT_OPTIONS_EXIT);
    assert_true(o.help);
    assert_int_equal(parse(&o, ARGC(version), version, err), CLIENT_OPTIONS_EXIT);
    assert_true(o.version);
}

static void test_range_checks_keep_their_messages_in_both_forms(void **state)
{
    client_options o;
    char *spaced[] = { "reap-client", "--server", "h:1", "--bots", "1001", "--duration", "1" };
    char *equals[] = { "reap-client", "--server", "h:1", "--bots=0", "--duration", "1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(spaced), spaced, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "bad value '1001' for --bots: expected an integer in [1, 1000]"));
    assert_int_equal(parse(&o, ARGC(equals), equals, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "bad value '0' for --bots"));
}

static void test_a_switch_given_a_value_is_refused(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "--quiet=yes" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'--quiet' takes no value"));
}

static void test_a_positional_argument_is_refused(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "stray" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "unexpected argument 'stray'"));
}

static void test_an_admin_token_file_is_read_and_checked(void **state)
{
    client_options o;
    char good[] = "/tmp/reap-test-token-XXXXXX", bad[] = "/tmp/reap-test-token-XXXXXX";
    char *argv[] = { "reap-client", "--server", "h:1", "--bots", "1", "--duration", "1",
                     "--admin-token", good };
    char *short_argv[] = { "reap-client", "--server", "h:1", "--bots", "1", "--duration", "1",
                           "--admin-token", bad };
    char *missing[] = { "reap-client", "--server", "h:1", "--bots", "1", "--duration", "1",
                        "--admin-token", "/nonexistent/token" };
    char err[256];
    int fd;

    (void)state;
    fd = mkstemp(good);
    assert_true(fd >= 0 && write(fd, "0123456789abcdef0123\n", 21) == 21);
    close(fd);
    fd = mkstemp(bad);
    assert_true(fd >= 0 && write(fd, "short\n", 6) == 6);
    close(fd);

    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_OK);
    assert_string_equal(o.admin_token, "0123456789abcdef0123");
    assert_int_equal(parse(&o, ARGC(short_argv), short_argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "expected 16 to 256 characters"));
    assert_int_equal(parse(&o, ARGC(missing), missing, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "/nonexistent/token"));
    unlink(good);
    unlink(bad);
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
        cmocka_unit_test(test_an_unknown_flag_given_last_is_called_unknown),
        cmocka_unit_test(test_a_flag_whose_value_is_the_next_flag_needs_a_value),
        cmocka_unit_test(test_short_help_and_version_flags_work),
        cmocka_unit_test(test_range_checks_keep_their_messages_in_both_forms),
        cmocka_unit_test(test_a_switch_given_a_value_is_refused),
        cmocka_unit_test(test_a_positional_argument_is_refused),
        cmocka_unit_test(test_an_admin_token_file_is_read_and_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
