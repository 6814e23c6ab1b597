/*
 * main.c - reap-server: parse the command line and the config file, run the engine.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "cvar.h"
#include "engine_init.h"
#include "engine_options.h"
#include "log.h"
#include "net_alloc.h"

int main(int argc, char **argv)
{
    engine_options opts;
    cvar_registry cvars;
    engine e;
    char err[512];
    int status;

    /* Before ENet allocates anything (net_alloc.h). */
    if (net_alloc_install() != 0) {
        fprintf(stderr, "reap-server: cannot initialise ENet\n");
        return 1;
    }
    engine_options_default(&opts);
    cvar_registry_init(&cvars);
    switch (engine_options_parse(&opts, argc, argv, err, sizeof err)) {
    case ENGINE_OPTIONS_ERROR:
        fprintf(stderr, "reap-server: %s\n", err);
        return 2;
    case ENGINE_OPTIONS_EXIT:
        if (opts.help)
            fputs(engine_options_usage(), stdout);
        else
            printf("reap-server %s\n", REAP_VERSION);
        return 0;
    case ENGINE_OPTIONS_OK:
        break;
    }
    /* The command line's format already applies to what the config file warns about. */
    log_set_format(opts.log_format);
    if (opts.config_path != NULL &&
        engine_options_load_config(&opts, &cvars, opts.config_path, err, sizeof err) != 0) {
        fprintf(stderr, "reap-server: %s\n", err);
        return 2;
    }
    if (engine_options_apply_cvars(&opts, &cvars, err, sizeof err) != 0) {
        fprintf(stderr, "reap-server: %s\n", err);
        return 2;
    }
    if (engine_options_load_admin_token(&opts, err, sizeof err) != 0 ||
        engine_options_load_world_profile(&opts, err, sizeof err) != 0 ||
        engine_options_check(&opts, err, sizeof err) != 0) {
        fprintf(stderr, "reap-server: %s\n", err);
        return 2;
    }
    log_set_level(opts.log_level);
    log_set_format(opts.log_format);
    if (!engine_address_is_loopback(opts.admin_bind))
        log_warn("the admin endpoint listens on %s, off loopback: anyone who can reach it can "
                 "read /metrics, and POST /console needs the admin token", opts.admin_bind);
    signal(SIGPIPE, SIG_IGN);

    if (engine_init(&e, uv_default_loop(), &opts, &cvars, err, sizeof err) != 0) {
        log_error("%s", err);
        uv_loop_close(uv_default_loop());
        engine_options_free(&opts);
        return 1;
    }
    status = engine_run(&e);
    engine_close(&e);
    engine_options_free(&opts);
    uv_loop_close(uv_default_loop());
    net_alloc_trim();
    return status;
}
