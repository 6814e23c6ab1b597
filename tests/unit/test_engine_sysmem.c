/*
 * test_engine_sysmem.c - free memory for the low-memory collection interval; the thread's use
 * of the CPU for the slow-frame log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "sysmem.h"

static void test_mem_available_is_read_from_meminfo_in_bytes(void **state)
{
    const char *text = "MemTotal:       24000000 kB\nMemFree:  100 kB\n"
                       "MemAvailable:    2048 kB\nBuffers: 1 kB\n";
    uint64_t bytes = 0;

    (void)state;
    assert_true(sysmem_parse_meminfo(text, &bytes));
    assert_int_equal(bytes, 2048u * 1024u);
}

static void test_meminfo_without_mem_available_is_unknown(void **state)
{
    uint64_t bytes = 7;

    (void)state;
    assert_false(sysmem_parse_meminfo("MemTotal: 1 kB\nMemFree: 1 kB\n", &bytes));
    assert_int_equal(bytes, 7);
}

static void test_a_cgroup_without_a_limit_reads_as_no_limit(void **state)
{
    uint64_t bytes = 0;

    (void)state;
    assert_false(sysmem_parse_cgroup_value("max\n", &bytes));
    assert_true(sysmem_parse_cgroup_value("1073741824\n", &bytes));
    assert_int_equal(bytes, 1073741824u);
}

static void test_the_cgroup_headroom_wins_when_it_is_smaller(void **state)
{
    (void)state;
    /* 8 GiB available on the machine, but the cgroup allows 512 MiB and uses 412 MiB. */
    double mb = sysmem_free_mb_from(true, 8ull << 30, true, 512ull << 20, true, 412ull << 20);

    assert_true(mb == 100.0);
}

static void test_machine_memory_wins_when_it_is_smaller_than_the_cgroup_headroom(void **state)
{
    (void)state;
    double mb = sysmem_free_mb_from(true, 64ull << 20, true, 8ull << 30, true, 0);

    assert_true(mb == 64.0);
}

static void test_a_cgroup_over_its_limit_has_no_free_memory(void **state)
{
    (void)state;
    assert_true(sysmem_free_mb_from(false, 0, true, 100ull << 20, true, 200ull << 20) == 0.0);
}

static void test_nothing_known_reads_as_negative(void **state)
{
    (void)state;
    assert_true(sysmem_free_mb_from(false, 0, false, 0, false, 0) < 0);
}


static void test_process_stat_gives_rss_cpu_and_start_time(void **state)
{
    /* a command name with spaces and a parenthesis, as /proc allows */
    const char *stat_text = "4242 (reap (x) srv) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                            "250 50 0 0 20 0 3 0 1000 123456789 2048 18446744073709551615";
    sysmem_process p;

    (void)state;
    assert_true(sysmem_parse_process_stat(stat_text, 100, 4096, 1700000000, &p));

    assert_int_equal(p.resident_bytes, 2048u * 4096u);
    assert_true(p.cpu_seconds == 3.0);
    assert_true(p.start_time_seconds == 1700000010.0);
}

static void test_junk_process_stat_is_refused(void **state)
{
    sysmem_process p;

    (void)state;
    assert_false(sysmem_parse_process_stat("no parenthesis", 100, 4096, 0, &p));
    assert_false(sysmem_parse_process_stat("1 (x) S 1 2", 100, 4096, 0, &p));
}

static void test_this_process_can_be_read(void **state)
{
    sysmem_process p;

    (void)state;
    assert_true(sysmem_process_read(&p));
    assert_true(p.resident_bytes > 0);
    assert_true(p.start_time_seconds > 1e9);
}

/* The thread's CPU clock, which counts only while the thread runs. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_the_thread_usage_counts_the_cpu_it_used(void **state)
{
    sysmem_thread_usage before, after;
    volatile uint64_t sink = 0;
    double until;

    (void)state;
    assert_true(sysmem_thread_usage_read(&before));
    /* 30 ms on the CPU, however long it takes on the clock on the wall. */
    until = thread_cpu_seconds() + 0.030;
    while (thread_cpu_seconds() < until)
        sink += 1;
    assert_true(sysmem_thread_usage_read(&after));
    /* getrusage counts in the scheduler's ticks; allow one of 10 ms either way. */
    assert_true(after.cpu_seconds - before.cpu_seconds >= 0.020);
    assert_true(after.cpu_seconds - before.cpu_seconds < 1.0);
    assert_true(after.preempted >= before.preempted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mem_available_is_read_from_meminfo_in_bytes),
        cmocka_unit_test(test_meminfo_without_mem_available_is_unknown),
        cmocka_unit_test(test_a_cgroup_without_a_limit_reads_as_no_limit),
        cmocka_unit_test(test_the_cgroup_headroom_wins_when_it_is_smaller),
        cmocka_unit_test(test_machine_memory_wins_when_it_is_smaller_than_the_cgroup_headroom),
        cmocka_unit_test(test_a_cgroup_over_its_limit_has_no_free_memory),
        cmocka_unit_test(test_nothing_known_reads_as_negative),
        cmocka_unit_test(test_process_stat_gives_rss_cpu_and_start_time),
        cmocka_unit_test(test_junk_process_stat_is_refused),
        cmocka_unit_test(test_this_process_can_be_read),
        cmocka_unit_test(test_the_thread_usage_counts_the_cpu_it_used),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
