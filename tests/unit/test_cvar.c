/*
 * test_cvar.c - the console-variable registry: names, types, ranges, precedence, ini files.
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

#include "cvar.h"
#include "engine_options.h"
#include "reap_gc.h"

static void test_defaults_are_unreal_engines(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);

    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 60.0);
    assert_true(cvar_get(&reg, CVAR_GC_IDLE_SERVER_MULTIPLIER) == 10.0);
    assert_true(cvar_get(&reg, CVAR_GC_LOW_MEMORY_THRESHOLD_MB) == 0.0);
    assert_true(cvar_get(&reg, CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING) == 30.0);
    assert_true(cvar_get(&reg, CVAR_GC_INCREMENTAL_TIME_PER_FRAME) == 0.002);
    assert_false(cvar_get_bool(&reg, CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY));
    assert_true(cvar_get(&reg, CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT) == 0.005);
    assert_true(cvar_get_bool(&reg, CVAR_GC_INCREMENTAL_BEGIN_DESTROY));
    assert_true(cvar_get_bool(&reg, CVAR_GC_CREATE_CLUSTERS));
    assert_int_equal(cvar_get_int(&reg, CVAR_GC_MIN_CLUSTER_SIZE), 5);
    assert_int_equal(cvar_get_int(&reg, CVAR_GC_NUM_RETRIES_BEFORE_FORCING), 10);
    assert_int_equal(cvar_get_int(&reg, CVAR_GC_COLLECT_EVERY_FRAME), 0);
}

static void test_every_cvar_has_a_name_help_and_a_default_inside_its_range(void **state)
{
    (void)state;
    for (int i = 0; i < CVAR_COUNT; i++) {
        const cvar_def *d = cvar_def_get((cvar_id)i);
        cvar_id found;

        assert_non_null(d->name);
        assert_non_null(d->help);
        assert_true(d->min_value <= d->default_value && d->default_value <= d->max_value);
        assert_true(cvar_find(d->name, &found));
        assert_int_equal(found, i);
    }
}

static void test_names_match_case_insensitively(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "GC.timebetweenpurgingpendingkillobjects", "5",
                              CVAR_SOURCE_CONSOLE, NULL, 0), CVAR_OK);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 5.0);
}

static void test_an_unknown_name_is_an_error_that_names_it(void **state)
{
    cvar_registry reg;
    char err[256] = "";

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "gc.NoSuchThing", "1", CVAR_SOURCE_CONSOLE, err, sizeof err),
                     CVAR_E_UNKNOWN);
    assert_non_null(strstr(err, "gc.NoSuchThing"));
}

static void test_a_value_out_of_range_is_refused_with_the_range_in_the_message(void **state)
{
    cvar_registry reg;
    char err[256] = "";

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "gc.MinGCClusterSize", "0", CVAR_SOURCE_CONSOLE, err,
                              sizeof err), CVAR_E_RANGE);
    assert_non_null(strstr(err, "gc.MinGCClusterSize"));
    assert_non_null(strstr(err, "[1, 1000000]"));
    assert_int_equal(cvar_get_int(&reg, CVAR_GC_MIN_CLUSTER_SIZE), 5);
}

static void test_text_that_is_not_a_number_is_refused(void **state)
{
    cvar_registry reg;
    char err[256] = "";

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "gc.IncrementalGCTimePerFrame", "fast", CVAR_SOURCE_CONSOLE,
                              err, sizeof err), CVAR_E_VALUE);
    assert_non_null(strstr(err, "'fast'"));
    assert_int_equal(cvar_set(&reg, "gc.IncrementalGCTimePerFrame", "1x", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_E_VALUE);
    assert_int_equal(cvar_set(&reg, "gc.IncrementalGCTimePerFrame", "", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_E_VALUE);
    assert_int_equal(cvar_set(&reg, "gc.IncrementalGCTimePerFrame", "nan", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_E_VALUE);
}

static void test_an_integer_cvar_refuses_a_fraction(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "gc.MinGCClusterSize", "2.5", CVAR_SOURCE_CONSOLE, NULL, 0),
                     CVAR_E_VALUE);
}

static void test_a_boolean_cvar_accepts_words_and_digits(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set(&reg, "gc.AllowIncrementalReachability", "true",
                              CVAR_SOURCE_CONSOLE, NULL, 0), CVAR_OK);
    assert_true(cvar_get_bool(&reg, CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY));
    assert_int_equal(cvar_set(&reg, "gc.AllowIncrementalReachability", "0", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_OK);
    assert_false(cvar_get_bool(&reg, CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY));
    assert_int_equal(cvar_set(&reg, "gc.AllowIncrementalReachability", "2", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_E_RANGE);
}

static void test_a_lower_source_never_overrides_a_higher_one(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);
    cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "5", CVAR_SOURCE_COMMAND_LINE,
             NULL, 0);

    cvar_result r = cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "9",
                             CVAR_SOURCE_INI, NULL, 0);

    assert_int_equal(r, CVAR_E_OVERRIDDEN);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 5.0);
}

static void test_the_console_overrides_the_command_line(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);
    cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "5", CVAR_SOURCE_COMMAND_LINE,
             NULL, 0);

    cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "7", CVAR_SOURCE_CONSOLE, NULL, 0);

    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 7.0);
}

static void test_a_change_bumps_the_generation_and_a_no_op_does_not(void **state)
{
    cvar_registry reg;

    (void)state;
    cvar_registry_init(&reg);
    uint64_t g0 = reg.generation;

    cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "60", CVAR_SOURCE_CONSOLE, NULL, 0);
    assert_int_equal(reg.generation, g0);
    cvar_set(&reg, "gc.TimeBetweenPurgingPendingKillObjects", "61", CVAR_SOURCE_CONSOLE, NULL, 0);
    assert_int_equal(reg.generation, g0 + 1);
}

static void test_an_assignment_needs_a_name_and_an_equals_sign(void **state)
{
    cvar_registry reg;
    char err[256] = "";

    (void)state;
    cvar_registry_init(&reg);

    assert_int_equal(cvar_set_assignment(&reg, "gc.MinGCClusterSize", CVAR_SOURCE_COMMAND_LINE,
                                         err, sizeof err), CVAR_E_SYNTAX);
    assert_non_null(strstr(err, "NAME=VALUE"));
    assert_int_equal(cvar_set_assignment(&reg, "=3", CVAR_SOURCE_COMMAND_LINE, NULL, 0),
                     CVAR_E_SYNTAX);
    assert_int_equal(cvar_set_assignment(&reg, "gc.MinGCClusterSize=8", CVAR_SOURCE_COMMAND_LINE,
                                         NULL, 0), CVAR_OK);
    assert_int_equal(cvar_get_int(&reg, CVAR_GC_MIN_CLUSTER_SIZE), 8);
}

static void test_values_format_as_a_user_would_type_them(void **state)
{
    cvar_registry reg;
    char buf[64];

    (void)state;
    cvar_registry_init(&reg);

    assert_string_equal(cvar_format_value(&reg, CVAR_GC_INCREMENTAL_TIME_PER_FRAME, buf,
                                          sizeof buf), "0.002");
    assert_string_equal(cvar_format_value(&reg, CVAR_GC_TIME_BETWEEN_PURGING, buf, sizeof buf),
                        "60");
}


static void test_hexadecimal_and_non_finite_text_is_refused(void **state)
{
    cvar_registry reg;
    char err[256];
    const char *bad[] = { "0x10", "inf", "nan", "1e999", "16h" };

    (void)state;
    cvar_registry_init(&reg);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cvar_set(&reg, "gc.MinGCClusterSize", bad[i], CVAR_SOURCE_CONSOLE, err,
                                  sizeof err), CVAR_E_VALUE);
        assert_non_null(strstr(err, "gc.MinGCClusterSize"));
    }
    assert_true(cvar_get(&reg, CVAR_GC_MIN_CLUSTER_SIZE) == 5.0);
}

/* The cvar's range is the collector's own: its largest value makes a heap, one more is refused
 * before the collector ever sees it. */
static void test_the_worker_thread_range_ends_at_the_collectors_limit(void **state)
{
    const cvar_def *def = cvar_def_get(CVAR_GC_NUM_WORKER_THREADS);
    gc_heap_config cfg;
    gc_heap *heap = NULL;
    cvar_registry reg;
    char text[32], err[256];

    (void)state;
    memset(&cfg, 0, sizeof cfg);
    gc_settings_default(&cfg.settings);
    cfg.settings.num_workers = (uint32_t)def->max_value;
    assert_int_equal(gc_heap_create(&cfg, &heap), GC_OK);
    gc_heap_destroy(heap);
    cfg.settings.num_workers = (uint32_t)def->max_value + 1;
    assert_int_not_equal(gc_heap_create(&cfg, &heap), GC_OK);

    cvar_registry_init(&reg);
    snprintf(text, sizeof text, "%u", (unsigned)def->max_value + 1);
    assert_int_equal(cvar_set(&reg, "gc.NumWorkerThreads", text, CVAR_SOURCE_CONSOLE, err,
                              sizeof err), CVAR_E_RANGE);
    assert_non_null(strstr(err, "gc.NumWorkerThreads"));
    assert_true(cvar_get(&reg, CVAR_GC_NUM_WORKER_THREADS) == 0.0);
}

/* ---- the config file ---------------------------------------------------------------- */

static char *write_temp(const char *text)
{
    static char path[64];
    int fd;

    snprintf(path, sizeof path, "/tmp/reap-test-cvar-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Loads the config file at path into fresh options and cvars. */
static int load_path(const char *path, engine_options *opts, cvar_registry *reg, char *err,
                     size_t err_size)
{
    engine_options_default(opts);
    cvar_registry_init(reg);
    return engine_options_load_config(opts, reg, path, err, err_size);
}

/* Loads an ini file with the given text into fresh options and cvars. */
static int load_ini_text(const char *text, engine_options *opts, cvar_registry *reg, char *err,
                         size_t err_size)
{
    char *path = write_temp(text);
    int r = load_path(path, opts, reg, err, err_size);

    unlink(path);
    return r;
}

static void test_the_ini_sets_cvars_and_server_options(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[256] = "";

    (void)state;
    int r = load_ini_text("[Server]\nPort = 9000\nWorlds = 3\n"
                          "[ConsoleVariables]\ngc.TimeBetweenPurgingPendingKillObjects = 12\n",
                          &opts, &reg, err, sizeof err);

    assert_int_equal(r, 0);
    assert_int_equal(opts.port, 9000);
    assert_int_equal(opts.worlds, 3);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 12.0);
}

static void test_the_command_line_wins_over_the_ini(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[256] = "";
    char *argv[] = { "reap-server", "--port", "1234", "--cvar",
                     "gc.TimeBetweenPurgingPendingKillObjects=3" };
    char *path = write_temp("[Server]\nPort = 9000\n"
                            "[ConsoleVariables]\ngc.TimeBetweenPurgingPendingKillObjects = 12\n");

    (void)state;
    engine_options_default(&opts);
    cvar_registry_init(&reg);
    assert_int_equal(engine_options_parse(&opts, 5, argv, err, sizeof err), ENGINE_OPTIONS_OK);

    engine_options_load_config(&opts, &reg, path, err, sizeof err);
    engine_options_apply_cvars(&opts, &reg, err, sizeof err);
    unlink(path);

    assert_int_equal(opts.port, 1234);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 3.0);
}

static void test_a_bad_ini_value_names_the_file_line_cvar_and_range(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    int r = load_ini_text("[ConsoleVariables]\n\ngc.MinGCClusterSize = -4\n", &opts, &reg, err,
                          sizeof err);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, ":3:"));
    assert_non_null(strstr(err, "gc.MinGCClusterSize"));
    assert_non_null(strstr(err, "[1, 1000000]"));
}

static void test_an_unknown_ini_section_or_key_is_an_error(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    int r = load_ini_text("[Server]\nPortt = 1\n", &opts, &reg, err, sizeof err);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, "Portt"));
}

static void test_a_missing_config_file_is_an_error_naming_it(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    assert_int_equal(load_path("/nonexistent/reap.ini", &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/reap.ini"));
}

static void test_a_fifo_as_the_config_file_is_refused_without_waiting_for_a_writer(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char path[64], err[512] = "";

    (void)state;
    snprintf(path, sizeof path, "/tmp/reap-test-fifo-%d", (int)getpid());
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);

    alarm(5); /* a read that waits for a writer would wait for ever: end the test instead */
    int r = load_path(path, &opts, &reg, err, sizeof err);
    alarm(0);
    unlink(path);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "FIFO"));
}

static void test_a_device_or_a_directory_as_the_config_file_is_refused_by_name(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    assert_int_equal(load_path("/dev/zero", &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, "'/dev/zero' is not a regular file (a device)"));
    assert_int_equal(load_path("/tmp", &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, "'/tmp' is not a regular file (a directory)"));
}

static void test_a_line_too_long_to_read_whole_is_an_error_naming_its_line(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char text[1024], err[512] = "";

    (void)state;
    snprintf(text, sizeof text, "[ConsoleVariables]\ngc.MinGCClusterSize = 7%0300d\n", 0);
    int r = load_ini_text(text, &opts, &reg, err, sizeof err);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, ":2: line longer than"));
    assert_true(cvar_get(&reg, CVAR_GC_MIN_CLUSTER_SIZE) == 5.0);
}

static void test_the_line_limit_of_reaps_files_does_not_count_a_crlf(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char text[1024], err[512] = "";

    (void)state;
    snprintf(text, sizeof text, "[ConsoleVariables]\r\n%-198s\r\n", "gc.MinGCClusterSize = 7");
    assert_int_equal(load_ini_text(text, &opts, &reg, err, sizeof err), 0);
    assert_true(cvar_get(&reg, CVAR_GC_MIN_CLUSTER_SIZE) == 7.0);

    snprintf(text, sizeof text, "[ConsoleVariables]\r\n%-199s\r\n", "gc.MinGCClusterSize = 7");
    assert_int_equal(load_ini_text(text, &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: line longer than 198 characters"));
}

static void test_a_duplicate_key_in_reaps_sections_is_an_error_naming_it(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    int r = load_ini_text("[Server]\nPort = 1\n[ConsoleVariables]\ngc.MinGCClusterSize = 6\n"
                          "GC.MINGCCLUSTERSIZE = 7\n", &opts, &reg, err, sizeof err);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, ":5: duplicate key 'GC.MINGCCLUSTERSIZE' in [ConsoleVariables]"));
}

static void test_ues_sections_set_the_same_cvars_and_unknown_ue_keys_only_warn(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    int r = load_ini_text("[SystemSettings]\ngc.TimeBetweenPurgingPendingKillObjects=61.1\n"
                          "r.VSync=0\n"
                          "[/Script/Engine.GarbageCollectionSettings]\ngc.CreateGCClusters=False\n"
                          "gc.MaxObjectsNotConsideredByGC=1\n"
                          "[/Script/Engine.RendererSettings]\nr.DefaultFeature.Bloom=False\n",
                          &opts, &reg, err, sizeof err);

    assert_int_equal(r, 0);
    assert_true(cvar_get(&reg, CVAR_GC_TIME_BETWEEN_PURGING) == 61.1);
    assert_false(cvar_get_bool(&reg, CVAR_GC_CREATE_CLUSTERS));
    assert_int_equal(opts.config_warnings, 3);
}

static void test_ues_streaming_settings_are_project_settings_below_console_variables(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    int r = load_ini_text("[/Script/Engine.StreamingSettings]\n"
                          "s.LevelStreamingActorsUpdateTimeLimit=3.000000\n"
                          "s.UnregisterComponentsTimeLimit=2.0\n"
                          "[ConsoleVariables]\ns.UnregisterComponentsTimeLimit=0.5\n"
                          "wp.Runtime.EnableServerStreaming=1\n",
                          &opts, &reg, err, sizeof err);

    assert_int_equal(r, 0);
    assert_true(cvar_get(&reg, CVAR_S_ACTORS_UPDATE_TIME_LIMIT) == 3.0);
    assert_true(cvar_get(&reg, CVAR_S_UNREGISTER_COMPONENTS_TIME_LIMIT) == 0.5);
    assert_int_equal(cvar_get_int(&reg, CVAR_WP_ENABLE_SERVER_STREAMING), 1);
    assert_int_equal(opts.config_warnings, 0);
}

static void test_a_typo_in_reaps_own_sections_still_stops_the_server(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    assert_int_equal(load_ini_text("[ConsoleVariables]\ngc.TimeBetweenPurgingPendingKilObjects=5\n",
                                   &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, "gc.TimeBetweenPurgingPendingKilObjects"));
    assert_int_equal(load_ini_text("[Sever]\nPort = 1\n", &opts, &reg, err, sizeof err), -1);
    assert_non_null(strstr(err, "[Sever]"));
}

static void test_the_shipped_ue_sample_loads(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";

    (void)state;
    assert_int_equal(load_path("deploy/DefaultEngine.sample.ini", &opts, &reg, err, sizeof err),
                     0);
    assert_int_equal(reg.sources[CVAR_GC_TIME_BETWEEN_PURGING], CVAR_SOURCE_INI);
    assert_int_equal(reg.sources[CVAR_GC_CREATE_CLUSTERS], CVAR_SOURCE_INI);
}

static void test_a_reload_takes_the_files_new_values_and_keeps_higher_sources(void **state)
{
    engine_options opts;
    cvar_registry reg;
    char err[512] = "";
    char *path;

    (void)state;
    assert_int_equal(load_ini_text("[ConsoleVariables]\ngc.MinGCClusterSize = 6\n"
                                   "gc.HistorySize = 3\ngc.NumRetriesBeforeForcingGC = 4\n",
                                   &opts, &reg, err, sizeof err), 0);
    assert_int_equal(cvar_set(&reg, "gc.NumRetriesBeforeForcingGC", "9", CVAR_SOURCE_CONSOLE,
                              err, sizeof err), CVAR_OK);
    path = write_temp("[ConsoleVariables]\ngc.MinGCClusterSize = 8\n"
                      "gc.NumRetriesBeforeForcingGC = 5\n");

    int r = engine_options_reload_cvars(&reg, path, err, sizeof err);
    unlink(path);

    assert_int_equal(r, 0);
    assert_true(cvar_get(&reg, CVAR_GC_MIN_CLUSTER_SIZE) == 8.0);
    assert_true(cvar_get(&reg, CVAR_GC_HISTORY_SIZE) == 0.0);        /* gone: the default */
    assert_true(cvar_get(&reg, CVAR_GC_NUM_RETRIES_BEFORE_FORCING) == 9.0); /* console wins */
}

static void test_a_reload_of_a_broken_file_changes_nothing(void **state)
{
    engine_options opts;
    cvar_registry reg, before;
    char err[512] = "";
    char *path;

    (void)state;
    assert_int_equal(load_ini_text("[ConsoleVariables]\ngc.MinGCClusterSize = 6\n", &opts, &reg,
                                   err, sizeof err), 0);
    before = reg;
    path = write_temp("[ConsoleVariables]\ngc.MinGCClusterSize = 8\ngc.HistorySize = lots\n");

    int r = engine_options_reload_cvars(&reg, path, err, sizeof err);
    unlink(path);

    assert_int_equal(r, -1);
    assert_non_null(strstr(err, "gc.HistorySize"));
    assert_memory_equal(&reg, &before, sizeof reg);
}

static void test_the_shipped_config_lists_every_cvar_at_its_default(void **state)
{
    engine_options opts;
    cvar_registry reg, defaults;
    char err[512] = "";
    FILE *f = fopen("deploy/reap.ini", "r");
    char text[16384];
    size_t n;

    (void)state;
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    engine_options_default(&opts);
    cvar_registry_init(&reg);
    cvar_registry_init(&defaults);

    assert_int_equal(engine_options_load_config(&opts, &reg, "deploy/reap.ini", err, sizeof err),
                     0);
    for (int i = 0; i < CVAR_COUNT; i++) {
        const char *name = cvar_def_get((cvar_id)i)->name;
        char line[160];

        snprintf(line, sizeof line, "\n%s = ", name);
        if (strstr(text, line) == NULL)
            fail_msg("deploy/reap.ini does not list %s", name);
        assert_int_equal(reg.sources[i], CVAR_SOURCE_INI);
        assert_true(cvar_get(&reg, (cvar_id)i) == cvar_get(&defaults, (cvar_id)i));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_unreal_engines),
        cmocka_unit_test(test_every_cvar_has_a_name_help_and_a_default_inside_its_range),
        cmocka_unit_test(test_names_match_case_insensitively),
        cmocka_unit_test(test_an_unknown_name_is_an_error_that_names_it),
        cmocka_unit_test(test_a_value_out_of_range_is_refused_with_the_range_in_the_message),
        cmocka_unit_test(test_text_that_is_not_a_number_is_refused),
        cmocka_unit_test(test_an_integer_cvar_refuses_a_fraction),
        cmocka_unit_test(test_a_boolean_cvar_accepts_words_and_digits),
        cmocka_unit_test(test_a_lower_source_never_overrides_a_higher_one),
        cmocka_unit_test(test_the_console_overrides_the_command_line),
        cmocka_unit_test(test_a_change_bumps_the_generation_and_a_no_op_does_not),
        cmocka_unit_test(test_an_assignment_needs_a_name_and_an_equals_sign),
        cmocka_unit_test(test_values_format_as_a_user_would_type_them),
        cmocka_unit_test(test_the_ini_sets_cvars_and_server_options),
        cmocka_unit_test(test_the_command_line_wins_over_the_ini),
        cmocka_unit_test(test_a_bad_ini_value_names_the_file_line_cvar_and_range),
        cmocka_unit_test(test_an_unknown_ini_section_or_key_is_an_error),
        cmocka_unit_test(test_a_missing_config_file_is_an_error_naming_it),
        cmocka_unit_test(test_the_shipped_config_lists_every_cvar_at_its_default),
        cmocka_unit_test(test_hexadecimal_and_non_finite_text_is_refused),
        cmocka_unit_test(test_the_worker_thread_range_ends_at_the_collectors_limit),
        cmocka_unit_test(test_a_fifo_as_the_config_file_is_refused_without_waiting_for_a_writer),
        cmocka_unit_test(test_a_device_or_a_directory_as_the_config_file_is_refused_by_name),
        cmocka_unit_test(test_a_line_too_long_to_read_whole_is_an_error_naming_its_line),
        cmocka_unit_test(test_the_line_limit_of_reaps_files_does_not_count_a_crlf),
        cmocka_unit_test(test_a_duplicate_key_in_reaps_sections_is_an_error_naming_it),
        cmocka_unit_test(test_ues_sections_set_the_same_cvars_and_unknown_ue_keys_only_warn),
        cmocka_unit_test(test_ues_streaming_settings_are_project_settings_below_console_variables),
        cmocka_unit_test(test_a_typo_in_reaps_own_sections_still_stops_the_server),
        cmocka_unit_test(test_the_shipped_ue_sample_loads),
        cmocka_unit_test(test_a_reload_takes_the_files_new_values_and_keeps_higher_sources),
        cmocka_unit_test(test_a_reload_of_a_broken_file_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
