/*
 * client_exit.h - reap-client's exit statuses (README "Exit status"): every command and every
 * layer that ends a run returns one of these.
 */
#ifndef REAP_CLIENT_EXIT_H
#define REAP_CLIENT_EXIT_H

enum {
    CLIENT_EXIT_OK = 0,
    CLIENT_EXIT_FAILED = 1,   /* the server was unreachable, refused us or timed out */
    CLIENT_EXIT_USAGE = 2,    /* bad command line or scenario file */
    CLIENT_EXIT_FILES = 3,    /* churn, merge: the run's figures are in, but some of its files
                               * could not be written (each is named) */
    CLIENT_EXIT_THRESHOLD = 99, /* churn: the run completed but a --threshold failed (as k6) */
    CLIENT_EXIT_INTERRUPTED = 105, /* churn: stopped by SIGINT/SIGTERM, report written (as k6) */
};

/* Of two statuses that both apply, the one to exit with: 2, then 1, 3, 105, 99, 0. */
static inline int client_exit_worse(int a, int b)
{
    static const int order[] = { CLIENT_EXIT_USAGE, CLIENT_EXIT_FAILED, CLIENT_EXIT_FILES,
                                 CLIENT_EXIT_INTERRUPTED, CLIENT_EXIT_THRESHOLD };

    for (unsigned i = 0; i < sizeof order / sizeof *order; i++)
        if (a == order[i] || b == order[i])
            return order[i];
    return a != CLIENT_EXIT_OK ? a : b;
}

#endif /* REAP_CLIENT_EXIT_H */
