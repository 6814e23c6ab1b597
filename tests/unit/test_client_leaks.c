/*
 * test_client_leaks.c - the server side of the load tester's leak verdict: `gc leaks mark`
 * and `gc leaks since=MARK` list the objects created after a mark that are still alive, by
 * class, with the chain that keeps them. A planted leak (the world keeps an actor it should
 * have dropped when its player left) is named; a clean visit leaves nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "console_leaks.h"
#include "world_fixture.h"

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    strbuf out;
} fixture;

static int setup(void **state)
{
    static fixture fx;

    memset(&fx, 0, sizeof fx);
    world_fixture_open(&fx.heap, &fx.env, &fx.w);
    strbuf_init(&fx.out);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    strbuf_free(&fx->out);
    world_fixture_close(fx->heap);
    return 0;
}

/* Runs `gc leaks ARG`; returns its output. */
static const char *leaks(fixture *fx, const char *arg, console_status want)
{
    char buf[64];
    char *argv[1] = { buf };

    snprintf(buf, sizeof buf, "%s", arg);
    strbuf_reset(&fx->out);
    assert_int_equal(console_leaks_run(fx->heap, 1, argv, &fx->out), want);
    return strbuf_cstr(&fx->out);
}

static unsigned mark(fixture *fx)
{
    unsigned id = 0;

    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
    assert_int_equal(sscanf(leaks(fx, "mark", CONSOLE_OK), "leak mark %u:", &id), 1);
    return id;
}

/* A player joins, spawns props and leaves; with plant, the world also spawns an actor for the
 * player and never destroys it. Then a full collection and cleanup. */
static void visit(fixture *fx, bool plant)
{
    player_controller *pc = NULL;
    actor *a = NULL;

    assert_int_equal(actor_spawn_player(fx->w, 1, "p", &pc), GC_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, pc, &a), GC_OK);
    if (plant)
        assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, NULL, &a), GC_OK);
    actor_destroy(fx->w, &pc->base);
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
    world_cleanup_actors(fx->w);
}

static void test_a_visit_that_cleans_up_leaves_no_object_since_the_mark(void **state)
{
    fixture *fx = *state;
    unsigned id = mark(fx);
    char arg[32];

    visit(fx, false);

    snprintf(arg, sizeof arg, "since=%u", id);
    const char *out = leaks(fx, arg, CONSOLE_OK);
    char want[64];
    snprintf(want, sizeof want, "leaks since mark %u: 0 objects", id);
    assert_non_null(strstr(out, want));
}

static void test_a_planted_leak_is_named_by_class_with_the_chain_that_keeps_it(void **state)
{
    fixture *fx = *state;
    unsigned id = mark(fx);
    const char *prop_class = gc_class_name(fx->env.classes.prop);
    unsigned found = 0;
    char arg[32], line[96];

    visit(fx, true);

    snprintf(arg, sizeof arg, "since=%u", id);
    const char *out = leaks(fx, arg, CONSOLE_OK);
    assert_int_equal(sscanf(out, "leaks since mark %*u: %u objects", &found), 1);
    assert_true(found >= 1);                          /* the prop (and what it owns) */
    snprintf(line, sizeof line, "  %-24s 1\n", prop_class); /* one prop of that class */
    if (strstr(out, line) == NULL)
        fail_msg("no line for class %s in:\n%s", prop_class, out);
    assert_non_null(strstr(out, ", kept alive by:"));
    assert_non_null(strstr(out, "(root set)"));      /* the chain starts at a root */
    assert_non_null(strstr(out, "[actors]"));        /* ... and goes through the level */
}

static void test_objects_alive_at_the_mark_are_never_listed(void **state)
{
    fixture *fx = *state;
    actor *before = NULL;
    char arg[32];
    unsigned id;

    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, NULL, &before), GC_OK);
    id = mark(fx);

    snprintf(arg, sizeof arg, "since=%u", id);
    assert_non_null(strstr(leaks(fx, arg, CONSOLE_OK), ": 0 objects"));
}

static void test_bad_arguments_and_unknown_marks_are_refused(void **state)
{
    fixture *fx = *state;

    assert_non_null(strstr(leaks(fx, "since=x", CONSOLE_E_USAGE), "usage: gc leaks"));
    assert_non_null(strstr(leaks(fx, "sweep", CONSOLE_E_USAGE), "usage: gc leaks"));
    assert_non_null(strstr(leaks(fx, "since=4000000", CONSOLE_E_FAILED), "no mark 4000000"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_visit_that_cleans_up_leaves_no_object_since_the_mark,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_planted_leak_is_named_by_class_with_the_chain_that_keeps_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_objects_alive_at_the_mark_are_never_listed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments_and_unknown_marks_are_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
