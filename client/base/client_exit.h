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
    CLIENT_EXIT_THRESHOLD = 99, /* churn: the run completed but a --threshold failed (as k6) */
    CLIENT_EXIT_INTERRUPTED = 105, /* churn: stopped by SIGINT/SIGTERM, report written (as k6) */
};

#endif /* REAP_CLIENT_EXIT_H */
