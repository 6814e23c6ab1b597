/*
 * test_build_hardening.c - the binaries a plain `make` builds are hardened as Debian's
 * dpkg-buildflags would build them: position independent, full RELRO (BIND_NOW), with a stack
 * protector and, outside the sanitizer variants, _FORTIFY_SOURCE. Read from the built files
 * with readelf and nm, as a packager's lintian or checksec would.
 */
#include "harness.h"

/* Runs a binutils program on build/<binary> and returns what it printed (freed by the next
 * call). */
static const char *inspect(const char *tool, const char *option, const char *binary)
{
    static harness_proc p;
    char path[512];

    harness_proc_free(&p);
    snprintf(path, sizeof path, "%s/%s", harness_build_dir(), binary);
    const char *args[] = { option, path, NULL };
    harness_proc_start_cmd(&p, tool, args, NULL);
    if (!harness_proc_wait(&p, 30.0) || p.status != 0)
        fail_msg("%s %s %s failed (binutils comes with the compiler):\n%s", tool,
                 option, path, p.out);
    return p.out;
}

/* A call to one of glibc's checked functions (__memcpy_chk, __snprintf_chk...), the mark of
 * _FORTIFY_SOURCE; __stack_chk_fail is the stack protector's and does not count. */
static bool calls_fortified_functions(const char *symbols)
{
    for (const char *p = strstr(symbols, "_chk@"); p != NULL; p = strstr(p + 1, "_chk@")) {
        const char *start = p;
        while (start > symbols && start[-1] != ' ')
            start--;
        if (strncmp(start, "__stack_chk_fail", 16) != 0)
            return true;
    }
    return false;
}

static void check_binary(const char *binary)
{
    bool sanitized;
    const char *out;

    out = inspect("readelf", "-h", binary);
    assert_non_null(strstr(out, "DYN (Position-Independent Executable"));
    out = inspect("readelf", "-lW", binary);
    assert_non_null(strstr(out, "GNU_RELRO"));
    out = inspect("readelf", "-d", binary);
    assert_true(strstr(out, "BIND_NOW") != NULL || strstr(out, "Flags: NOW") != NULL);

    out = inspect("nm", "-D", binary);
    assert_non_null(strstr(out, "__stack_chk_fail"));
    /* The sanitizers intercept those functions themselves: their variants are not fortified. */
    sanitized = strstr(out, "__asan_init") != NULL || strstr(out, "__tsan_init") != NULL;
    if (!sanitized && !calls_fortified_functions(out))
        fail_msg("%s calls none of glibc's _chk functions: built without _FORTIFY_SOURCE",
                 binary);
}

static void test_the_server_is_a_pie_with_full_relro_a_stack_protector_and_fortify(void **state)
{
    (void)state;
    check_binary("reap-server");
}

static void test_the_client_is_built_the_same_way(void **state)
{
    (void)state;
    check_binary("reap-client");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_server_is_a_pie_with_full_relro_a_stack_protector_and_fortify),
        cmocka_unit_test(test_the_client_is_built_the_same_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
