/*
 * test_admin_cache.c - a cached admin page (admin_cache.h) over a fake clock: requests within
 * admin.MetricsCacheSeconds are served one render, the page is rendered anew once the interval
 * has passed, and 0 renders every request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "admin_cache.h"

typedef struct page_source {
    unsigned renders;   /* calls of the render callback */
} page_source;

/* Each render says which it is, so a test can tell a copy from a new render. */
static void render_cb(void *ctx, strbuf *out)
{
    page_source *src = ctx;

    src->renders++;
    strbuf_printf(out, "render %u\n", src->renders);
}

static void test_requests_within_the_interval_are_served_one_render(void **state)
{
    admin_page_cache c;
    page_source src = { 0 };
    const strbuf *body = NULL;

    (void)state;
    admin_page_cache_init(&c);

    for (int i = 0; i < 1000; i++)
        body = admin_page_cache_get(&c, 100.0 + i * 0.0009, 1.0, render_cb, &src);

    assert_int_equal(src.renders, 1);
    assert_int_equal(c.renders, 1);
    assert_string_equal(strbuf_cstr(body), "render 1\n");
    admin_page_cache_free(&c);
}

static void test_the_page_is_rendered_anew_once_the_interval_has_passed(void **state)
{
    admin_page_cache c;
    page_source src = { 0 };
    const strbuf *body;

    (void)state;
    admin_page_cache_init(&c);
    admin_page_cache_get(&c, 100.0, 1.0, render_cb, &src);

    body = admin_page_cache_get(&c, 100.999, 1.0, render_cb, &src);
    assert_string_equal(strbuf_cstr(body), "render 1\n");
    body = admin_page_cache_get(&c, 101.0, 1.0, render_cb, &src);

    assert_string_equal(strbuf_cstr(body), "render 2\n");
    assert_int_equal(src.renders, 2);
    /* The new copy's age counts from its own render. */
    body = admin_page_cache_get(&c, 101.5, 1.0, render_cb, &src);
    assert_string_equal(strbuf_cstr(body), "render 2\n");
    admin_page_cache_free(&c);
}

static void test_an_interval_of_zero_renders_every_request(void **state)
{
    admin_page_cache c;
    page_source src = { 0 };

    (void)state;
    admin_page_cache_init(&c);

    for (int i = 0; i < 5; i++)
        admin_page_cache_get(&c, 100.0, 0.0, render_cb, &src);

    assert_int_equal(src.renders, 5);
    assert_int_equal(c.renders, 5);
    admin_page_cache_free(&c);
}

static void test_a_shorter_interval_applies_to_the_copy_at_once(void **state)
{
    admin_page_cache c;
    page_source src = { 0 };

    (void)state;
    admin_page_cache_init(&c);
    admin_page_cache_get(&c, 100.0, 3600.0, render_cb, &src);

    admin_page_cache_get(&c, 100.5, 0.25, render_cb, &src);

    assert_int_equal(src.renders, 2);
    admin_page_cache_free(&c);
}

static void test_a_clock_that_went_back_renders(void **state)
{
    admin_page_cache c;
    page_source src = { 0 };

    (void)state;
    admin_page_cache_init(&c);
    admin_page_cache_get(&c, 100.0, 1.0, render_cb, &src);

    admin_page_cache_get(&c, 99.0, 1.0, render_cb, &src);

    assert_int_equal(src.renders, 2);
    admin_page_cache_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_within_the_interval_are_served_one_render),
        cmocka_unit_test(test_the_page_is_rendered_anew_once_the_interval_has_passed),
        cmocka_unit_test(test_an_interval_of_zero_renders_every_request),
        cmocka_unit_test(test_a_shorter_interval_applies_to_the_copy_at_once),
        cmocka_unit_test(test_a_clock_that_went_back_renders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
