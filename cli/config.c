/*
 * Configuration: a table of {key, type, offset, limits} with generic
 * setters (nginx's ngx_command_t idea).  The defaults in the table are the
 * embedded configuration; config/sluice.json repeats them for users.
 * Unknown keys are errors, so a typo never silently falls back.
 */
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "text/text.h"

enum cfg_type { CFG_STRING, CFG_UINT };

struct cfg_key {
    const char *key; /* dotted path in the JSON file */
    enum cfg_type type;
    size_t offset;   /* offsetof(struct sl_cfg, field) */
    size_t size;     /* string capacity */
    const char *def; /* default, as text */
    uint64_t min;    /* CFG_UINT range */
    uint64_t max;
    const char *help;
};

#define STR(k, f, d, h)                                                        \
    {                                                                          \
        k, CFG_STRING, offsetof(struct sl_cfg, f),                             \
            sizeof(((struct sl_cfg *)0)->f), d, 0, 0, h                        \
    }
#define UINT(k, f, d, lo, hi, h)                                               \
    {                                                                          \
        k, CFG_UINT, offsetof(struct sl_cfg, f), 0, d, lo, hi, h               \
    }

static const struct cfg_key keys[] = {
    STR("listen",
        listen,
        "127.0.0.1:8080",
        "HOST:PORT to listen on; port 0 picks a free port"),
    STR("dataDir", data_dir, "./data", "directory for all state"),
    STR("objectstore.backend",
        obj_backend,
        "fs",
        "'fs' (dataDir/store) or 's3' (objectstore.s3.*)"),
    STR("objectstore.s3.endpoint",
        s3_endpoint,
        "",
        "http(s)://host[:port] of the S3 server"),
    STR("objectstore.s3.region", s3_region, "us-east-1", "signing region"),
    STR("objectstore.s3.bucket",
        s3_bucket,
        "",
        "stores are prefixes of this bucket; empty: each store is a bucket"),
    STR("objectstore.s3.prefix",
        s3_prefix,
        "",
        "before every key (with a bucket) or every bucket name"),
    STR("objectstore.s3.addressing",
        s3_addressing,
        "path",
        "'path' (endpoint/bucket/key) or 'virtualHost' "
        "(bucket.endpoint/key)"),
    STR("objectstore.s3.accessKeyId",
        s3_access_key,
        "",
        "empty: AWS_ACCESS_KEY_ID, then the shared credentials file"),
    STR("objectstore.s3.secretAccessKey",
        s3_secret_key,
        "",
        "with accessKeyId"),
    STR("objectstore.s3.caFile", s3_ca_file, "", "CA bundle for https"),
    UINT("objectstore.s3.partSizeMB",
         s3_part_mb,
         "8",
         5,
         5120,
         "bytes a writer buffers; bigger objects are multipart uploads"),
    UINT("objectstore.s3.maxRetries",
         s3_retries,
         "5",
         1,
         20,
         "retries of a request after a network error, 429 or 5xx"),
    STR("durability",
        durability,
        "process",
        "'process' (survive kill -9) or 'fsync' (survive power loss)"),
    STR("apiToken",
        api_token,
        "",
        "bearer token; required when listen is not a loopback address"),
    STR("log.level", log_level, "info", "debug, info, warn or error"),
    UINT("http.threads",
         http_threads,
         "4",
         1,
         256,
         "no effect (one thread per connection)"),
    UINT("http.maxConnections",
         max_connections,
         "256",
         1,
         65536,
         "concurrent connections"),
    UINT("http.maxConnectionsPerIp",
         max_conn_per_ip,
         "64",
         1,
         65536,
         "concurrent connections from one client address"),
    UINT("http.maxBodyBytes",
         max_body_bytes,
         "16777216",
         1024,
         UINT64_C(1) << 32,
         "largest JSON request body (413 beyond)"),
    UINT("http.maxHeaderBytes",
         max_header_bytes,
         "32768",
         4096,
         UINT64_C(1) << 24,
         "memory per connection for the request line and headers"),
    UINT("http.requestTimeoutSeconds",
         request_timeout,
         "10",
         1,
         86400,
         "seconds without a byte in either direction before a connection "
         "is closed"),
    UINT("http.metrics",
         http_metrics,
         "1",
         0,
         1,
         "1: GET /metrics and the counting of requests for it; 0: neither "
         "(/metrics answers 404)"),
    UINT("http.shutdownGraceSeconds",
         shutdown_grace,
         "30",
         0,
         3600,
         "how long SIGTERM waits for in-flight requests"),
    UINT("store.maxObjectBytes",
         max_object_bytes,
         "68719476736",
         0,
         UINT64_MAX,
         "largest object accepted by PUT (413 beyond)"),
    STR("jobmanager.configDir",
        jm_config_dir,
        "config",
        "predefined buckets.json, jobs.json and workers.json"),
    STR("jobmanager.workflowsDir",
        jm_workflows_dir,
        "workflows",
        "predefined workflows (*.json)"),
    UINT("jobmanager.leaseSeconds",
         lease_seconds,
         "120",
         1,
         86400,
         "task time-to-live without a keep-alive"),
    UINT("jobmanager.maxRetries",
         max_retries,
         "10",
         1,
         1000,
         "retries of a task after recoverable errors or timeouts"),
    UINT("jobmanager.maxInProgress",
         max_in_progress,
         "0",
         0,
         1000000,
         "tasks in progress at once, all workers (0 = no limit)"),
    UINT("jobmanager.maxQueuedDownstream",
         max_queued_downstream,
         "64",
         0,
         1000000,
         "tasks to do after an action before its tasks wait (0 = no limit)"),
    UINT("jobmanager.maxErrors",
         max_errors,
         "100",
         1,
         100000,
         "task errors kept in a run's data"),
    UINT("jobmanager.noSpaceDelayMs",
         nospace_first_ms,
         "1000",
         10,
         3600000,
         "first pause of task hand-outs (and bulkbuilder commits) after a "
         "full disk"),
    UINT("jobmanager.noSpaceMaxDelayMs",
         nospace_max_ms,
         "60000",
         10,
         3600000,
         "longest such pause; pauses double while the disk stays full"),
    UINT("jobmanager.history.maxEntriesPerRun",
         hist_max_per_run,
         "1000000",
         0,
         UINT32_MAX,
         "document history entries kept per job run, the oldest dropped "
         "first (0 = no history: documents are counted by state only)"),
    UINT("jobmanager.history.keepRuns",
         hist_keep_runs,
         "20",
         1,
         1000000,
         "runs of each job whose document history is kept"),
    UINT("jobmanager.history.maxAgeDays",
         hist_max_days,
         "30",
         1,
         36500,
         "days a document history entry is kept"),
    UINT("workers.threads",
         worker_threads,
         "2",
         0,
         256,
         "threads per built-in worker type (0 = none in-process; default: "
         "the cores this process may use, 2 to 16)"),
    STR("workers.external",
        workers_external,
        "",
        "comma-separated worker types left to `sluice worker` processes"),
    STR("workers.nice",
        workers_nice,
        "webCrawler=5",
        "niceness of worker types' threads, \"type=n,type=n\" (n 0-19)"),
    UINT("deltaShards",
         delta_shards,
         "16",
         1,
         1024,
         "delta service shards (fixed when the delta store is created)"),
    UINT("deltaMapSize",
         delta_map_size,
         "1073741824",
         1048576,
         UINT64_C(1) << 40,
         "LMDB map size per delta shard in bytes (grown by a restart)"),
    UINT("bulkbuilder.bulkLimitSize",
         bb_limit_size,
         "10485760",
         1024,
         UINT64_C(1) << 32,
         "bytes after which the bulkbuilder commits a job's open bulk"),
    UINT("bulkbuilder.bulkLimitTimeMs",
         bb_limit_ms,
         "1000",
         10,
         3600000,
         "age in ms after which the bulkbuilder commits an open bulk"),
    UINT("bulkbuilder.maxActiveWorkflowRuns",
         bb_max_active,
         "64",
         1,
         1000000,
         "bulks a job's run may hold in active workflow runs; the others "
         "wait in the journal on disk"),
    UINT("index.shards",
         index_shards,
         "2",
         1,
         64,
         "database files per embedded index, written in parallel (fixed "
         "when an index is created; default: a quarter of the cores, 2 to "
         "8)"),
    UINT("index.idleMergeMs",
         index_idle_merge_ms,
         "2000",
         0,
         3600000,
         "ms without a write after which a shard's FTS segments are merged "
         "(0 = never)"),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int
set_text(struct sl_cfg *cfg,
         const struct cfg_key *k,
         const char *value,
         struct sl_err *err)
{
    char *base = (char *)cfg + k->offset;
    uint64_t v = 0;

    if (k->type == CFG_STRING) {
        if (strlen(value) >= k->size) {
            return sl_err_set(err,
                              SL_ECONFIG,
                              k->key,
                              "%s is longer than %zu bytes",
                              k->key,
                              k->size - 1);
        }
        memcpy(base, value, strlen(value) + 1);
        return 0;
    }
    if (sl_parse_u64(value, &v) != 0 || v < k->min || v > k->max) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          k->key,
                          "%s must be a whole number from %llu to %llu",
                          k->key,
                          (unsigned long long)k->min,
                          (unsigned long long)k->max);
    }
    memcpy(base, &v, sizeof(v));
    return 0;
}

/*
 * The converters a server has without configuration: the Debian programs
 * that read the formats the text library does not read itself
 * (docs/formats.md), and Sluice's own sluice-pdf (poppler, a persistent
 * converter: started once for many PDFs).  Each Debian program's entry
 * names its package for the warning when the program is missing
 * (sl_text_converters_check).  All read a spooled copy ({file}): none of
 * them reads stdin reliably.
 */
static const char default_converters[] =
    "{\"application/pdf\": {"
    "\"command\": [\"sluice-pdf\"], \"persistent\": true,"
    " \"maxDocuments\": 1000, \"timeoutSeconds\": 60, \"maxMemoryMB\": 1024},"
    " \"application/msword\": {"
    "\"command\": [\"catdoc\", \"-d\", \"utf-8\", \"-w\", \"{file}\"],"
    /* The legacy formats' metadata: exiftool reads the OLE2
     * SummaryInformation (and RTF's \info group) and prints the tags
     * asked for as "Tag: value" lines (-S); an OLE2 date is a FILETIME,
     * UTC, which exiftool prints unconverted, hence the Z. */
    " \"metaCommand\": [\"exiftool\", \"-S\", \"-d\", \"%Y-%m-%dT%H:%M:%SZ\","
    " \"-Title\", \"-Author\", \"-CreateDate\", \"-ModifyDate\", \"-Pages\","
    " \"{file}\"],"
    " \"timeoutSeconds\": 30, \"maxMemoryMB\": 512,"
    " \"package\": \"catdoc libimage-exiftool-perl\"},"
    " \"application/vnd.ms-excel\": {"
    "\"command\": [\"xls2csv\", \"-d\", \"utf-8\", \"{file}\"],"
    " \"metaCommand\": [\"exiftool\", \"-S\", \"-d\", \"%Y-%m-%dT%H:%M:%SZ\","
    " \"-Title\", \"-Author\", \"-CreateDate\", \"-ModifyDate\", \"{file}\"],"
    " \"timeoutSeconds\": 30, \"maxMemoryMB\": 512,"
    " \"package\": \"catdoc libimage-exiftool-perl\"},"
    /* Not catppt: it reads only the text PowerPoint copies into the
     * SlideListWithText, none of the text inside the slides' drawings,
     * which is all LibreOffice writes.  Recoll's ppt-dump.py (LibreOffice's
     * mso-dumper) reads every text atom; its slide count is "Slides". */
    " \"application/vnd.ms-powerpoint\": {"
    "\"command\": [\"/usr/share/recoll/filters/ppt-dump.py\","
    " \"--no-struct-output\", \"--dump-text\", \"{file}\"],"
    " \"metaCommand\": [\"exiftool\", \"-S\", \"-d\", \"%Y-%m-%dT%H:%M:%SZ\","
    " \"-Title\", \"-Author\", \"-CreateDate\", \"-ModifyDate\", \"-Slides\","
    " \"{file}\"],"
    " \"timeoutSeconds\": 30, \"maxMemoryMB\": 512,"
    " \"package\": \"recollcmd libimage-exiftool-perl\"},"
    /* RTF's \creatim and \revtim are the writer's local time, zone
     * unknown: no Z */
    " \"text/rtf\": {"
    "\"command\": [\"catdoc\", \"-d\", \"utf-8\", \"-w\", \"{file}\"],"
    " \"metaCommand\": [\"exiftool\", \"-S\", \"-d\", \"%Y-%m-%dT%H:%M:%S\","
    " \"-Title\", \"-Author\", \"-CreateDate\", \"-ModifyDate\", \"-Pages\","
    " \"{file}\"],"
    " \"timeoutSeconds\": 30, \"maxMemoryMB\": 512,"
    " \"package\": \"catdoc libimage-exiftool-perl\"},"
    " \"application/rtf\": {"
    "\"command\": [\"catdoc\", \"-d\", \"utf-8\", \"-w\", \"{file}\"],"
    " \"metaCommand\": [\"exiftool\", \"-S\", \"-d\", \"%Y-%m-%dT%H:%M:%S\","
    " \"-Title\", \"-Author\", \"-CreateDate\", \"-ModifyDate\", \"-Pages\","
    " \"{file}\"],"
    " \"timeoutSeconds\": 30, \"maxMemoryMB\": 512,"
    " \"package\": \"catdoc libimage-exiftool-perl\"}}";

void
sl_cfg_defaults(struct sl_cfg *cfg)
{
    size_t i = 0;

    memset(cfg, 0, sizeof(*cfg));
    memcpy(cfg->worker_limits, "{}", 3);
    memcpy(cfg->throttle_bins, "[]", 3);
    _Static_assert(sizeof(default_converters) <=
                       sizeof(((struct sl_cfg *)0)->converters),
                   "the default converters fit their buffer");
    memcpy(cfg->converters, default_converters, sizeof(default_converters));
    for (i = 0; i < NKEYS; i++) {
        if (set_text(cfg, &keys[i], keys[i].def, NULL) != 0) {
            sl_panic("config: bad default for %s", keys[i].key);
        }
    }
    cfg->worker_threads = sl_cfg_cores_clamp(1, 2, 16);
    cfg->index_shards = sl_cfg_cores_clamp(4, 2, 8);
}

uint64_t
sl_cfg_cores_clamp(unsigned per, uint64_t lo, uint64_t hi)
{
    cpu_set_t set;
    long n = 0;

    /* the cores this process may run on (a container's cpuset included) */
    CPU_ZERO(&set);
    n = sched_getaffinity(0, sizeof(set), &set) == 0
            ? CPU_COUNT(&set)
            : sysconf(_SC_NPROCESSORS_ONLN);
    n = n > 0 ? n / (long)per : 0;
    return (uint64_t)n < lo ? lo : (uint64_t)n > hi ? hi : (uint64_t)n;
}

/*
 * Free memory at the top of a malloc heap is given back to the kernel
 * only above this size.  glibc's default adapts between 128 KiB and 64 MiB
 * as big blocks come and go; with the indexWriter's SQLite allocations it
 * kept trimming the heaps and growing them again (sysmalloc: the top
 * chunk, mprotect, fresh pages), 3-5% of a web crawl's CPU.  A fixed
 * threshold (which also fixes the mmap threshold at 128 KiB) did not
 * raise the peak RSS on that bench (docs/performance.md).
 */
#define TRIM_THRESHOLD (8 << 20)

/*
 * glibc gives threads up to 8 malloc arenas per core, and each keeps
 * freed memory up to the trim threshold: with 16 threads per worker type
 * on 16 cores about every worker thread had an arena of its own, and the
 * peak RSS grew with the threads.  Two arenas per core, at least 8 and
 * at most 32, bound that; the floor keeps small machines at 4 per core,
 * where fewer cost time (docs/performance.md "Malloc arenas", 2 cores,
 * 16 threads a type: 8 arenas 1.045x the time of glibc's 16, 4 arenas
 * 1.10x).
 */
#define ARENAS_PER_CORE 2
#define ARENAS_MIN      8
#define ARENAS_MAX      32

/*
 * Free memory inside the arenas, below their tops, goes back to the kernel
 * only at malloc_trim: over a long import the arenas' free chunks grew
 * with the run (a million files: 112 MB of arena memory of which 18 MB in
 * use, RssAnon 114 MiB against 55 at 100,000 files; one malloc_trim gave
 * 52).  A thread calls it every TRIM_EVERY_S seconds (docs/operations.md
 * "Memory allocator").  It does not shrink the tops of the thread arenas
 * (glibc's mtrim trims the main arena's only): each keeps up to
 * TRIM_THRESHOLD, a third of a long run's anonymous memory
 * (docs/performance.md, "A million files: what the anonymous memory is").
 */
#define TRIM_EVERY_S 10

static void *
trim_main(void *arg)
{
    const struct timespec every = {TRIM_EVERY_S, 0};

    (void)arg;
    for (;;) {
        (void)nanosleep(&every, NULL);
        (void)malloc_trim(0);
    }
    return NULL;
}

/* The trimming thread, detached: it runs until the process exits. */
static void
start_trim(void)
{
    pthread_attr_t attr;
    pthread_t th;
    int e = 0;

    if (pthread_attr_init(&attr) != 0) {
        return;
    }
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    e = pthread_create(&th, &attr, trim_main, NULL);
    if (e == 0) {
        (void)pthread_setname_np(th, "sl-trim");
    } else {
        SL_WARN("no malloc trimming thread: %s", sl_errno_str(e));
    }
    (void)pthread_attr_destroy(&attr);
}

#if defined(__SANITIZE_ADDRESS__)
#define MALLOPT_WARN 0 /* ASan's allocator replaces glibc's: mallopt fails */
#else
#define MALLOPT_WARN 1
#endif

void
sl_cli_tune_malloc(void)
{
    const char *t = getenv("GLIBC_TUNABLES");

    /* malloc settings in GLIBC_TUNABLES (or MALLOC_ARENA_MAX) win */
    if (t != NULL && strstr(t, "glibc.malloc.") != NULL) {
        return;
    }
    if (mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1 && MALLOPT_WARN) {
        SL_WARN("mallopt(M_TRIM_THRESHOLD) refused");
    }
    if (getenv("MALLOC_ARENA_MAX") == NULL &&
        mallopt(M_ARENA_MAX,
                (int)(ARENAS_PER_CORE *
                      sl_cfg_cores_clamp(1,
                                         ARENAS_MIN / ARENAS_PER_CORE,
                                         ARENAS_MAX / ARENAS_PER_CORE))) != 1 &&
        MALLOPT_WARN) {
        SL_WARN("mallopt(M_ARENA_MAX) refused");
    }
    start_trim();
}

/*
 * jobmanager.workerLimits: {"<worker>": <max tasks in progress>}.  Kept as
 * compact JSON text; the server applies it after registering workers.
 */
static int
set_worker_limits(struct sl_cfg *cfg,
                  json_t *v,
                  const char *path,
                  struct sl_err *err)
{
    const char *name = NULL;
    json_t *n = NULL;
    char *text = NULL;

    if (!json_is_object(v)) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "jobmanager.workerLimits",
                          "%s: jobmanager.workerLimits must be an object of "
                          "worker name -> number",
                          path);
    }
    json_object_foreach(v, name, n)
    {
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            json_integer_value(n) > 1000000) {
            return sl_err_set(err,
                              SL_ECONFIG,
                              "jobmanager.workerLimits",
                              "%s: jobmanager.workerLimits.%s must be a whole "
                              "number from 0 to 1000000",
                              path,
                              name);
        }
    }
    text = json_dumps(v, JSON_COMPACT);
    if (text == NULL || strlen(text) >= sizeof(cfg->worker_limits)) {
        sl_free(text);
        return sl_err_set(err,
                          SL_ECONFIG,
                          "jobmanager.workerLimits",
                          "%s: jobmanager.workerLimits is too long",
                          path);
    }
    memcpy(cfg->worker_limits, text, strlen(text) + 1);
    sl_free(text);
    return 0;
}

/*
 * textExtractor.converters: {"<mime type>": {"command": [argv...],
 * "timeoutSeconds": n, "maxMemoryMB": n, "package": "name"} or null}
 * (docs/workers.md), merged over what cfg has (the defaults): an entry
 * replaces the type's, null removes it.  Kept as compact JSON text for
 * the textExtractor.
 */
static int
set_converters(struct sl_cfg *cfg,
               json_t *v,
               const char *path,
               struct sl_err *err)
{
    const char *mime = NULL;
    json_t *c = NULL;
    json_t *all = NULL;
    char *text = NULL;

    if (!json_is_object(v)) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "textExtractor.converters",
                          "%s: textExtractor.converters must be an object of "
                          "MIME type -> converter",
                          path);
    }
    json_object_foreach(v, mime, c)
    {
        struct sl_err why;

        sl_err_clear(&why);
        if (!json_is_null(c) && sl_text_converter_valid(c, &why) != 0) {
            return sl_err_set(err,
                              SL_ECONFIG,
                              "textExtractor.converters",
                              "%s: textExtractor.converters.%s: %s (or null "
                              "to remove the type's converter)",
                              path,
                              mime,
                              why.message);
        }
    }
    all = json_loads(cfg->converters, 0, NULL);
    if (all == NULL) {
        all = json_object();
    }
    json_object_foreach(v, mime, c)
    {
        if (json_is_null(c)) {
            (void)json_object_del(all, mime);
        } else {
            (void)json_object_set(all, mime, c);
        }
    }
    text = json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(all);
    if (text == NULL || strlen(text) >= sizeof(cfg->converters)) {
        sl_free(text);
        return sl_err_set(err,
                          SL_ECONFIG,
                          "textExtractor.converters",
                          "%s: textExtractor.converters is too long",
                          path);
    }
    memcpy(cfg->converters, text, strlen(text) + 1);
    sl_free(text);
    return 0;
}

/* throttle.bins: the server's throttle rules (docs/configuration.md
 * "Throttle bins"), kept as compact JSON text. */
static int
set_throttle_bins(struct sl_cfg *cfg,
                  json_t *v,
                  const char *path,
                  struct sl_err *err)
{
    struct sl_err why;
    char *text = NULL;

    sl_err_clear(&why);
    if (sl_throttle_rules_check(v, "throttle.bins", &why) != 0) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          why.field,
                          "%s: %s: %s",
                          path,
                          why.field,
                          why.message);
    }
    text = json_dumps(v, JSON_COMPACT);
    if (text == NULL || strlen(text) >= sizeof(cfg->throttle_bins)) {
        sl_free(text);
        return sl_err_set(err,
                          SL_ECONFIG,
                          "throttle.bins",
                          "%s: throttle.bins is too long",
                          path);
    }
    memcpy(cfg->throttle_bins, text, strlen(text) + 1);
    sl_free(text);
    return 0;
}

void
sl_cfg_throttle_apply(const struct sl_cfg *cfg)
{
    json_t *rules = json_loads(cfg->throttle_bins, 0, NULL);
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_throttle_process_rules(rules, &err) != 0) { /* checked at load */
        SL_WARN("config: %s: %s", err.field, err.message);
    }
    json_decref(rules);
}

/* Is @name the dotted prefix of at least one key ("http" for "http.x")? */
static int
is_section(const char *name)
{
    size_t n = strlen(name);
    size_t i = 0;

    if (strcmp(name, "textExtractor") == 0 || strcmp(name, "throttle") == 0) {
        return 1;
    }
    for (i = 0; i < NKEYS; i++) {
        if (strncmp(keys[i].key, name, n) == 0 && keys[i].key[n] == '.') {
            return 1;
        }
    }
    return 0;
}

/*
 * Walk one JSON object level; @prefix is the dotted path so far.  Objects
 * recurse, leaves must match a key of the table with the right JSON type.
 */
static int
apply_object(struct sl_cfg *cfg,
             json_t *obj,
             const char *prefix,
             const char *path,
             struct sl_err *err)
{
    const char *name = NULL;
    json_t *v = NULL;
    char full[256];
    char num[32];
    struct sl_err inner;
    size_t i = 0;
    int rc = 0;

    sl_err_clear(&inner);
    json_object_foreach(obj, name, v)
    {
        const struct cfg_key *k = NULL;

        (void)snprintf(
            full, sizeof(full), "%s%s%s", prefix, prefix[0] ? "." : "", name);
        if (strcmp(full, "jobmanager.workerLimits") == 0) {
            rc = set_worker_limits(cfg, v, path, err);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (strcmp(full, "textExtractor.converters") == 0) {
            rc = set_converters(cfg, v, path, err);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (strcmp(full, "throttle.bins") == 0) {
            rc = set_throttle_bins(cfg, v, path, err);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (json_is_object(v)) {
            if (!is_section(full)) {
                return sl_err_set(err,
                                  SL_ECONFIG,
                                  full,
                                  "%s: unknown configuration section '%s'",
                                  path,
                                  full);
            }
            rc = apply_object(cfg, v, full, path, err);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        for (i = 0; i < NKEYS; i++) {
            if (strcmp(keys[i].key, full) == 0) {
                k = &keys[i];
            }
        }
        if (k == NULL) {
            return sl_err_set(err,
                              SL_ECONFIG,
                              full,
                              "%s: unknown configuration key '%s'",
                              path,
                              full);
        }
        if (k->type == CFG_STRING && !json_is_string(v)) {
            return sl_err_set(
                err, SL_ECONFIG, full, "%s: '%s' must be a string", path, full);
        }
        if (k->type == CFG_UINT &&
            (!json_is_integer(v) || json_integer_value(v) < 0)) {
            return sl_err_set(err,
                              SL_ECONFIG,
                              full,
                              "%s: '%s' must be a non-negative integer",
                              path,
                              full);
        }
        if (k->type == CFG_UINT) {
            (void)snprintf(
                num, sizeof(num), "%lld", (long long)json_integer_value(v));
        }
        rc = set_text(
            cfg, k, k->type == CFG_UINT ? num : json_string_value(v), &inner);
        if (rc != 0) {
            return sl_err_set(err, rc, full, "%s: %s", path, inner.message);
        }
    }
    return 0;
}

int
sl_cfg_load_file(struct sl_cfg *cfg, const char *path, struct sl_err *err)
{
    json_error_t jerr;
    json_t *root = NULL;
    int rc = 0;

    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        if (jerr.position == 0 && strstr(jerr.text, "unable to open")) {
            return sl_err_set(err, SL_ENOENT, path, "%s: %s", path, jerr.text);
        }
        return sl_err_set(err,
                          SL_EBADJSON,
                          path,
                          "%s: line %d, column %d: %s",
                          path,
                          jerr.line,
                          jerr.column,
                          jerr.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return sl_err_set(err,
                          SL_ECONFIG,
                          path,
                          "%s: the configuration must be a JSON object",
                          path);
    }
    rc = apply_object(cfg, root, "", path, err);
    json_decref(root);
    return rc;
}

int
sl_cfg_validate(const struct sl_cfg *cfg, struct sl_err *err)
{
    enum sl_log_level lvl = SL_LOG_INFO;

    if (strcmp(cfg->durability, "process") != 0 &&
        strcmp(cfg->durability, "fsync") != 0) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "durability",
                          "durability must be 'process' or 'fsync', not '%s'",
                          cfg->durability);
    }
    if (sl_log_level_parse(cfg->log_level, &lvl) != 0) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "log.level",
                          "log.level must be debug, info, warn or error");
    }
    if (cfg->data_dir[0] == '\0') {
        return sl_err_set(err, SL_ECONFIG, "dataDir", "dataDir is empty");
    }
    if (strcmp(cfg->obj_backend, "fs") != 0 &&
        strcmp(cfg->obj_backend, "s3") != 0) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.backend",
                          "objectstore.backend must be 'fs' or 's3', not '%s'",
                          cfg->obj_backend);
    }
    if (strcmp(cfg->obj_backend, "s3") == 0 && cfg->s3_endpoint[0] == '\0') {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.s3.endpoint",
                          "objectstore.backend 's3' needs "
                          "objectstore.s3.endpoint");
    }
    if (strcmp(cfg->s3_addressing, "path") != 0 &&
        strcmp(cfg->s3_addressing, "virtualHost") != 0) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.s3.addressing",
                          "objectstore.s3.addressing must be 'path' or "
                          "'virtualHost'");
    }
    if (cfg->nospace_max_ms < cfg->nospace_first_ms) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "jobmanager.noSpaceMaxDelayMs",
                          "jobmanager.noSpaceMaxDelayMs (%llu) is below "
                          "jobmanager.noSpaceDelayMs (%llu)",
                          (unsigned long long)cfg->nospace_max_ms,
                          (unsigned long long)cfg->nospace_first_ms);
    }
    return 0;
}

/* One key of `serve --help`: name, type, default, meaning. */
#define KEY_LINE "  %-34s %-7s default %-16s %s\n"

void
sl_cfg_print_keys(FILE *out)
{
    static struct sl_cfg d; /* large (converters): not on the stack */
    size_t i = 0;

    fprintf(out,
            KEY_LINE,
            "jobmanager.workerLimits",
            "object",
            "{}",
            "max tasks in progress per worker, {\"name\": n}");
    fprintf(out,
            KEY_LINE,
            "textExtractor.converters",
            "object",
            "pdf,doc,xls,ppt,rtf",
            "external converters per MIME type, merged over the "
            "defaults (docs/formats.md)");
    fprintf(out,
            KEY_LINE,
            "throttle.bins",
            "array",
            "[]",
            "throttle rules {bin, maxPerSecond, maxConnections} for the "
            "process's fetches (docs/configuration.md)");
    sl_cfg_defaults(&d);
    for (i = 0; i < NKEYS; i++) {
        char v[32];

        /* integers as this machine's defaults have them (some follow the
         * number of cores) */
        if (keys[i].type == CFG_UINT) {
            (void)snprintf(
                v,
                sizeof(v),
                "%llu",
                (unsigned long long)*(
                    const uint64_t *)(const void *)((const char *)&d +
                                                    keys[i].offset));
        }
        fprintf(out,
                KEY_LINE,
                keys[i].key,
                keys[i].type == CFG_UINT ? "integer" : "string",
                keys[i].type == CFG_UINT ? v
                : keys[i].def[0]         ? keys[i].def
                                         : "\"\"",
                keys[i].help);
    }
}
