/*
 * `sluice worker`: an external worker process.  It takes tasks of one
 * worker type from a server over /smila/tasks/..., reads and writes bulks
 * through /smila/store/... and runs the same worker code as the server's
 * in-process pool (docs/workers.md).
 *
 * SIGINT/SIGTERM stop taking tasks; running tasks finish and are reported,
 * then the process exits 0.  The signals are blocked in every thread and
 * taken with sigtimedwait by the main thread, so no handler runs in the
 * middle of a curl call.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "cli/cli.h"
#include "objectstore/objectstore.h"
#include "workers/workers.h"

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static void
usage(FILE *out)
{
    const struct sl_worker_type *const *types = NULL;
    size_t n = 0;
    size_t i = 0;

    fprintf(out,
            "usage: sluice worker --server URL --worker NAME [--threads N]\n"
            "                     [--token TOKEN] [--host NAME] [--config "
            "FILE]\n"
            "\n"
            "Takes tasks of worker NAME from the server at URL and performs "
            "them\n"
            "until SIGINT or SIGTERM (running tasks finish first; exit 0).\n"
            "\n"
            "options:\n"
            "  -w, --worker NAME  the worker type to run\n"
            "  -t, --threads N    tasks performed at once (default 1)\n"
            "  -c, --config FILE  the server's configuration file: with\n"
            "                     objectstore.backend \"s3\" the bulks are\n"
            "                     read and written on S3 directly, not\n"
            "                     through the server; its converters are the\n"
            "                     textExtractor's (default: the built-in\n"
            "                     ones)\n"
            "      --host NAME    host name reported with each task (default:\n"
            "                     this machine's name)\n"
            "      --log-level L  debug, info, warn or error\n"
            "  -h, --help         this help\n");
    sl_cli_conn_help(out, NULL);
    fprintf(out,
            "\n"
            "worker types in this binary:\n");
    types = sl_cli_worker_types(&n);
    for (i = 0; i < n; i++) {
        fprintf(out, "  %s\n", types[i]->name);
    }
    if (n == 0) {
        fprintf(out, "  (none)\n");
    }
    fprintf(out,
            "\nExit status: 0 after a signal, 1 failure, 2 usage error or "
            "unknown\nworker.\n");
}

struct args {
    struct sl_cli_conn conn;
    const char *worker;
    const char *host;
    const char *level;
    const char *config;
    unsigned threads;
};

/* Parse argv into @a; returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        SL_CLI_CONN_OPTIONS,
        {"worker", required_argument, NULL, 'w'},
        {"threads", required_argument, NULL, 't'},
        {"host", required_argument, NULL, 'H'},
        {"config", required_argument, NULL, 'c'},
        {"log-level", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t v = 0;
    int c = 0;

    memset(a, 0, sizeof(*a));
    a->threads = 1;
    sl_cli_conn_init(&a->conn, NULL);
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:w:t:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            a->worker = optarg;
            break;
        case 't':
            if (sl_parse_u64(optarg, &v) != 0 || v == 0 || v > 256) {
                fprintf(stderr,
                        "sluice worker: --threads must be 1 to 256, not "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            a->threads = (unsigned)v;
            break;
        case 'H':
            a->host = optarg;
            break;
        case 'c':
            a->config = optarg;
            break;
        case 'L':
            a->level = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (sl_cli_conn_option(&a->conn, c, optarg)) {
                break;
            }
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(
            stderr, "sluice worker: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (a->conn.server == NULL || a->worker == NULL) {
        fprintf(stderr,
                "sluice worker: --server (or $SLUICE_SERVER) and --worker are "
                "required (sluice worker --help)\n");
        return EXIT_USAGE;
    }
    return -1;
}

/*
 * What a worker takes of the server's configuration file @path (NULL:
 * the defaults): the object store when it is on S3 (*@store, else NULL:
 * objects go through the server), the textExtractor's converters and the
 * throttle rules (installed for the process).  0,
 * or -1 said.
 */
static int
worker_config(const char *path, struct sl_obj **store, json_t **converters)
{
    struct sl_cfg *cfg = sl_malloc(sizeof(*cfg));
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    sl_cfg_defaults(cfg);
    rc = path != NULL ? sl_cfg_load_file(cfg, path, &err) : 0;
    if (rc == 0) {
        rc = sl_cfg_validate(cfg, &err);
    }
    if (rc == 0 && strcmp(cfg->obj_backend, "s3") == 0) {
        rc = sl_cli_open_s3(cfg, store, &err);
    }
    if (rc == 0) {
        *converters = json_loads(cfg->converters, 0, NULL);
        sl_cfg_throttle_apply(cfg);
    } else {
        fprintf(stderr, "sluice worker: %s\n", err.message);
    }
    sl_free(cfg);
    return rc == 0 ? 0 : -1;
}

int
sl_cli_worker_main(int argc, char **argv)
{
    const struct sl_worker_type *const *types = NULL;
    const struct sl_worker_type *type = NULL;
    struct sl_worker_remote_config rc_cfg;
    struct sl_worker_pool *pool = NULL;
    struct sl_obj *store = NULL;
    json_t *converters = NULL;
    enum sl_log_level level = SL_LOG_INFO;
    struct timespec tick = {0, 200 * 1000000L};
    struct args a;
    sigset_t set;
    size_t n = 0;
    int status = EXIT_FAIL;
    int rc = 0;
    int sig = 0;

    rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    if (a.level != NULL && sl_log_level_parse(a.level, &level) != 0) {
        fprintf(stderr, "sluice worker: bad --log-level '%s'\n", a.level);
        return EXIT_USAGE;
    }
    sl_log_set_level(level);
    types = sl_cli_worker_types(&n);
    type = sl_worker_find(types, n, a.worker);
    if (type == NULL) {
        fprintf(stderr,
                "sluice worker: unknown worker '%s' (sluice worker --help "
                "lists the worker types)\n",
                a.worker);
        return EXIT_USAGE;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "sluice worker: cannot initialise libcurl\n");
        return EXIT_FAIL;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    sl_cli_tune_malloc();
    (void)sigemptyset(&set);
    (void)sigaddset(&set, SIGINT);
    (void)sigaddset(&set, SIGTERM);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by threads */

    memset(&rc_cfg, 0, sizeof(rc_cfg));
    rc_cfg.server = a.conn.server;
    rc_cfg.token = a.conn.token;
    rc_cfg.host = a.host;
    if (worker_config(a.config, &store, &converters) != 0) {
        status = EXIT_USAGE;
        goto out;
    }
    rc_cfg.store = store;
    rc_cfg.converters = converters;
    rc = sl_worker_remote_start(&rc_cfg, type, a.threads, &pool);
    if (rc != 0) {
        SL_ERROR("cannot start worker %s: %s", a.worker, sl_strerror(rc));
        goto out;
    }
    SL_INFO("worker %s: %u thread(s) taking tasks from %s, objects %s",
            a.worker,
            a.threads,
            a.conn.server,
            store != NULL ? "on S3 directly" : "through the server");
    for (;;) {
        sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM) {
            SL_INFO("received %s, finishing running tasks", strsignal(sig));
            status = 0;
            break;
        }
        rc = sl_worker_pool_failed(pool);
        if (rc != 0) {
            fprintf(stderr,
                    "sluice worker: the server does not know worker '%s'\n",
                    a.worker);
            status = rc == SL_ENOENT ? EXIT_USAGE : EXIT_FAIL;
            break;
        }
    }
    sl_worker_pool_stop(pool);
    SL_INFO("worker %s stopped", a.worker);

out:
    sl_obj_close(store);
    json_decref(converters);
    curl_global_cleanup();
    return status;
}
