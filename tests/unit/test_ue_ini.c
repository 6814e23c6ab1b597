/*
 * test_ue_ini.c - Unreal Engine ini files as UE reads them: the corpus in tests/data/ue/, each
 * file asserting which gc.* values apply; and reap's own files, which stay strict.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cvar.h"
#include "engine_options.h"
#include "ue_ini.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct loaded {
    engine_options opts;
    cvar_registry reg;
    int rc;
    char err[512];
    char log[1 << 16]; /* what the load wrote to stderr */
} loaded;

static loaded L;

/* Loads path into fresh options and cvars, capturing the warnings it logs. */
static void load(const char *path)
{
    char tmpl[] = "/tmp/reap-test-ue-log-XXXXXX";
    int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO);
    ssize_t n;

    assert_true(fd >= 0 && saved >= 0);
    unlink(tmpl);
    memset(&L, 0, sizeof L);
    engine_options_default(&L.opts);
    cvar_registry_init(&L.reg);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    L.rc = engine_options_load_config(&L.opts, &L.reg, path, L.err, sizeof L.err);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, L.log, sizeof L.log - 1);
    close(fd);
    L.log[n > 0 ? n : 0] = '\0';
}

static void load_text_as(const char *name, const char *text)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof path, "/tmp/reap-test-ue-%d-%s", (int)getpid(), name);
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    load(path);
    unlink(path);
}

static int count(const char *haystack, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static double gc(cvar_id id)
{
    return cvar_get(&L.reg, id);
}

static void assert_default(cvar_id id)
{
    if (L.reg.values[id] != cvar_def_get(id)->default_value)
        fail_msg("%s is %g, expected its default", cvar_def_get(id)->name, L.reg.values[id]);
}

#define assert_loaded()                                                                    \
    do {                                                                                   \
        if (L.rc != 0)                                                                     \
            fail_msg("load failed: %s\n%s", L.err, L.log);                                 \
    } while (0)

/* ---- the corpus --------------------------------------------------------------------------- */

static void test_a_lyra_like_default_engine_ini_loads_and_its_gc_values_apply(void **state)
{
    (void)state;
    load("tests/data/ue/LyraLike/Config/DefaultEngine.ini");

    assert_loaded();
    /* [SystemSettings] (30) outranks the project settings (61.1) that come later in the file. */
    assert_true(gc(CVAR_GC_TIME_BETWEEN_PURGING) == 30.0);
    assert_true(gc(CVAR_GC_INCREMENTAL_TIME_PER_FRAME) == 0.003);      /* +gc.X */
    assert_true(gc(CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY) == 1.0);    /* indented */
    assert_true(gc(CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT) == 0.004); /* quoted */
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 4.0);                      /* [ConsoleVariables] */
    assert_true(gc(CVAR_GC_LOW_MEMORY_THRESHOLD_MB) == 512.0);
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 8.0);
    assert_true(gc(CVAR_GC_CREATE_CLUSTERS) == 1.0);
    /* An empty value in [ConsoleVariables] keeps the project setting's 10. */
    assert_true(gc(CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 10.0);
    assert_int_equal(L.reg.sources[CVAR_GC_NUM_RETRIES_BEFORE_FORCING], CVAR_SOURCE_INI);
    assert_default(CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING);
    assert_default(CVAR_GC_NUM_WORKER_THREADS);
    assert_default(CVAR_NET_MAX_CLIENT_RATE); /* IpNetDriver's MaxClientRate is no cvar */
    assert_int_equal(L.opts.port, 7777);      /* [URL] Port is UE's, not [Server] */
    /* 43 ignored sections once each, 16 cvars reap lacks, one empty value. */
    assert_int_equal(L.opts.config_warnings, 43 + 16 + 1);
    assert_int_equal(count(L.log, "section [CoreRedirects] means nothing"), 1);
    assert_non_null(strstr(L.log, "DefaultEngine.ini:24: section [CoreRedirects]"));
    assert_non_null(strstr(L.log, "net.MaxRPCPerNetUpdate: not a console variable"));
}

static void test_unknown_sections_are_warned_once_each_with_file_and_line(void **state)
{
    (void)state;
    load("tests/data/ue/sections.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 9.0);
    assert_int_equal(L.opts.config_warnings, 7);
    assert_int_equal(count(L.log, "section [Kismet]"), 1); /* it appears twice */
    assert_non_null(strstr(L.log, "sections.ini:2: section [Kismet] means nothing to reap"));
    assert_non_null(strstr(L.log, "sections.ini:22: section [CoreUObject.Metadata]"));
}

static void test_lines_far_over_198_characters_with_crlf_are_read_whole(void **state)
{
    (void)state;
    load("tests/data/ue/long_lines.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 7.0);
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 6.0); /* 300 spaces and CRLF after the 6 */
    assert_int_equal(L.opts.config_warnings, 2);      /* the section, r.SomeRenderer... */
}

static void test_ues_console_variables_section_warns_about_cvars_reap_lacks(void **state)
{
    (void)state;
    load("tests/data/ue/console_variables.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 3.0);
    assert_non_null(strstr(L.log, "console_variables.ini:6: [ConsoleVariables] "
                                  "net.MaxRPCPerNetUpdate: not a console variable reap has"));
}

static void test_array_operators_add_remove_and_clear_within_their_section(void **state)
{
    (void)state;
    load("tests/data/ue/array_ops.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 9.0);           /* +7 then .9: the last */
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 2.0);               /* -3 leaves the project's 2 */
    assert_true(gc(CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 4.0); /* 4, +6, -6 */
    assert_true(gc(CVAR_GC_COLLECT_EVERY_FRAME) == 7.0);        /* ! clears only its section */
    assert_true(gc(CVAR_GC_INCREMENTAL_TIME_PER_FRAME) == 0.003);
    assert_default(CVAR_GC_GARBAGE_REFERENCE_TRACKING);         /* -X of nothing */
    assert_int_equal(L.opts.config_warnings, 0);
}

static void test_values_ue_writes_apply_and_values_reap_cannot_take_keep_the_one_before(
    void **state)
{
    (void)state;
    load("tests/data/ue/values.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_INCREMENTAL_TIME_PER_FRAME) == 0.004); /* "0.004" */
    assert_true(cvar_get(&L.reg, CVAR_NET_MAX_CLIENT_RATE) == 15000.0);
    assert_default(CVAR_GC_MIN_CLUSTER_SIZE);                    /* empty */
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 2.0);                /* yes: the project's 2 */
    assert_true(gc(CVAR_GC_CREATE_CLUSTERS) == 0.0);             /* False */
    assert_true(gc(CVAR_GC_VERIFY_ASSUMPTIONS) == 1.0);          /* True */
    assert_true(gc(CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 12.0); /* 12.000000 */
    assert_default(CVAR_GC_NUM_WORKER_THREADS);                  /* 999: out of range */
    assert_true(gc(CVAR_GC_TIME_BETWEEN_PURGING) == 45.0);
    assert_int_equal(L.opts.config_warnings, 3);
    assert_non_null(strstr(L.log, "values.ini:9: [SystemSettings] bad value 'yes' for "
                                  "gc.HistorySize"));
    assert_non_null(strstr(L.log, "values.ini:13: [SystemSettings] value '999' for "
                                  "gc.NumWorkerThreads is out of range"));
}

static void test_system_settings_outrank_project_settings_whatever_the_file_order(void **state)
{
    (void)state;
    load("tests/data/ue/precedence.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_TIME_BETWEEN_PURGING) == 20.0);      /* [SystemSettings] > project */
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 12.0);          /* [ConsoleVariables] > project */
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 6.0);               /* [SystemSettings] last */
    assert_true(gc(CVAR_GC_INCREMENTAL_TIME_PER_FRAME) == 0.001); /* only the project sets it */
}

static void test_the_command_line_outranks_every_section_of_a_ue_file(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[256];

    (void)state;
    engine_options_default(&opts);
    cvar_registry_init(&reg);
    assert_int_equal(cvar_set(&reg, "gc.HistorySize", "1", CVAR_SOURCE_COMMAND_LINE, err,
                              sizeof err), CVAR_OK);

    assert_int_equal(engine_options_load_config(&opts, &reg, "tests/data/ue/precedence.ini", err,
                                                sizeof err), 0);

    assert_true(cvar_get(&reg, CVAR_GC_HISTORY_SIZE) == 1.0);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 20.0);
}

static void test_an_indented_line_is_a_key_of_its_own(void **state)
{
    (void)state;
    load("tests/data/ue/indented.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 6.0);
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 4.0);
    assert_true(gc(CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 3.0);
}

static void test_a_utf16le_file_with_bom_is_read(void **state)
{
    (void)state;
    load("tests/data/ue/utf16le_bom.ini");

    assert_loaded();
    assert_true(gc(CVAR_GC_MIN_CLUSTER_SIZE) == 13.0);
    assert_non_null(strstr(L.log, "(UTF-16)"));
}

static void test_a_typo_in_server_stops_the_server_even_in_a_ue_file(void **state)
{
    (void)state;
    load("tests/data/ue/server_typo.ini");

    assert_int_equal(L.rc, -1);
    assert_non_null(strstr(L.err, "server_typo.ini:7: unknown key 'Prot' in [Server]"));
}

static void test_a_file_named_engine_ini_is_ues_and_the_same_text_elsewhere_is_reaps(
    void **state)
{
    FILE *f = fopen("tests/data/ue/by_name/DefaultEngine.ini", "r");
    char text[1024];
    size_t n;

    (void)state;
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';

    load("tests/data/ue/by_name/DefaultEngine.ini");
    assert_loaded();
    assert_true(gc(CVAR_GC_HISTORY_SIZE) == 9.0);

    load_text_as("game.ini", text);
    assert_int_equal(L.rc, -1);
    assert_non_null(strstr(L.err, "unknown section [Audio]"));
}

static void test_reaps_own_files_stay_strict(void **state)
{
    (void)state;
    load_text_as("reap.ini", "[ConsoleVariables]\nnet.MaxRPCPerNetUpdate = 4\n");
    assert_int_equal(L.rc, -1);
    assert_non_null(strstr(L.err, "net.MaxRPCPerNetUpdate"));

    load_text_as("reap.ini", "[ConsoleVariables]\ngc.MinGCClusterSize = yes\n");
    assert_int_equal(L.rc, -1);
    assert_non_null(strstr(L.err, ":2: bad value 'yes'"));

    load("deploy/reap.ini");
    assert_loaded();
    assert_int_equal(L.opts.config_warnings, 0);
}

/* ---- the tokenizer ------------------------------------------------------------------------ */

typedef struct seen_entries {
    char lines[16][128];
    int n;
} seen_entries;

static int record_cb(void *user, const ue_ini_entry *e)
{
    seen_entries *s = user;
    static const char ops[] = "=+.-!@";

    if (s->n < 16)
        snprintf(s->lines[s->n++], sizeof s->lines[0], "%d [%s] %c%s|%s", e->line, e->section,
                 e->key ? ops[e->op] : ' ', e->key ? e->key : "", e->value ? e->value : "(none)");
    return 0;
}

static void test_the_tokenizer_reads_operators_quotes_and_comments_as_ue_does(void **state)
{
    seen_entries s = { .n = 0 };

    (void)state;
    ue_ini_parse("; comment\r\n[A B/C.D]\r\n  +K = \"v \\\"q\\\" ; not a comment\" tail\r\n"
                 "#x=1\n-K=2\nNoEquals\n!K=ClearArray\n@S=1\nK=a=b\n", record_cb, &s);

    assert_int_equal(s.n, 7);
    assert_string_equal(s.lines[0], "2 [A B/C.D]  |(none)");
    assert_string_equal(s.lines[1], "3 [A B/C.D] +K|v \"q\" ; not a comment");
    assert_string_equal(s.lines[2], "5 [A B/C.D] -K|2");
    assert_string_equal(s.lines[3], "6 [A B/C.D] =NoEquals|(none)");
    assert_string_equal(s.lines[4], "7 [A B/C.D] !K|ClearArray");
    assert_string_equal(s.lines[5], "8 [A B/C.D] @S|1");
    assert_string_equal(s.lines[6], "9 [A B/C.D] =K|a=b");
}

static void test_decoding_refuses_truncated_utf16_and_nul_bytes(void **state)
{
    static const unsigned char odd[] = { 0xFF, 0xFE, '[', 0, 'A' };
    static const unsigned char lone[] = { 0xFF, 0xFE, 0x00, 0xD8, 'x', 0 };
    static const unsigned char nul[] = { '[', 'A', ']', 0, '\n' };
    static const unsigned char be[] = { 0xFE, 0xFF, 0, '[', 0, 'A', 0, ']' };
    char *text = NULL, err[128];
    bool utf16;

    (void)state;
    assert_int_equal(ue_ini_decode(odd, sizeof odd, &text, &utf16, err, sizeof err), -1);
    assert_non_null(strstr(err, "odd number of bytes"));
    assert_int_equal(ue_ini_decode(lone, sizeof lone, &text, &utf16, err, sizeof err), -1);
    assert_non_null(strstr(err, "surrogate"));
    assert_int_equal(ue_ini_decode(nul, sizeof nul, &text, &utf16, err, sizeof err), -1);
    assert_non_null(strstr(err, "NUL byte at byte 4"));
    assert_int_equal(ue_ini_decode(be, sizeof be, &text, &utf16, err, sizeof err), 0);
    assert_string_equal(text, "[A]");
    assert_true(utf16);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_lyra_like_default_engine_ini_loads_and_its_gc_values_apply),
        cmocka_unit_test(test_unknown_sections_are_warned_once_each_with_file_and_line),
        cmocka_unit_test(test_lines_far_over_198_characters_with_crlf_are_read_whole),
        cmocka_unit_test(test_ues_console_variables_section_warns_about_cvars_reap_lacks),
        cmocka_unit_test(test_array_operators_add_remove_and_clear_within_their_section),
        cmocka_unit_test(
            test_values_ue_writes_apply_and_values_reap_cannot_take_keep_the_one_before),
        cmocka_unit_test(test_system_settings_outrank_project_settings_whatever_the_file_order),
        cmocka_unit_test(test_the_command_line_outranks_every_section_of_a_ue_file),
        cmocka_unit_test(test_an_indented_line_is_a_key_of_its_own),
        cmocka_unit_test(test_a_utf16le_file_with_bom_is_read),
        cmocka_unit_test(test_a_typo_in_server_stops_the_server_even_in_a_ue_file),
        cmocka_unit_test(test_a_file_named_engine_ini_is_ues_and_the_same_text_elsewhere_is_reaps),
        cmocka_unit_test(test_reaps_own_files_stay_strict),
        cmocka_unit_test(test_the_tokenizer_reads_operators_quotes_and_comments_as_ue_does),
        cmocka_unit_test(test_decoding_refuses_truncated_utf16_and_nul_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
