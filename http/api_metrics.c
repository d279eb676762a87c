/*
 * GET /metrics: the Prometheus exposition (docs/operations.md "Metrics"),
 * text format 0.0.4, or OpenMetrics 1.0.0 when the Accept header asks for
 * application/openmetrics-text.  Everything is read at the scrape from
 * what the services keep anyway (the jobmanager's queues and runs, the
 * bulkbuilder's status, the indexes' counts, /proc/self); only the HTTP
 * requests are counted for it (metrics.c).  Label values are worker,
 * counter, job, index and route names, never a record id, URL or run id.
 */
#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http/http_int.h"

#define BODY_MAX ((size_t)32 << 20) /* a scrape's text, at most */

/* ------------------------------------------------------------------------
 * The writer.
 * --------------------------------------------------------------------- */

void
sl__prom_family(struct sl__prom *p,
                const char *name,
                const char *type,
                const char *help)
{
    p->counter = strcmp(type, "counter") == 0;
    (void)snprintf(p->family, sizeof(p->family), "%s", name);
    /* 0.0.4 names a counter's family by its sample, "..._total" */
    (void)sl_buf_appendf(p->b,
                         "# HELP %s%s %s\n# TYPE %s%s %s\n",
                         name,
                         p->counter && !p->om ? "_total" : "",
                         help,
                         name,
                         p->counter && !p->om ? "_total" : "",
                         type);
}

/* Append label value @v escaped (backslash, double quote, newline). */
static void
label_value(struct sl_buf *b, const char *v)
{
    const char *s = v;

    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"') {
            (void)sl_buf_appendf(b, "\\%c", *s);
        } else if (*s == '\n') {
            (void)sl_buf_append(b, "\\n", 2);
        } else {
            (void)sl_buf_append(b, s, 1);
        }
    }
}

void
sl__prom_sample(struct sl__prom *p, const char *suffix, double v, ...)
{
    const char *name = NULL;
    va_list ap;
    int first = 1;

    (void)sl_buf_appendf(p->b, "%s%s", p->family, suffix);
    va_start(ap, v);
    while ((name = va_arg(ap, const char *)) != NULL) {
        const char *val = va_arg(ap, const char *);

        (void)sl_buf_appendf(p->b, "%s%s=\"", first ? "{" : ",", name);
        label_value(p->b, val != NULL ? val : "");
        (void)sl_buf_append(p->b, "\"", 1);
        first = 0;
    }
    va_end(ap);
    if (isnan(v)) {
        (void)sl_buf_appendf(p->b, "%s NaN\n", first ? "" : "}");
    } else if (isinf(v)) {
        (void)sl_buf_appendf(
            p->b, "%s %cInf\n", first ? "" : "}", v > 0 ? '+' : '-');
    } else if (v > -9e15 && v < 9e15 && v == (double)(int64_t)v) {
        (void)sl_buf_appendf(
            p->b, "%s %lld\n", first ? "" : "}", (long long)(int64_t)v);
    } else {
        (void)sl_buf_appendf(p->b, "%s %.15g\n", first ? "" : "}", v);
    }
}

/* ------------------------------------------------------------------------
 * The process (the client libraries' standard process_* series).
 * --------------------------------------------------------------------- */

/* Open file descriptors: the entries of /proc/self/fd, less the one the
 * listing holds. */
static long
open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e = NULL;
    long n = 0;

    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    (void)closedir(d);
    return n - 1;
}

/* The number after @key at the start of a line of file @path, or -1
 * ("btime " of /proc/stat, "RssAnon:" of /proc/self/status). */
static double
proc_value(const char *path, const char *key)
{
    FILE *f = fopen(path, "re");
    char line[256];
    size_t n = strlen(key);
    double v = -1;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, n) == 0) {
            v = strtod(line + n, NULL);
            break;
        }
    }
    if (f != NULL) {
        (void)fclose(f);
    }
    return v;
}

/* A "Name:   N kB" line of /proc/self/status, in bytes, or -1. */
static double
status_kb(const char *name)
{
    double kb = proc_value("/proc/self/status", name);

    return kb < 0 ? -1 : kb * 1024;
}

/*
 * What glibc's allocator holds (mallinfo2, which locks each arena in turn
 * and walks its free lists: a scrape's cost, not a hot path).  in_use is
 * the live heap in the arenas; mmap the blocks mapped on their own (at
 * least the mmap threshold; resident only where touched: the delta
 * shards' LMDB lists are 48 MiB of them, mostly never touched); free what
 * the arenas keep for later, of which the trimming thread gave whole
 * pages back to the kernel (they count here but not in RssAnon).  Another
 * allocator (ASan's) answers zeros or nothing; then the family is left
 * out.
 */
static void
write_malloc(struct sl__prom *p)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();

    if (mi.uordblks == 0) {
        return;
    }
    sl__prom_family(p,
                    "sluice_malloc_bytes",
                    "gauge",
                    "The allocator's memory by kind: in_use is live in the "
                    "arenas, mmap the blocks mapped on their own (resident "
                    "where touched), free what the arenas keep (trimmed "
                    "pages count here, not in RssAnon)");
    sl__prom_sample(p, "", (double)mi.uordblks, "kind", "in_use", NULL);
    sl__prom_sample(p, "", (double)mi.hblkhd, "kind", "mmap", NULL);
    sl__prom_sample(p, "", (double)mi.fordblks, "kind", "free", NULL);
#else
    (void)p;
#endif
}

static void
write_process(struct sl__prom *p)
{
    FILE *f = fopen("/proc/self/stat", "re");
    unsigned long utime = 0;
    unsigned long stime = 0;
    unsigned long long start = 0;
    unsigned long vsize = 0;
    long rss = 0;
    double tick = (double)sysconf(_SC_CLK_TCK);
    double page = (double)sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    char buf[1024];
    const char *s = NULL;
    int ok = 0;

    if (f != NULL && fgets(buf, sizeof(buf), f) != NULL) {
        s = strrchr(buf, ')'); /* the command may hold spaces */
        ok = s != NULL &&
             sscanf(s + 2,
                    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu "
                    "%*d %*d %*d %*d %*d %*d %llu %lu %ld",
                    &utime,
                    &stime,
                    &start,
                    &vsize,
                    &rss) == 5;
    }
    if (f != NULL) {
        (void)fclose(f);
    }
    if (ok) {
        sl__prom_family(p,
                        "process_cpu_seconds",
                        "counter",
                        "Total user and system CPU time spent in seconds.");
        sl__prom_sample(p, "_total", (double)(utime + stime) / tick, NULL);
        sl__prom_family(p,
                        "process_resident_memory_bytes",
                        "gauge",
                        "Resident memory size in bytes.");
        sl__prom_sample(p, "", (double)rss * page, NULL);
        sl__prom_family(p,
                        "process_virtual_memory_bytes",
                        "gauge",
                        "Virtual memory size in bytes.");
        sl__prom_sample(p, "", (double)vsize, NULL);
        sl__prom_family(p,
                        "process_start_time_seconds",
                        "gauge",
                        "Start time of the process since unix epoch in "
                        "seconds.");
        sl__prom_sample(p,
                        "",
                        proc_value("/proc/stat", "btime ") +
                            (double)start / tick,
                        NULL);
    }
    sl__prom_family(p,
                    "process_open_fds",
                    "gauge",
                    "Number of open file "
                    "descriptors.");
    sl__prom_sample(p, "", (double)open_fds(), NULL);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        sl__prom_family(p,
                        "process_max_fds",
                        "gauge",
                        "Maximum number of open file descriptors.");
        sl__prom_sample(p, "", (double)rl.rlim_cur, NULL);
    }
    sl__prom_family(p,
                    "sluice_resident_memory_bytes",
                    "gauge",
                    "Resident memory by kind: anon (the process's own), "
                    "file (mapped files: the LMDB and SQLite maps, in the "
                    "page cache), shmem");
    sl__prom_sample(p, "", status_kb("RssAnon:"), "kind", "anon", NULL);
    sl__prom_sample(p, "", status_kb("RssFile:"), "kind", "file", NULL);
    sl__prom_sample(p, "", status_kb("RssShmem:"), "kind", "shmem", NULL);
    write_malloc(p);
}

/* ------------------------------------------------------------------------
 * The jobmanager, the bulkbuilder, the indexes.
 * --------------------------------------------------------------------- */

/* Which family a worker counter belongs to: 0 items, 1 bytes, 2 seconds. */
static int
counter_unit(const char *name)
{
    size_t n = strlen(name);

    if (strncmp(name, "duration", 8) == 0) {
        return 2;
    }
    if ((n >= 5 && strcasecmp(name + n - 5, "bytes") == 0) ||
        (n >= 5 && strcmp(name + n - 5, ".size") == 0)) {
        return 1;
    }
    return 0;
}

static void
write_worker_counters(struct sl__prom *p, const json_t *workers)
{
    static const char *const fam[3][2] = {
        {"sluice_worker_items",
         "What the workers counted (the run data's worker counters), by "
         "worker and counter"},
        {"sluice_worker_bytes",
         "Bytes the workers counted (counters ending in bytes or .size)"},
        {"sluice_worker_seconds",
         "Seconds the workers counted (counters duration*)"}};
    int u = 0;

    for (u = 0; u < 3; u++) {
        size_t i = 0;
        const json_t *w = NULL;

        sl__prom_family(p, fam[u][0], "counter", fam[u][1]);
        json_array_foreach((json_t *)workers, i, w)
        {
            const char *name = json_string_value(json_object_get(w, "name"));
            const char *k = NULL;
            json_t *v = NULL;

            json_object_foreach(json_object_get(w, "counters"), k, v)
            {
                if (counter_unit(k) == u) {
                    sl__prom_sample(p,
                                    "_total",
                                    json_number_value(v),
                                    "worker",
                                    name,
                                    "counter",
                                    k,
                                    NULL);
                }
            }
        }
    }
}

/* A sample of the current family for each object of @list: its
 * @value_field, labelled @label with its @name_field. */
static void
write_list(struct sl__prom *p,
           const json_t *list,
           const char *label,
           const char *name_field,
           const char *value_field)
{
    size_t i = 0;
    const json_t *o = NULL;

    json_array_foreach((json_t *)list, i, o)
    {
        sl__prom_sample(p,
                        p->counter ? "_total" : "",
                        json_number_value(json_object_get(o, value_field)),
                        label,
                        json_string_value(json_object_get(o, name_field)),
                        NULL);
    }
}

/* One family of a number per worker: @field of each worker object. */
static void
write_per_worker(struct sl__prom *p,
                 const json_t *workers,
                 const char *family,
                 const char *type,
                 const char *help,
                 const char *field)
{
    sl__prom_family(p, family, type, help);
    write_list(p, workers, "worker", "name", field);
}

/* The task counters of each worker under label @label: run task counter
 * names and their label values, up to a NULL name. */
static void
write_task_counts(struct sl__prom *p,
                  const json_t *workers,
                  const char *label,
                  const char *const *pairs)
{
    size_t i = 0;
    const json_t *w = NULL;

    json_array_foreach((json_t *)workers, i, w)
    {
        const json_t *tasks = json_object_get(w, "tasks");
        const char *name = json_string_value(json_object_get(w, "name"));
        size_t k = 0;

        for (k = 0; pairs[k] != NULL; k += 2) {
            sl__prom_sample(p,
                            "_total",
                            json_number_value(json_object_get(tasks, pairs[k])),
                            "worker",
                            name,
                            label,
                            pairs[k + 1],
                            NULL);
        }
    }
}

static void
write_tasks(struct sl__prom *p, const json_t *workers)
{
    static const char *const finished[] = {"successful",
                                           "successful",
                                           "failedWithoutRetry",
                                           "failedWithoutRetry",
                                           "failedAfterRetry",
                                           "failedAfterRetry",
                                           "obsolete",
                                           "obsolete",
                                           "cancelled",
                                           "cancelled",
                                           NULL};
    static const char *const retried[] = {"retriedAfterError",
                                          "error",
                                          "retriedAfterTimeout",
                                          "timeout",
                                          "retriedAfterNoSpace",
                                          "noSpace",
                                          NULL};
    static const char *const created[] = {"created", "", NULL};

    write_per_worker(p,
                     workers,
                     "sluice_tasks_todo",
                     "gauge",
                     "Tasks waiting for a worker",
                     "todo");
    write_per_worker(p,
                     workers,
                     "sluice_tasks_in_progress",
                     "gauge",
                     "Tasks a worker holds now",
                     "inProgress");
    write_per_worker(p,
                     workers,
                     "sluice_tasks_taken",
                     "counter",
                     "Tasks handed out to workers",
                     "taken");
    sl__prom_family(p,
                    "sluice_tasks_queued",
                    "counter",
                    "Tasks created (queued for a worker)");
    {
        size_t i = 0;
        const json_t *w = NULL;

        json_array_foreach((json_t *)workers, i, w)
        {
            sl__prom_sample(p,
                            "_total",
                            json_number_value(json_object_get(
                                json_object_get(w, "tasks"), created[0])),
                            "worker",
                            json_string_value(json_object_get(w, "name")),
                            NULL);
        }
    }
    sl__prom_family(
        p, "sluice_tasks_finished", "counter", "Tasks that ended, by result");
    write_task_counts(p, workers, "result", finished);
    sl__prom_family(p,
                    "sluice_tasks_retried",
                    "counter",
                    "Tasks given back to be retried, by reason");
    write_task_counts(p, workers, "reason", retried);
}

static void
write_runs(struct sl__prom *p, const json_t *m)
{
    static const char *const active_states[] = {"PREPARING",
                                                "RUNNING",
                                                "FINISHING",
                                                "COMPLETING",
                                                "CLEANINGUP",
                                                "CANCELING"};
    static const char *const ended[] = {"SUCCEEDED", "FAILED", "CANCELED"};
    const json_t *runs = json_object_get(m, "runs");
    const json_t *wfs = json_object_get(m, "workflowRuns");
    size_t i = 0;

    sl__prom_family(p, "sluice_job_runs", "gauge", "Active job runs by state");
    for (i = 0; i < sizeof(active_states) / sizeof(active_states[0]); i++) {
        sl__prom_sample(p,
                        "",
                        json_number_value(json_object_get(
                            json_object_get(runs, "active"), active_states[i])),
                        "state",
                        active_states[i],
                        NULL);
    }
    sl__prom_family(
        p, "sluice_job_runs_ended", "counter", "Job runs ended, by state");
    for (i = 0; i < 3; i++) {
        sl__prom_sample(p,
                        "_total",
                        json_number_value(json_object_get(
                            json_object_get(runs, "ended"), ended[i])),
                        "state",
                        ended[i],
                        NULL);
    }
    sl__prom_family(p,
                    "sluice_workflow_runs_active",
                    "gauge",
                    "Workflow runs with open tasks");
    sl__prom_sample(
        p, "", json_number_value(json_object_get(wfs, "active")), NULL);
    sl__prom_family(
        p, "sluice_workflow_runs_started", "counter", "Workflow runs started");
    sl__prom_sample(
        p, "_total", json_number_value(json_object_get(wfs, "started")), NULL);
    sl__prom_family(p,
                    "sluice_workflow_runs_ended",
                    "counter",
                    "Workflow runs ended, by result");
    for (i = 0; i < 3; i++) {
        static const char *const res[] = {"successful", "failed", "canceled"};

        sl__prom_sample(p,
                        "_total",
                        json_number_value(json_object_get(wfs, res[i])),
                        "result",
                        res[i],
                        NULL);
    }
}

static void
write_bulkbuilder(struct sl__prom *p, struct sl_bb *bb)
{
    static const char *const fam[][4] = {
        {"sluice_bulkbuilder_open_records",
         "gauge",
         "Records pushed and not yet in a committed bulk",
         "openRecords"},
        {"sluice_bulkbuilder_open_bytes",
         "gauge",
         "Bytes of the open records",
         "openBytes"},
        {"sluice_bulkbuilder_pending_bulks",
         "gauge",
         "Bulks written and not yet handed to the job",
         "pendingBulks"},
        {"sluice_bulkbuilder_records_accepted",
         "counter",
         "Records accepted by the push API",
         "acceptedRecords"},
        {"sluice_bulkbuilder_bulks_committed",
         "counter",
         "Bulks committed to the jobs",
         "committedBulks"},
    };
    json_t *st = sl_bb_status(bb, NULL);
    const json_t *jobs = json_object_get(st, "jobs");
    size_t f = 0;

    for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        sl__prom_family(p, fam[f][0], fam[f][1], fam[f][2]);
        write_list(p, jobs, "job", "job", fam[f][3]);
    }
    json_decref(st);
}

static void
write_indexes(struct sl__prom *p, struct sl_index_set *set)
{
    json_t *list = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_index_list(set, &list, &err) != 0) {
        return;
    }
    sl__prom_family(p,
                    "sluice_index_documents",
                    "gauge",
                    "Documents in each index of the embedded search");
    write_list(p, list, "index", "name", "documentCount");
    sl__prom_family(p,
                    "sluice_index_size_bytes",
                    "gauge",
                    "Bytes each index takes on disk (its database files and "
                    "write-ahead logs)");
    write_list(p, list, "index", "name", "sizeBytes");
    json_decref(list);
}

/* One gauge family of the LMDB map of the jobmanager (@jm, its metrics'
 * "store") and of each delta shard: @field "mapUsed" or "mapSize". */
static void
write_maps(struct sl__prom *p,
           const json_t *jm,
           const struct sl_delta_shard_stats *st,
           unsigned n,
           int used)
{
    char shard[16];
    unsigned k = 0;

    if (used) {
        sl__prom_family(p,
                        "sluice_lmdb_map_used_bytes",
                        "gauge",
                        "Bytes of each LMDB map in use (pages up to the "
                        "last one written)");
    } else {
        sl__prom_family(p,
                        "sluice_lmdb_map_size_bytes",
                        "gauge",
                        "The size of each LMDB map (its limit)");
    }
    if (jm != NULL) {
        sl__prom_sample(p,
                        "",
                        json_number_value(
                            json_object_get(jm, used ? "mapUsed" : "mapSize")),
                        "env",
                        "jobmanager",
                        "shard",
                        "",
                        NULL);
    }
    for (k = 0; k < n; k++) {
        (void)snprintf(shard, sizeof(shard), "%u", k);
        sl__prom_sample(p,
                        "",
                        (double)(used ? st[k].map_used : st[k].map_size),
                        "env",
                        "delta",
                        "shard",
                        shard,
                        NULL);
    }
}

/* The delta service: entries and visited links per shard (exact),
 * entries per source (from the background count), the maps. */
static void
write_delta(struct sl__req *req, struct sl__prom *p, const json_t *jm_store)
{
    struct sl_delta *d = req->svc->delta;
    unsigned n = d != NULL ? sl_delta_shards(d) : 0;
    struct sl_delta_shard_stats *st = sl_calloc(n > 0 ? n : 1, sizeof(*st));
    json_t *per = NULL;
    struct sl_err err;
    char shard[16];
    unsigned k = 0;

    for (k = 0; k < n; k++) {
        sl_err_clear(&err);
        (void)sl_delta_shard_stats(d, k, &st[k], &err);
    }
    if (n > 0) {
        sl__prom_family(p,
                        "sluice_delta_entries",
                        "gauge",
                        "Delta entries (records known) in each shard");
        for (k = 0; k < n; k++) {
            (void)snprintf(shard, sizeof(shard), "%u", k);
            sl__prom_sample(p, "", (double)st[k].entries, "shard", shard, NULL);
        }
        sl__prom_family(p,
                        "sluice_delta_visited_links",
                        "gauge",
                        "Visited-link marks of web crawls in each shard");
        for (k = 0; k < n; k++) {
            (void)snprintf(shard, sizeof(shard), "%u", k);
            sl__prom_sample(p, "", (double)st[k].visited, "shard", shard, NULL);
        }
    }
    per = req->delta_counts != NULL ? sl__delta_counts_get(req->delta_counts)
                                    : NULL;
    if (per != NULL) {
        const char *src = NULL;
        json_t *v = NULL;

        sl__prom_family(p,
                        "sluice_delta_source_entries",
                        "gauge",
                        "Delta entries per source, counted in the "
                        "background every 5 s or less often");
        json_object_foreach(per, src, v)
        {
            sl__prom_sample(p, "", json_number_value(v), "source", src, NULL);
        }
        json_decref(per);
    }
    write_maps(p, jm_store, st, n, 1);
    write_maps(p, jm_store, st, n, 0);
    sl_free(st);
}

int
sl__api_metrics_get(struct sl__req *req)
{
    const char *accept = sl__req_header(req, "Accept");
    struct sl_buf b;
    struct sl__prom p;
    json_t *m = NULL;

    if (req->metrics == NULL) {
        return sl__reply_error(
            req, SL_ENOENT, "path", "the metrics are off (http.metrics is 0)");
    }
    sl_buf_init(&b, BODY_MAX);
    memset(&p, 0, sizeof(p));
    p.b = &b;
    p.om = accept != NULL &&
           strstr(accept, "application/openmetrics-text") != NULL;
    if (p.om) { /* OpenMetrics has a type for it */
        sl__prom_family(
            &p, "sluice_build", "info", "The version of this server");
        sl__prom_sample(&p, "_info", 1, "version", SL_VERSION, NULL);
    } else {
        sl__prom_family(
            &p, "sluice_build_info", "gauge", "The version of this server");
        sl__prom_sample(&p, "", 1, "version", SL_VERSION, NULL);
    }
    write_process(&p);
    sl__http_metrics_write(
        req->metrics, &p, sl_http_active_requests(req->server));
    if (req->svc->jm != NULL) {
        m = sl_jm_metrics(req->svc->jm);
        write_tasks(&p, json_object_get(m, "workers"));
        write_worker_counters(&p, json_object_get(m, "workers"));
        write_runs(&p, m);
    }
    write_delta(req, &p, json_object_get(m, "store"));
    json_decref(m);
    if (req->svc->bulkbuilder != NULL) {
        write_bulkbuilder(&p, req->svc->bulkbuilder);
    }
    if (req->svc->index != NULL) {
        write_indexes(&p, req->svc->index);
    }
    if (p.om) {
        (void)sl_buf_append(&b, "# EOF\n", 6);
    }
    if (b.failed || b.data == NULL) {
        sl_buf_free(&b);
        return sl__reply_error(
            req, SL_ETOOLARGE, NULL, "the metrics exceed %zu bytes", BODY_MAX);
    }
    return sl__reply_text(req,
                          200,
                          p.om ? "application/openmetrics-text; "
                                 "version=1.0.0; charset=utf-8"
                               : "text/plain; version=0.0.4; charset=utf-8",
                          b.data,
                          b.len);
}
