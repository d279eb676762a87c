/*
 * Test workers: small, deterministic workers that exercise the runtime
 * and the jobmanager through the task context only, exactly like real
 * workers.  They are linked into the tests and into sluice-test, never
 * into sluice.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/workers/test_workers.h"

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

static void
sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

    (void)nanosleep(&ts, NULL);
}

/*
 * Read every record of every bulk of input @in and write it to output
 * @out (may be NULL) when that slot is connected.  *n counts the records.
 * Returns an SL_WORKER_* result.
 */
static int
copy_records(struct sl_task_ctx *ctx,
             const char *in,
             const char *out,
             uint64_t *n)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    struct sl_err err;
    size_t nin = sl_task_input_count(ctx, in);
    size_t i = 0;
    int connected = out != NULL;
    int rc = 0;

    *n = 0;
    sl_err_clear(&err);
    for (i = 0; i < nin; i++) {
        rc = sl_task_input_open(ctx, in, i, &r);
        if (rc != 0) {
            return SL_WORKER_RECOVERABLE;
        }
        for (;;) {
            rc = sl_bulk_reader_next(r, &rec, &err);
            if (rc != 1) {
                break;
            }
            if (connected && w == NULL) {
                connected = sl_task_output_writer(ctx, out, &w) == 0;
            }
            rc = w != NULL ? sl_bulk_writer_add(w, rec) : 0;
            sl_record_free(rec);
            rec = NULL;
            if (rc != 0) {
                sl_task_set_message(ctx, "write: %s", sl_strerror(rc));
                return SL_WORKER_RECOVERABLE;
            }
            (*n)++;
            if (sl_task_is_canceled(ctx)) {
                return SL_WORKER_RECOVERABLE;
            }
        }
        if (rc < 0) {
            sl_task_set_message(ctx, "input %zu: %s", i, err.message);
            return SL_WORKER_FATAL;
        }
        sl_task_input_close(ctx, r);
    }
    return SL_WORKER_OK;
}

/* ------------------------------------------------------------------------
 * testSplit: one runOnce task that writes `count` records "r0".."r<n-1>"
 * into its multiple slot `records`, `per_bulk` per bulk.
 * --------------------------------------------------------------------- */

static int
split_perform(struct sl_task_ctx *ctx)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_record *rec = NULL;
    uint64_t count = 0;
    uint64_t per = 0;
    uint64_t i = 0;
    char id[32];
    int rc = 0;

    if (sl_task_param_u64(ctx, "count", 10, &count) != 0 ||
        sl_task_param_u64(ctx, "per_bulk", 100, &per) != 0 || per == 0) {
        sl_task_set_message(ctx, "count and per_bulk must be numbers > 0");
        return SL_WORKER_FATAL;
    }
    for (i = 0; i < count; i++) {
        if (i > 0 && i % per == 0) {
            rc = sl_task_output_next(ctx, "records");
            if (rc != 0) {
                return SL_WORKER_RECOVERABLE;
            }
        }
        rc = sl_task_output_writer(ctx, "records", &w);
        if (rc != 0) {
            return SL_WORKER_RECOVERABLE;
        }
        (void)snprintf(id, sizeof(id), "r%llu", (unsigned long long)i);
        rec = sl_record_new(id);
        (void)json_object_set_new(
            sl_record_meta(rec), "n", json_integer((json_int_t)i));
        rc = sl_bulk_writer_add(w, rec);
        sl_record_free(rec);
        if (rc != 0) {
            sl_task_set_message(ctx, "write: %s", sl_strerror(rc));
            return SL_WORKER_RECOVERABLE;
        }
    }
    sl_task_counter_add(ctx, "splitRecords", (double)count);
    return SL_WORKER_OK;
}

const struct sl_worker_type sl_worker_testSplit = {
    SL_WORKER_ABI_VERSION,
    "testSplit",
    "{\"name\": \"testSplit\", \"taskGenerator\": \"runOnceTrigger\","
    " \"parameters\": [{\"name\": \"count\", \"optional\": true},"
    "                  {\"name\": \"per_bulk\", \"optional\": true}],"
    " \"output\": [{\"name\": \"records\", \"type\": \"recordBulks\","
    "              \"modes\": [\"multiple\"]}]}",
    split_perform,
    NULL,
    NULL,
};

/* ------------------------------------------------------------------------
 * testCopy: copies every input record to `copied`.
 * --------------------------------------------------------------------- */

static int
copy_perform(struct sl_task_ctx *ctx)
{
    uint64_t n = 0;
    int res = copy_records(ctx, "input", "copied", &n);

    sl_task_counter_add(ctx, "copiedRecords", (double)n);
    return res;
}

const struct sl_worker_type sl_worker_testCopy = {
    SL_WORKER_ABI_VERSION,
    "testCopy",
    "{\"name\": \"testCopy\","
    " \"input\": [{\"name\": \"input\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"copied\", \"type\": \"recordBulks\","
    "              \"modes\": [\"optional\"]}]}",
    copy_perform,
    NULL,
    NULL,
};

/* ------------------------------------------------------------------------
 * testFail: fails as parameter `fail` says, then copies input to output:
 * "fatal", "recoverable:N" (the first N attempts of each task, counted by
 * properties.retries), "postpone:N" (the first N takes of each task; a
 * postpone keeps the task id, so this process counts them).
 * --------------------------------------------------------------------- */

#define POSTPONE_SLOTS 256

static pthread_mutex_t postpone_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char id[40];
    unsigned count;
} postpones[POSTPONE_SLOTS];
static size_t postpone_next;

/* How often task @id was taken by this process, this time included. */
static unsigned
postpone_count(const char *id)
{
    unsigned n = 0;
    size_t i = 0;

    (void)pthread_mutex_lock(&postpone_mu);
    for (i = 0; i < POSTPONE_SLOTS; i++) {
        if (strcmp(postpones[i].id, id) == 0) {
            n = ++postpones[i].count;
            break;
        }
    }
    if (i == POSTPONE_SLOTS) {
        i = postpone_next++ % POSTPONE_SLOTS;
        (void)snprintf(postpones[i].id, sizeof(postpones[i].id), "%s", id);
        n = postpones[i].count = 1;
    }
    (void)pthread_mutex_unlock(&postpone_mu);
    return n;
}

static int
fail_perform(struct sl_task_ctx *ctx)
{
    const char *fail = sl_task_param_str(ctx, "fail");
    const json_t *task = sl_task_json(ctx);
    json_int_t retries = json_integer_value(
        json_object_get(json_object_get(task, "properties"), "retries"));
    const char *id = json_string_value(json_object_get(task, "taskId"));
    uint64_t limit = 0;
    uint64_t n = 0;

    if (fail == NULL) {
        fail = "";
    }
    if (strcmp(fail, "fatal") == 0) {
        sl_task_set_message(ctx, "testFail: fatal error as asked");
        return SL_WORKER_FATAL;
    }
    if (strncmp(fail, "recoverable:", 12) == 0 &&
        sl_parse_u64(fail + 12, &limit) == 0 && (uint64_t)retries < limit) {
        sl_task_set_message(ctx,
                            "testFail: recoverable error %lld of %llu",
                            (long long)retries + 1,
                            (unsigned long long)limit);
        return SL_WORKER_RECOVERABLE;
    }
    if (strncmp(fail, "postpone:", 9) == 0 &&
        sl_parse_u64(fail + 9, &limit) == 0 && postpone_count(id) <= limit) {
        sl_task_counter_add(ctx, "postponed", 1);
        return sl_task_retry_later(ctx, NULL);
    }
    {
        int res = copy_records(ctx, "input", "output", &n);

        sl_task_counter_add(ctx, "passedRecords", (double)n);
        return res;
    }
}

const struct sl_worker_type sl_worker_testFail = {
    SL_WORKER_ABI_VERSION,
    "testFail",
    "{\"name\": \"testFail\","
    " \"parameters\": [{\"name\": \"fail\", \"optional\": true}],"
    " \"input\": [{\"name\": \"input\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"output\", \"type\": \"recordBulks\","
    "              \"modes\": [\"optional\"]}]}",
    fail_perform,
    NULL,
    NULL,
};

/* ------------------------------------------------------------------------
 * testSlow: sleeps `sleep_ms` (default 1000) in small steps, stopping
 * early when the task is canceled, then copies input to output.
 * --------------------------------------------------------------------- */

static int
slow_perform(struct sl_task_ctx *ctx)
{
    uint64_t ms = 0;
    uint64_t slept = 0;
    uint64_t n = 0;
    int res = 0;

    if (sl_task_param_u64(ctx, "sleep_ms", 1000, &ms) != 0) {
        sl_task_set_message(ctx, "sleep_ms must be a number");
        return SL_WORKER_FATAL;
    }
    while (slept < ms) {
        if (sl_task_is_canceled(ctx)) {
            sl_task_set_message(ctx, "testSlow: canceled");
            return SL_WORKER_RECOVERABLE;
        }
        sleep_ms(10);
        slept += 10;
    }
    res = copy_records(ctx, "input", "output", &n);
    sl_task_counter_add(ctx, "slowRecords", (double)n);
    return res;
}

const struct sl_worker_type sl_worker_testSlow = {
    SL_WORKER_ABI_VERSION,
    "testSlow",
    "{\"name\": \"testSlow\","
    " \"parameters\": [{\"name\": \"sleep_ms\", \"optional\": true}],"
    " \"input\": [{\"name\": \"input\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"output\", \"type\": \"recordBulks\","
    "              \"modes\": [\"optional\"]}]}",
    slow_perform,
    NULL,
    NULL,
};

/* ------------------------------------------------------------------------
 * testCompletion: counts its input records; in the completion phase gets
 * `partitions` (default 1) tasks and counts them in "completionTasks".
 * --------------------------------------------------------------------- */

static unsigned
completion_partitions(const json_t *params)
{
    const json_t *v = json_object_get(params, "partitions");
    uint64_t n = 1;

    if (json_is_integer(v) && json_integer_value(v) > 0) {
        n = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v) &&
               sl_parse_u64(json_string_value(v), &n) != 0) {
        n = 1;
    }
    return n == 0 || n > 1024 ? 1 : (unsigned)n;
}

static int
completion_perform(struct sl_task_ctx *ctx)
{
    unsigned part = 0;
    unsigned parts = 0;
    uint64_t n = 0;
    int res = 0;
    char name[64];

    if (sl_task_completion(ctx, &part, &parts)) {
        sl_task_counter_add(ctx, "completionTasks", 1);
        (void)snprintf(name, sizeof(name), "completion.partition.%u", part);
        sl_task_counter_add(ctx, name, 1);
        return SL_WORKER_OK;
    }
    res = copy_records(ctx, "input", NULL, &n);
    sl_task_counter_add(ctx, "seenRecords", (double)n);
    return res;
}

const struct sl_worker_type sl_worker_testCompletion = {
    SL_WORKER_ABI_VERSION,
    "testCompletion",
    "{\"name\": \"testCompletion\", \"modes\": [\"requestsCompletion\"],"
    " \"parameters\": [{\"name\": \"partitions\", \"optional\": true}],"
    " \"input\": [{\"name\": \"input\", \"type\": \"recordBulks\"}]}",
    completion_perform,
    completion_partitions,
    NULL,
};

/* ------------------------------------------------------------------------
 * Registry.
 * --------------------------------------------------------------------- */

/* ------------------------------------------------------------------------
 * testNoop: does nothing (bench/tasks-workers.sh measures the engine and
 * the worker runtime with it).
 * --------------------------------------------------------------------- */

static int
noop_perform(struct sl_task_ctx *ctx)
{
    (void)ctx;
    return SL_WORKER_OK;
}

const struct sl_worker_type sl_worker_testNoop = {
    SL_WORKER_ABI_VERSION,
    "testNoop",
    "{\"name\": \"testNoop\","
    " \"input\": [{\"name\": \"input\", \"type\": \"recordBulks\"}]}",
    noop_perform,
    NULL,
    NULL,
};

static const struct sl_worker_type *const all[] = {
    &sl_worker_testNoop,
    &sl_worker_testSplit,
    &sl_worker_testCopy,
    &sl_worker_testFail,
    &sl_worker_testSlow,
    &sl_worker_testCompletion,
};

const struct sl_worker_type *const *
sl_test_workers(size_t *n)
{
    *n = sizeof(all) / sizeof(all[0]);
    return all;
}
