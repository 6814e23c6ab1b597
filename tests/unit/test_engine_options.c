/*
 * test_engine_options.c - reap-server's command line: defaults, flags, clear errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_options.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static engine_options_result parse(engine_options *o, int argc, char **argv, char *err)
{
    engine_options_default(o);
    err[0] = '\0';
    return engine_options_parse(o, argc, argv, err, 256);
}

static void test_defaults_match_the_design(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    assert_int_equal(o.port, 7777);
    assert_string_equal(o.bind, "0.0.0.0");
    assert_int_equal(o.worlds, 1);
    assert_int_equal(o.tick_hz, 30);
    assert_string_equal(o.admin_bind, "127.0.0.1");
    assert_int_equal(o.admin_port, 7780);
    assert_int_equal(o.log_level, LOG_INFO);
}

static void test_flags_accept_a_separate_or_an_attached_value(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--port", "0", "--worlds=3", "--tick-hz", "60",
                     "--log-level=debug", "--max-players", "10", "--admin-port=0" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    assert_int_equal(o.port, 0);
    assert_int_equal(o.worlds, 3);
    assert_int_equal(o.tick_hz, 60);
    assert_int_equal(o.log_level, LOG_DEBUG);
    assert_int_equal(o.max_players, 10);
    assert_int_equal(o.admin_port, 0);
    assert_true(o.given & ENGINE_OPT_PORT);
}

static void test_cvar_flags_are_collected_in_order(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--cvar", "a.B=1", "--cvar=c.D=2" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    assert_int_equal(o.cvar_count, 2);
    assert_string_equal(o.cvars[0], "a.B=1");
    assert_string_equal(o.cvars[1], "c.D=2");
}

static void test_an_unknown_flag_is_named_in_the_error(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--prot", "1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--prot"));
}

static void test_an_out_of_range_value_names_the_flag_value_and_range(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--port", "70000" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--port"));
    assert_non_null(strstr(err, "70000"));
    assert_non_null(strstr(err, "[0, 65535]"));
}

static void test_a_non_numeric_value_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--worlds", "two" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'two'"));
}

static void test_zero_worlds_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--worlds", "0" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
}

static void test_a_flag_without_its_value_is_an_error(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--port" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "needs a value"));
}

static void test_an_unknown_flag_given_last_is_named_as_unknown(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--frobnicate" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "unknown option '--frobnicate'"));
}

static void test_an_unknown_flag_is_named_as_unknown_wherever_it_stands(void **state)
{
    engine_options o;
    char *first[] = { "reap-server", "--frobnicate", "--port", "1" };
    char *middle[] = { "reap-server", "--port", "1", "--frobnicate=2", "--worlds", "2" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(first), first, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "unknown option '--frobnicate'"));
    assert_int_equal(parse(&o, ARGC(middle), middle, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "unknown option '--frobnicate'"));
}

static void test_a_flag_followed_by_another_flag_needs_a_value(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--port", "--worlds", "2" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "option '--port' needs a value"));
}

static void test_short_help_and_version_flags_work(void **state)
{
    engine_options o;
    char *help[] = { "reap-server", "-h" };
    char *version[] = { "reap-server", "-V" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(help), help, err), ENGINE_OPTIONS_EXIT);
    assert_true(o.help);
    assert_int_equal(parse(&o, ARGC(version), version, err), ENGINE_OPTIONS_EXIT);
    assert_true(o.version);
}

static void test_a_switch_given_a_value_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--agones=yes" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'--agones' takes no value"));
}

static void test_a_range_check_survives_the_equals_form(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--tick-hz=0" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "bad value '0' for --tick-hz: expected an integer in [1, 1000]"));
}

static void test_a_bind_address_that_is_not_ipv4_is_refused_while_parsing(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--bind", "1.2.3" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'1.2.3'"));
    assert_non_null(strstr(err, "IPv4"));
}

static void test_a_bad_log_level_lists_the_accepted_ones(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--log-level", "loud" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "debug, info, warn or error"));
}

static void test_a_cvar_flag_without_an_equals_sign_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--cvar", "gc.MinGCClusterSize" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "NAME=VALUE"));
}

static void test_help_and_version_ask_to_exit(void **state)
{
    engine_options o;
    char *help[] = { "reap-server", "--help" };
    char *version[] = { "reap-server", "--version" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(help), help, err), ENGINE_OPTIONS_EXIT);
    assert_true(o.help);
    assert_int_equal(parse(&o, ARGC(version), version, err), ENGINE_OPTIONS_EXIT);
    assert_true(o.version);
    assert_non_null(strstr(engine_options_usage(), "--admin-port"));
}

static void test_a_positional_argument_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "reap.ini" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "reap.ini"));
}


/* ---- the admin token ----------------------------------------------------------------- */

static void clear_token_env(void)
{
    unsetenv("REAP_ADMIN_TOKEN");
    unsetenv("REAP_ADMIN_TOKEN_FILE");
}

static void test_an_admin_bind_off_loopback_without_a_token_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--admin-bind", "0.0.0.0" };
    char err[512];

    (void)state;
    clear_token_env();
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);
    assert_int_equal(engine_options_load_admin_token(&o, err, sizeof err), 0);

    assert_int_equal(engine_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "0.0.0.0"));
    assert_non_null(strstr(err, "--admin-token"));
}

static void test_loopback_addresses_need_no_token(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--admin-bind", "127.0.0.2" };
    char err[512];

    (void)state;
    clear_token_env();
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);
    assert_int_equal(engine_options_load_admin_token(&o, err, sizeof err), 0);

    assert_int_equal(engine_options_check(&o, err, sizeof err), 0);
    assert_true(engine_address_is_loopback("127.255.0.1"));
    assert_false(engine_address_is_loopback("10.0.0.1"));
}

static void test_the_token_file_is_read_without_its_trailing_newline(void **state)
{
    engine_options o;
    char path[] = "/tmp/reap-test-token-XXXXXX";
    char arg[64], err[512];
    int fd = mkstemp(path);
    const char *text = "  s3cret-token-of-24-chars\n";

    (void)state;
    clear_token_env();
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    snprintf(arg, sizeof arg, "--admin-token=%s", path);
    char *argv[] = { "reap-server", arg, "--admin-bind", "0.0.0.0" };
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    int r = engine_options_load_admin_token(&o, err, sizeof err);
    unlink(path);

    assert_int_equal(r, 0);
    assert_string_equal(o.admin_token, "s3cret-token-of-24-chars");
    assert_int_equal(engine_options_check(&o, err, sizeof err), 0);
}

static void test_a_short_token_from_the_environment_is_refused(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server" };
    char err[512];

    (void)state;
    clear_token_env();
    setenv("REAP_ADMIN_TOKEN", "short", 1);
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    int r = engine_options_load_admin_token(&o, err, sizeof err);
    clear_token_env();

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, "$REAP_ADMIN_TOKEN"));
    assert_non_null(strstr(err, "16"));
}

static void test_a_missing_token_file_is_named(void **state)
{
    engine_options o;
    char *argv[] = { "reap-server", "--admin-token", "/nonexistent/token" };
    char err[512];

    (void)state;
    clear_token_env();
    assert_int_equal(parse(&o, ARGC(argv), argv, err), ENGINE_OPTIONS_OK);

    assert_int_equal(engine_options_load_admin_token(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/token"));
}

/* ---- log format and Agones flags ----------------------------------------------------- */

static void test_log_format_accepts_text_or_json_only(void **state)
{
    engine_options o;
    char *json[] = { "reap-server", "--log-format", "json" };
    char *xml[] = { "reap-server", "--log-format=xml" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(json), json, err), ENGINE_OPTIONS_OK);
    assert_int_equal(o.log_format, LOG_FORMAT_JSON);
    assert_int_equal(parse(&o, ARGC(xml), xml, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'xml'"));
    assert_non_null(strstr(err, "text or json"));
}

static void test_agones_flags_take_no_value(void **state)
{
    engine_options o;
    char *on[] = { "reap-server", "--agones-player-tracking" };
    char *bad[] = { "reap-server", "--agones=yes" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(on), on, err), ENGINE_OPTIONS_OK);
    assert_true(o.agones);
    assert_true(o.agones_alpha_players);
    assert_int_equal(parse(&o, ARGC(bad), bad, err), ENGINE_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--agones"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_match_the_design),
        cmocka_unit_test(test_flags_accept_a_separate_or_an_attached_value),
        cmocka_unit_test(test_cvar_flags_are_collected_in_order),
        cmocka_unit_test(test_an_unknown_flag_is_named_in_the_error),
        cmocka_unit_test(test_an_out_of_range_value_names_the_flag_value_and_range),
        cmocka_unit_test(test_a_non_numeric_value_is_refused),
        cmocka_unit_test(test_zero_worlds_is_refused),
        cmocka_unit_test(test_a_flag_without_its_value_is_an_error),
        cmocka_unit_test(test_an_unknown_flag_given_last_is_named_as_unknown),
        cmocka_unit_test(test_an_unknown_flag_is_named_as_unknown_wherever_it_stands),
        cmocka_unit_test(test_a_flag_followed_by_another_flag_needs_a_value),
        cmocka_unit_test(test_short_help_and_version_flags_work),
        cmocka_unit_test(test_a_switch_given_a_value_is_refused),
        cmocka_unit_test(test_a_range_check_survives_the_equals_form),
        cmocka_unit_test(test_a_bind_address_that_is_not_ipv4_is_refused_while_parsing),
        cmocka_unit_test(test_a_bad_log_level_lists_the_accepted_ones),
        cmocka_unit_test(test_a_cvar_flag_without_an_equals_sign_is_refused),
        cmocka_unit_test(test_help_and_version_ask_to_exit),
        cmocka_unit_test(test_a_positional_argument_is_refused),
        cmocka_unit_test(test_an_admin_bind_off_loopback_without_a_token_is_refused),
        cmocka_unit_test(test_loopback_addresses_need_no_token),
        cmocka_unit_test(test_the_token_file_is_read_without_its_trailing_newline),
        cmocka_unit_test(test_a_short_token_from_the_environment_is_refused),
        cmocka_unit_test(test_a_missing_token_file_is_named),
        cmocka_unit_test(test_log_format_accepts_text_or_json_only),
        cmocka_unit_test(test_agones_flags_take_no_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
