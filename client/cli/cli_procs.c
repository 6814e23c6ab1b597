/*
 * cli_procs.c - `--procs N`: one run played by N processes on this machine, for machines
 * with more cores than one loop can use (Locust's --processes, k6's execution segments).
 *
 * The parent picks the seed, forks N children, each the shard I/N of the same run writing its
 * report to OUT/shard-I/ and its output to OUT/shard-I/client.log, waits for all of them, and
 * merges their reports exactly into OUT (counts and histograms add up, the server's figures are
 * taken once) with the run's thresholds, as `reap-client merge` does; a shard that failed
 * but left its report (the server stopped answering, a file could not be written) is merged
 * too, and the parent's status is the worst of the shards' and the merge's. Only shard 0
 * takes the leak verdict. Ctrl-C reaches every child (they share the terminal's process group): each
 * ends its shard cleanly, and the parent still merges what they wrote.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_clock.h"
#include "client_exit.h"
#include "client_files.h"
#include "report_merge.h"

/* The child: shard `index` of the run, its output in its directory's client.log. */
static int procs_child(const client_options *parent, uint32_t index, const char *dir)
{
    client_options o = *parent;
    char path[600];
    FILE *log;

    o.procs = 1;
    o.shard = index;
    o.shards = parent->procs;
    o.progress = 0;
    o.n_thresholds = 0;            /* judged once, on the merged report */
    o.junit_path[0] = '\0';        /* ... and written once, by the merge */
    if (index == 0) {
        for (uint32_t i = 0; i < parent->n_thresholds; i++)
            if (strcmp(parent->thresholds[i].metric, "leaked") == 0)
                o.leak_check = true;
    } else {
        o.leak_check = false;
    }
    snprintf(o.out_dir, sizeof o.out_dir, "%s", dir);
    snprintf(path, sizeof path, "%s/client.log", dir);
    log = fopen(path, "w");
    if (log == NULL) {
        fprintf(stderr, "reap-client: cannot write '%s': %s\n", path, strerror(errno));
        return CLIENT_EXIT_FAILED;
    }
    return churn_run_command(&o, log);
}

static volatile sig_atomic_t procs_terminated;

static void procs_sigterm_cb(int sig)
{
    (void)sig;
    procs_terminated = 1;
}

int churn_run_procs(const client_options *opts, FILE *out)
{
    client_options o = *opts;
    uint32_t n = opts->procs, started = 0, failed = 0;
    pid_t pids[CLIENT_PROCS_MAX];
    char dirs[CLIENT_PROCS_MAX][600];
    churn_merge_args *merge;
    struct sigaction ignore, old, term, old_term;
    bool forwarded = false;
    int worst = CLIENT_EXIT_OK;
    char err[600];
    int rc;

    if (!o.seed_set) {
        o.seed = churn_seed_from_clock();
        o.seed_set = true;
    }
    for (uint32_t i = 0; i < n; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/shard-%u", o.out_dir, i);
        if (!churn_mkdirs(dirs[i], err, sizeof err)) {
            fprintf(stderr, "reap-client: %s\n", err);
            return CLIENT_EXIT_FAILED;
        }
    }
    if (!o.session.quiet)
        fprintf(out, "reap-client: %u processes, %u bots, seed %llu: each shard's output in "
                "%s/shard-I/client.log\n", n, o.bots, (unsigned long long)o.seed, o.out_dir);
    fflush(out);
    fflush(stderr);
    /* The parent outlives a Ctrl-C to merge what the children wrote. */
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old);
    /* SIGTERM (a CI job's or Kubernetes' stop) is passed on to every shard. */
    memset(&term, 0, sizeof term);
    term.sa_handler = procs_sigterm_cb;
    sigemptyset(&term.sa_mask);
    procs_terminated = 0;
    sigaction(SIGTERM, &term, &old_term);
    for (uint32_t i = 0; i < n; i++) {
        pid_t pid = fork();

        if (pid == 0) {
            sigaction(SIGINT, &old, NULL);
            sigaction(SIGTERM, &old_term, NULL);
            _exit(procs_child(&o, i, dirs[i]));
        }
        if (pid < 0) {
            fprintf(stderr, "reap-client: cannot start shard %u of %u: %s\n", i, n,
                    strerror(errno));
            failed++;
            break;
        }
        pids[started++] = pid;
    }
    for (uint32_t i = 0; i < started; i++) {
        int status;

        while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
            if (procs_terminated && !forwarded) {
                for (uint32_t k = 0; k < started; k++)
                    kill(pids[k], SIGTERM);
                forwarded = true;
            }
        }
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != CLIENT_EXIT_OK &&
                                   WEXITSTATUS(status) != CLIENT_EXIT_THRESHOLD &&
                                   WEXITSTATUS(status) != CLIENT_EXIT_INTERRUPTED))
            fprintf(stderr, "reap-client: shard %u of %u failed (%s %d); see %s/client.log\n", i,
                    n, WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), dirs[i]);
        /* the thresholds are judged on the merged report, not on a shard's */
        if (!WIFEXITED(status))
            worst = client_exit_worse(worst, CLIENT_EXIT_FAILED);
        else if (WEXITSTATUS(status) != CLIENT_EXIT_THRESHOLD)
            worst = client_exit_worse(worst, WEXITSTATUS(status));
    }
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (failed > 0)
        return CLIENT_EXIT_FAILED;

    merge = calloc(1, sizeof *merge);
    if (merge == NULL) {
        fprintf(stderr, "reap-client: out of memory for the merge\n");
        return CLIENT_EXIT_FAILED;
    }
    for (uint32_t i = 0; i < n; i++)
        merge->dirs[merge->n_dirs++] = dirs[i];
    merge->out_dir = o.out_dir;
    merge->junit_path = o.junit_path;
    merge->quiet = o.session.quiet;
    for (uint32_t i = 0; i < o.n_thresholds; i++)
        if (!churn_merge_add_threshold(merge->thresholds, &merge->n_thresholds,
                                       o.thresholds[i].text, err, sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            free(merge);
            return CLIENT_EXIT_USAGE;
        }
    rc = churn_merge_run(merge, out);
    free(merge);
    return client_exit_worse(worst, rc);
}
