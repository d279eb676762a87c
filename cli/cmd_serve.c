/*
 * `sluice serve`: load the configuration, open the data directory, start
 * the HTTP server and run the main libuv loop until SIGINT or SIGTERM.
 * Shutdown stops accepting connections, lets in-flight requests finish
 * (http.shutdownGraceSeconds) and closes every file before exiting.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <uv.h>

#include "builtin/builtin.h"
#include "cli/cli.h"
#include "http/http.h"
#include "deltaservice/deltaservice.h"
#include "index/index.h"
#include "jobmanager/jobmanager.h"
#include "objectstore/objectstore.h"
#include "text/text.h"
#include "workers/workers.h"

/* Where the configuration came from: said in the log once it is set up. */
static char g_config_from[4200];

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: sluice serve [--config-dir DIR | --config FILE] "
            "[--listen ADDR:PORT]\n"
            "                    [--data-dir DIR] [--log-level LVL]\n"
            "\n"
            "Runs the Sluice server until SIGINT or SIGTERM.\n"
            "\n"
            "The configuration directory is the first of: --config-dir DIR;\n"
            "the directory of --config FILE; the current directory when it\n"
            "holds config/ and workflows/ (a source tree: config/sluice.json,\n"
            "config/jobs.json, workflows/); " SL_CLI_SYSCONF_DIR ".  It holds\n"
            "sluice.json (optional: else the built-in defaults), jobs.json,\n"
            "buckets.json, workers.json and workflows/*.json.\n"
            "\n"
            "options:\n"
            "  -C, --config-dir DIR  configuration directory (see above)\n"
            "  -c, --config FILE     configuration file; definitions and\n"
            "                        workflows/ beside it (workflows/ of its\n"
            "                        parent directory when it has none)\n"
            "  -l, --listen ADDR:PORT  listen address, overrides 'listen'\n"
            "  -d, --data-dir DIR    data directory, overrides 'dataDir'\n"
            "      --log-level LVL   debug, info, warn or error, overrides "
            "'log.level'\n"
            "  -h, --help            this help\n"
            "\n"
            "configuration keys (docs/configuration.md):\n");
    sl_cfg_print_keys(out);
}

/*
 * The bulkbuilder as the run end hook sees it: the jobmanager's clean-up
 * thread may call the hook from sl_jm_start on, before sl_bb_start has
 * recovered the journals, and until sl_jm_close joins it, after the
 * bulkbuilder is closed; so the hook gets the bulkbuilder only between
 * the two (set and taken away under mu, which a call in flight holds).
 */
static struct {
    pthread_mutex_t mu;
    struct sl_bb *bb;
} g_run_end = {PTHREAD_MUTEX_INITIALIZER, NULL};

static void
run_end(void *arg, const char *job, const char *worker, const json_t *params)
{
    (void)arg;
    (void)pthread_mutex_lock(&g_run_end.mu);
    sl_worker_run_end(g_run_end.bb, job, worker, params);
    (void)pthread_mutex_unlock(&g_run_end.mu);
}

static void
run_end_set(struct sl_bb *bb)
{
    (void)pthread_mutex_lock(&g_run_end.mu);
    g_run_end.bb = bb;
    (void)pthread_mutex_unlock(&g_run_end.mu);
}

/*
 * The check before a run starts (sl_jm_set_start_check): the workers'
 * own (sl_worker_start_check), then no action crawls a source whose purge
 * is marked: one under way, or one that failed or was interrupted and is
 * to be done again, would forget what this run records
 * (docs/deltaservice.md "Purging a source").
 */
#define SCHED_DRAIN_MS 30000u /* as the REST finish waits for it */

struct start_ctx {
    struct sl_jm *jm;
    struct sl_delta *delta;
};

static struct start_ctx start_ctx;

/* What a schedule's "finish" at the end of its window needs. */
static struct {
    struct sl_jm *jm;
    struct sl_bb *bb;
} g_sched;

/* atWindowEnd "finish": as the REST finish, the records the bulkbuilder
 * accepted for the job belong to the run, so they are handed over
 * first. */
static int
sched_finish(void *arg, const char *job, const char *run_id, struct sl_err *err)
{
    int rc = 0;

    (void)arg;
    if (g_sched.bb != NULL) {
        rc = sl_bb_drain(g_sched.bb, job, SCHED_DRAIN_MS, err);
    }
    return rc == 0 ? sl_jm_run_finish(g_sched.jm, job, run_id, err) : rc;
}

/* The schedules' clock: a thread that ticks every second (unless tests
 * drive it), off the event loop, which must stay free for the signals: a
 * tick may wait for the store (a full disk) or for the bulkbuilder. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int running;
    int stop;
    struct sl_jm *jm;
} g_clock = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
};

static void *
clock_main(void *arg)
{
    (void)arg;
    (void)pthread_setname_np(pthread_self(), "sl-schedule");
    (void)pthread_mutex_lock(&g_clock.mu);
    while (!g_clock.stop) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        (void)pthread_cond_timedwait(&g_clock.cv, &g_clock.mu, &ts);
        if (g_clock.stop) {
            break;
        }
        (void)pthread_mutex_unlock(&g_clock.mu);
        sl_jm_sched_tick(g_clock.jm, sl_time_ms());
        (void)pthread_mutex_lock(&g_clock.mu);
    }
    (void)pthread_mutex_unlock(&g_clock.mu);
    return NULL;
}

static void
clock_start(struct sl_jm *jm)
{
    g_clock.jm = jm;
    g_clock.stop = 0;
    g_clock.running = pthread_create(&g_clock.th, NULL, clock_main, NULL) == 0;
    if (!g_clock.running) {
        SL_ERROR("cannot start the schedules' thread: job schedules do not "
                 "run");
    }
}

/* Ask the clock to stop (a tick going on ends first: after the
 * jobmanager's shutdown its waits for the store give up). */
static void
clock_stop_begin(void)
{
    (void)pthread_mutex_lock(&g_clock.mu);
    g_clock.stop = 1;
    (void)pthread_cond_signal(&g_clock.cv);
    (void)pthread_mutex_unlock(&g_clock.mu);
}

static void
clock_join(void)
{
    if (g_clock.running) {
        (void)pthread_join(g_clock.th, NULL);
        g_clock.running = 0;
    }
}

static int
start_check(void *arg,
            const char *job,
            const char *worker,
            const json_t *params,
            struct sl_err *err)
{
    const struct start_ctx *c = arg;
    const char *source =
        json_string_value(json_object_get(params, "dataSource"));
    int rc = sl_worker_start_check(c->jm, job, worker, params, err);

    if (rc == 0 && source != NULL &&
        sl_delta_purge_is_marked(c->delta, source)) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "parameters.dataSource",
                        "job '%s': source '%s' is being purged, or its "
                        "purge did not finish (purge it again: DELETE "
                        "/smila/importing/delta/%s/?purge=true)",
                        job,
                        source,
                        source);
    }
    return rc;
}

/*
 * Open the jobmanager under <dataDir>/jobmanager, register the external
 * worker descriptions of <configDir>/workers.json, load definitions and
 * resume the runs that were active when the server stopped.
 */
/* Which configuration the server uses, and loudly when it has no
 * workflow or no job: nothing can run then. */
static void
say_definitions(const struct sl_cfg *cfg, struct sl_jm *jm)
{
    json_t *wfs = sl_jm_defs_list(jm, "workflows");
    json_t *jobs = sl_jm_defs_list(jm, "jobs");

    SL_INFO("configuration: %s; definitions from %s, workflows from %s: "
            "%zu workflow(s), %zu job(s)",
            g_config_from,
            cfg->jm_config_dir,
            cfg->jm_workflows_dir,
            json_array_size(wfs),
            json_array_size(jobs));
    if (json_array_size(wfs) == 0) {
        SL_WARN("NO WORKFLOW LOADED: no *.json in %s and none defined over "
                "REST, so no job can run; point --config-dir at a directory "
                "with workflows/ (sluice serve --help)",
                cfg->jm_workflows_dir);
    }
    if (json_array_size(jobs) == 0) {
        SL_WARN("NO JOB LOADED: no %s/jobs.json and none defined over REST; "
                "define jobs with sluice job define FILE or in jobs.json",
                cfg->jm_config_dir);
    }
    json_decref(wfs);
    json_decref(jobs);
}

static int
open_jobmanager(const struct sl_cfg *cfg,
                struct sl_obj *store,
                struct sl_delta *delta,
                struct sl_jm **out,
                struct sl_bb **bb)
{
    struct sl_jm_config jc;
    struct sl_err err;
    char *state = sl_asprintf("%s/jobmanager", cfg->data_dir);
    char *workers = sl_asprintf("%s/workers.json", cfg->jm_config_dir);
    int rc = 0;

    sl_err_clear(&err);
    memset(&jc, 0, sizeof(jc));
    jc.state_dir = state;
    jc.config_dir = cfg->jm_config_dir;
    jc.workflows_dir = cfg->jm_workflows_dir;
    jc.durability = strcmp(cfg->durability, "fsync") == 0
                        ? SL_DURABILITY_FSYNC
                        : SL_DURABILITY_PROCESS;
    jc.store = store;
    jc.lease_seconds = (unsigned)cfg->lease_seconds;
    jc.max_retries = (unsigned)cfg->max_retries;
    jc.max_in_progress = (unsigned)cfg->max_in_progress;
    jc.max_queued_downstream = (unsigned)cfg->max_queued_downstream;
    jc.max_errors = (unsigned)cfg->max_errors;
    jc.nospace_first_ms = (unsigned)cfg->nospace_first_ms;
    jc.nospace_max_ms = (unsigned)cfg->nospace_max_ms;
    jc.history_max_per_run = (unsigned)cfg->hist_max_per_run;
    jc.history_off = cfg->hist_max_per_run == 0;
    jc.history_keep_runs = (unsigned)cfg->hist_keep_runs;
    jc.history_max_days = (unsigned)cfg->hist_max_days;
    rc = sl_jm_open(&jc, out, &err);
    if (rc == 0) {
        const struct sl_worker_type *const *types = NULL;
        size_t n = 0;

        types = sl_cli_worker_types(&n);
        rc = sl_worker_register_all(*out, types, n, &err);
    }
    if (rc == 0) {
        struct sl_bb_config bc;
        char *dir = sl_asprintf("%s/bulkbuilder", cfg->data_dir);

        memset(&bc, 0, sizeof(bc));
        bc.dir = dir;
        bc.durability = jc.durability;
        bc.limit_size = cfg->bb_limit_size;
        bc.limit_ms = (unsigned)cfg->bb_limit_ms;
        bc.max_active = (unsigned)cfg->bb_max_active;
        bc.nospace_first_ms = jc.nospace_first_ms;
        bc.nospace_max_ms = jc.nospace_max_ms;
        rc = sl_bb_open(&bc, *out, store, bb, &err);
        sl_free(dir);
        start_ctx.jm = *out;
        start_ctx.delta = delta;
        sl_jm_set_start_check(*out, start_check, &start_ctx);
        sl_jm_set_def_check(*out, sl_builtin_def_check, NULL);
        sl_jm_set_run_end_hook(*out, run_end, NULL);
        g_sched.jm = *out;
        g_sched.bb = *bb;
        sl_jm_set_sched_finish(*out, sched_finish, NULL);
    }
    if (rc == 0) {
        rc = sl_jm_register_workers_file(*out, workers, &err);
        if (rc > 0) {
            SL_WARN("%d worker description(s) in %s failed", rc, workers);
            rc = 0;
        }
    }
    if (rc == 0) {
        json_t *limits = json_loads(cfg->worker_limits, 0, NULL);
        const char *name = NULL;
        json_t *n = NULL;

        json_object_foreach(limits, name, n)
        {
            sl_jm_set_worker_limit(*out, name, (unsigned)json_integer_value(n));
        }
        json_decref(limits);
        rc = sl_jm_start(*out, &err);
    }
    if (rc == 0) {
        rc = sl_bb_start(*bb, &err);
    }
    if (rc == 0) {
        /* not before: sl_jm_start resumes runs (their end hooks may come
         * at once) while sl_bb_start still recovers the journals */
        run_end_set(*bb);
        say_definitions(cfg, *out);
    }
    if (rc != 0) {
        SL_ERROR("cannot start the jobmanager: %s", err.message);
    }
    sl_free(state);
    sl_free(workers);
    return rc;
}

/*
 * A data dir with less than START_FREE_BYTES free: say so and do not
 * start.  LMDB maps the lock file of an environment it creates, and
 * touching a page of it that a full disk cannot back is a SIGBUS (seen
 * with a delta shard on a full tmpfs); an existing environment would
 * make the start wait for its first commit instead.  Free space first.
 */
#define START_FREE_BYTES (UINT64_C(1) << 20)

static int
data_dir_full(const char *dir)
{
    struct statvfs vfs;
    uint64_t avail = 0;

    if (statvfs(dir, &vfs) != 0) {
        return 0; /* the opens below say what is wrong */
    }
    avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
    if (avail >= START_FREE_BYTES) {
        return 0;
    }
    SL_ERROR("the data directory %s has %llu bytes free, less than the "
             "%llu needed to start: free some space first "
             "(docs/operations.md, \"A full disk\")",
             dir,
             (unsigned long long)avail,
             (unsigned long long)START_FREE_BYTES);
    return 1;
}

/* Is @name in the comma-separated list @list (workers.external)? */
static int
in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    const char *p = list;

    while (*p != '\0') {
        size_t len = strcspn(p, ",");

        if (len == n && strncmp(p, name, n) == 0) {
            return 1;
        }
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    return 0;
}

/*
 * Run the worker types in-process (workers.threads per type), except the
 * ones of workers.external, which `sluice worker` processes take over the
 * task API.  *out stays NULL when there is nothing to run.
 */
static int
start_workers(const struct sl_cfg *cfg,
              struct sl_jm *jm,
              struct sl_obj *store,
              const struct sl_worker_services *services,
              struct sl_worker_pool **out)
{
    const struct sl_worker_type *const *types = NULL;
    const struct sl_worker_type **run = NULL;
    size_t n = 0;
    size_t k = 0;
    size_t i = 0;
    int rc = 0;

    *out = NULL;
    types = sl_cli_worker_types(&n);
    run = sl_calloc(n + 1, sizeof(*run));
    for (i = 0; i < n; i++) {
        if (!in_list(cfg->workers_external, types[i]->name)) {
            run[k++] = types[i];
        }
    }
    if (k > 0 && cfg->worker_threads > 0) {
        rc = sl_worker_pool_start(jm,
                                  store,
                                  services,
                                  run,
                                  k,
                                  (unsigned)cfg->worker_threads,
                                  cfg->workers_nice,
                                  out);
        if (rc != 0) {
            SL_ERROR("cannot start the worker pool: %s", sl_strerror(rc));
        } else {
            SL_INFO("%zu worker type(s) in-process, %u thread(s) each",
                    k,
                    (unsigned)cfg->worker_threads);
        }
    }
    sl_free(run);
    return rc;
}

/* The delta service under <dataDir>/delta (docs/deltaservice.md). */
static int
open_delta(const struct sl_cfg *cfg, struct sl_delta **out)
{
    struct sl_err err;
    char *dir = sl_asprintf("%s/delta", cfg->data_dir);
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_delta_open(dir,
                       (unsigned)cfg->delta_shards,
                       strcmp(cfg->durability, "fsync") == 0
                           ? SL_DURABILITY_FSYNC
                           : SL_DURABILITY_PROCESS,
                       cfg->delta_map_size,
                       out,
                       &err);
    if (rc != 0) {
        SL_ERROR("cannot open the delta service: %s", err.message);
    }
    sl_free(dir);
    return rc;
}

/* The embedded full-text index under <dataDir>/index (docs/index.md). */
static int
open_index(const struct sl_cfg *cfg, struct sl_index_set **out)
{
    struct sl_err err;
    char *dir = sl_asprintf("%s/index", cfg->data_dir);
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_index_open(dir, out, &err);
    if (rc != 0) {
        SL_ERROR("cannot open the index: %s", err.message);
    } else {
        (void)sl_index_set_shards(*out, (unsigned)cfg->index_shards);
        if (sl_index_set_idle_merge(*out, (unsigned)cfg->index_idle_merge_ms) !=
            0) {
            SL_WARN("no thread to merge index segments when idle");
        }
    }
    sl_free(dir);
    return rc;
}

static void
on_signal(uv_signal_t *h, int signum)
{
    SL_INFO("received %s, shutting down", strsignal(signum));
    uv_stop(h->loop);
}

static void
close_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h)) {
        uv_close(h, NULL);
    }
}

static int
is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The configuration directory (docs/configuration.md): set the defaults
 * of jobmanager.configDir and .workflowsDir in @cfg and the file to read
 * in @file (@required: it must exist).  The file's own keys win.
 */
static void
find_config(const char *dir_opt,
            const char *file_opt,
            struct sl_cfg *cfg,
            char *file,
            size_t cap,
            int *required)
{
    char base[4096];
    const char *how = NULL;

    *required = 0;
    if (dir_opt != NULL) {
        (void)snprintf(base, sizeof(base), "%s", dir_opt);
        how = "--config-dir";
    } else if (file_opt != NULL) {
        const char *slash = strrchr(file_opt, '/');

        (void)snprintf(base,
                       sizeof(base),
                       "%.*s",
                       slash != NULL ? (int)(slash - file_opt) : 1,
                       slash != NULL ? file_opt : ".");
        if (base[0] == '\0') {
            (void)snprintf(base, sizeof(base), "/");
        }
        how = "--config";
    } else if (is_dir("config") && is_dir("workflows")) {
        /* a source tree: today's layout, config/ and workflows/ */
        (void)snprintf(file, cap, "config/sluice.json");
        (void)snprintf(
            cfg->jm_config_dir, sizeof(cfg->jm_config_dir), "config");
        (void)snprintf(
            cfg->jm_workflows_dir, sizeof(cfg->jm_workflows_dir), "workflows");
        (void)snprintf(g_config_from,
                       sizeof(g_config_from),
                       "./config and ./workflows (the current directory "
                       "holds both)");
        return;
    } else {
        (void)snprintf(base, sizeof(base), "%s", SL_CLI_SYSCONF_DIR);
        how = is_dir(base) ? "the system's" : "none found, the default";
    }
    if (file_opt != NULL) {
        (void)snprintf(file, cap, "%s", file_opt);
        *required = 1;
    } else {
        (void)snprintf(file, cap, "%s/sluice.json", base);
    }
    (void)snprintf(cfg->jm_config_dir, sizeof(cfg->jm_config_dir), "%s", base);
    if (snprintf(cfg->jm_workflows_dir,
                 sizeof(cfg->jm_workflows_dir),
                 "%s/workflows",
                 base) >= (int)sizeof(cfg->jm_workflows_dir)) {
        cfg->jm_workflows_dir[0] = '\0'; /* too long: none */
    }
    if (file_opt != NULL && !is_dir(cfg->jm_workflows_dir) &&
        snprintf(cfg->jm_workflows_dir,
                 sizeof(cfg->jm_workflows_dir),
                 "%s/../workflows",
                 base) >= (int)sizeof(cfg->jm_workflows_dir)) {
        /* config/sluice.json of a source tree: ../workflows */
        cfg->jm_workflows_dir[0] = '\0';
    }
    (void)snprintf(g_config_from, sizeof(g_config_from), "%s (%s)", base, how);
}

/* Parse the command line into @cfg (after the config file is applied). */
static int
parse_args(int argc, char **argv, struct sl_cfg *cfg)
{
    static const struct option opts[] = {
        {"config-dir", required_argument, NULL, 'C'},
        {"config", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 'l'},
        {"data-dir", required_argument, NULL, 'd'},
        {"log-level", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    const char *config_dir = NULL;
    char file[4200];
    int required = 0;
    const char *listen = NULL;
    const char *data_dir = NULL;
    const char *level = NULL;
    struct sl_err err;
    int c = 0;
    int rc = 0;

    sl_err_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "C:c:l:d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'C':
            config_dir = optarg;
            break;
        case 'c':
            config = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 'd':
            data_dir = optarg;
            break;
        case 'L':
            level = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(
            stderr, "sluice serve: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (config != NULL && config_dir != NULL) {
        fprintf(stderr,
                "sluice serve: --config and --config-dir exclude each "
                "other\n");
        return 2;
    }
    if (config_dir != NULL && !is_dir(config_dir)) {
        fprintf(stderr,
                "sluice serve: --config-dir %s: not a directory\n",
                config_dir);
        return 2;
    }
    sl_cfg_defaults(cfg);
    find_config(config_dir, config, cfg, file, sizeof(file), &required);
    rc = sl_cfg_load_file(cfg, file, &err);
    if (rc == SL_ENOENT && !required) {
        rc = 0; /* no file: the embedded defaults */
    }
    if (rc != 0) {
        fprintf(stderr, "sluice serve: %s\n", err.message);
        return 2;
    }
    if (listen != NULL) {
        (void)snprintf(cfg->listen, sizeof(cfg->listen), "%s", listen);
    }
    if (data_dir != NULL) {
        (void)snprintf(cfg->data_dir, sizeof(cfg->data_dir), "%s", data_dir);
    }
    if (level != NULL) {
        (void)snprintf(cfg->log_level, sizeof(cfg->log_level), "%s", level);
    }
    rc = sl_cfg_validate(cfg, &err);
    if (rc != 0) {
        fprintf(stderr, "sluice serve: %s\n", err.message);
        return 2;
    }
    return 0;
}

/* What the server runs on: opened by open_services in this order, closed
 * by close_services in the reverse one. */
struct services {
    struct sl_obj *store;
    struct sl_delta *delta;
    struct sl_index_set *index;
    struct sl_jm *jm;
    struct sl_bb *bb;
    json_t *converters;
    struct sl_worker_pool *pool;
};

/* The object store: under <dataDir>/store, or on S3 (docs/objectstore.md). */
static int
open_store(const struct sl_cfg *cfg, struct sl_obj **out)
{
    struct sl_err err;
    char *root = sl_asprintf("%s/store", cfg->data_dir);
    int rc = 0;

    sl_err_clear(&err);
    if (strcmp(cfg->obj_backend, "s3") == 0) {
        rc = sl_cli_open_s3(cfg, out, &err);
    } else {
        rc = sl_obj_open_fs(root,
                            strcmp(cfg->durability, "fsync") == 0
                                ? SL_DURABILITY_FSYNC
                                : SL_DURABILITY_PROCESS,
                            out,
                            &err);
    }
    if (rc != 0) {
        SL_ERROR("cannot open the object store: %s", err.message);
    } else if (strcmp(cfg->obj_backend, "s3") == 0) {
        SL_INFO("object store: S3 at %s, %s%s%s",
                cfg->s3_endpoint,
                cfg->s3_bucket[0] != '\0' ? "bucket " : "stores as buckets",
                cfg->s3_bucket,
                cfg->s3_prefix[0] != '\0' ? " (with a key prefix)" : "");
    }
    sl_free(root);
    return rc;
}

/*
 * Open the store, the delta service, the index, the jobmanager with the
 * bulkbuilder, and start the in-process workers; stops at the first
 * failure (said in the log), leaving what is open in @s for
 * close_services.
 */
static int
open_services(const struct sl_cfg *cfg, struct services *s)
{
    struct sl_worker_services ws;
    int rc = open_store(cfg, &s->store);

    if (rc == 0) {
        rc = open_delta(cfg, &s->delta);
    }
    if (rc == 0) {
        rc = open_index(cfg, &s->index);
    }
    if (rc == 0) {
        rc = open_jobmanager(cfg, s->store, s->delta, &s->jm, &s->bb);
    }
    if (rc != 0) {
        return rc;
    }
    s->converters = json_loads(cfg->converters, 0, NULL);
    (void)sl_text_converters_check(s->converters); /* warns per missing one */
    sl_cfg_throttle_apply(cfg);
    memset(&ws, 0, sizeof(ws));
    ws.delta = s->delta;
    ws.bulkbuilder = s->bb;
    ws.index = s->index;
    ws.converters = s->converters;
    return start_workers(cfg, s->jm, s->store, &ws, &s->pool);
}

static void
close_services(struct services *s)
{
    sl_jm_shutdown(s->jm); /* again, for the ways here without a signal */
    sl_worker_pool_stop(s->pool); /* running tasks finish first */
    sl_text_helpers_close();      /* idle persistent converters */
    run_end_set(NULL);
    sl_bb_close(s->bb);
    sl_jm_close(s->jm);
    json_decref(s->converters);
    sl_index_close(s->index);
    sl_delta_close(s->delta);
    sl_obj_close(s->store);
}

/*
 * Serve HTTP on the services until SIGINT or SIGTERM, then stop the
 * server (in-flight requests get http.shutdownGraceSeconds).  0 after a
 * clean stop, 1 when the server could not start.
 */
static int
serve(const struct sl_cfg *cfg, const struct services *s)
{
    struct sl_http_server *http = NULL;
    struct sl_http_config hc;
    struct sl_http_services svc;
    struct sl_err err;
    uv_loop_t loop;
    uv_signal_t sigint;
    uv_signal_t sigterm;
    const char *tc = getenv("SLUICE_TEST_CLOCK");
    int status = 1;

    sl_err_clear(&err);
    memset(&hc, 0, sizeof(hc));
    hc.listen = cfg->listen;
    hc.api_token = cfg->api_token;
    hc.threads = (unsigned)cfg->http_threads;
    hc.max_connections = (unsigned)cfg->max_connections;
    hc.max_conn_per_ip = (unsigned)cfg->max_conn_per_ip;
    hc.max_body_bytes = cfg->max_body_bytes;
    hc.max_header_bytes = cfg->max_header_bytes;
    hc.request_timeout_s = (unsigned)cfg->request_timeout;
    hc.metrics_off = cfg->http_metrics == 0;
    hc.max_object_bytes = cfg->max_object_bytes;
    svc.store = s->store;
    svc.jm = s->jm;
    svc.delta = s->delta;
    svc.index = s->index;
    svc.bulkbuilder = s->bb;
    svc.test_clock = tc != NULL && strcmp(tc, "1") == 0;

    if (uv_loop_init(&loop) != 0) {
        SL_ERROR("cannot create the event loop");
        return 1;
    }
    (void)uv_signal_init(&loop, &sigint);
    (void)uv_signal_init(&loop, &sigterm);
    (void)uv_signal_start(&sigint, on_signal, SIGINT);
    (void)uv_signal_start(&sigterm, on_signal, SIGTERM);
    if (svc.test_clock) {
        SL_WARN("SLUICE_TEST_CLOCK=1: the schedules follow POST "
                "/smila/debug/clock, not the time");
    } else {
        clock_start(s->jm);
    }

    /* before any request can start a crawl of a source it purges */
    sl_http_purges_resume(&svc);
    if (sl_http_start(&hc, &svc, &http, &err) != 0) {
        SL_ERROR("cannot start the HTTP server: %s", err.message);
    } else {
        SL_INFO("sluice %s listening on http://%.*s:%u/ (data dir %s, "
                "durability %s)",
                SL_VERSION,
                (int)strcspn(cfg->listen, ":"),
                cfg->listen,
                sl_http_port(http),
                cfg->data_dir,
                cfg->durability);
        /* a service of Type=notify is started now (a no-op elsewhere) */
        (void)sd_notifyf(
            0, "READY=1\nSTATUS=listening on port %u", sl_http_port(http));
        (void)uv_run(&loop, UV_RUN_DEFAULT);
        (void)sd_notify(0, "STOPPING=1");
        clock_stop_begin();
        /* From now on a state commit that fails (a full disk) is given
         * up: requests, workers, the bulkbuilder and a schedule's tick
         * waiting for it return, and the stop does not wait for them for
         * ever. */
        sl_jm_shutdown(s->jm);
        clock_join();
        sl_http_stop(http, (unsigned)cfg->shutdown_grace * 1000);
        SL_INFO("stopped");
        status = 0;
    }
    uv_walk(&loop, close_handle, NULL);
    (void)uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0) {
        SL_WARN("event loop closed with open handles");
    }
    return status;
}

int
sl_cli_serve_main(int argc, char **argv)
{
    struct sl_cfg cfg;
    struct sl_err err;
    struct services s;
    enum sl_log_level level = SL_LOG_INFO;
    int rc = 0;
    int status = 1;

    sl_err_clear(&err);
    rc = parse_args(argc, argv, &cfg);
    if (rc != 0) {
        return rc == 1 ? 0 : rc;
    }
    (void)sl_log_level_parse(cfg.log_level, &level);
    sl_log_set_level(level);
    (void)signal(SIGPIPE, SIG_IGN);
    sl_cli_tune_malloc();

    rc = sl_mkdirs(cfg.data_dir, &err);
    if (rc != 0) {
        SL_ERROR("cannot create the data directory: %s", err.message);
        return 1;
    }
    if (data_dir_full(cfg.data_dir)) {
        return 1;
    }
    memset(&s, 0, sizeof(s));
    if (open_services(&cfg, &s) == 0) {
        status = serve(&cfg, &s);
    }
    close_services(&s);
    return status;
}
