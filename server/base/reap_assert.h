/*
 * reap_assert.h - assertions for the server's invariants (Lua's lua_assert).
 *
 * REAP_ASSERT(cond) states what the code assumes at a phase boundary or of a structure's
 * bookkeeping: a failure is a programmer's error, never bad input (input errors are
 * returned and counted). Active when REAP_CHECKS is defined (server/module.mk defines it for
 * the asan and tsan variants): a failure prints the condition and where, then aborts. In
 * release builds it costs nothing: the condition is not evaluated (it is still compiled, so
 * it cannot rot).
 */
#ifndef REAP_ASSERT_H
#define REAP_ASSERT_H

#ifdef REAP_CHECKS
#include <stdio.h>
#include <stdlib.h>

#define REAP_ASSERT(cond)                                                                  \
    ((cond) ? (void)0                                                                      \
            : (fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", __FILE__, __LINE__,    \
                       __func__, #cond),                                                   \
               abort()))
#else
#define REAP_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif /* REAP_ASSERT_H */
