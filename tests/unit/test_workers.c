/*
 * Unit tests of the task context over the in-process backend with a real
 * filesystem object store (no jobmanager): the output commit and discard
 * rules, ids of "multiple" slots, input and runtime counters, parameters
 * and the result JSON; a full disk makes a failed task temporary
 * (errorCode NO_SPACE); a pool calls the types' start hooks before its
 * threads start.  One table-driven perform hook does what the task
 * parameters say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "workers/workers_int.h"
#include "wk_fixture.h"

struct fixture {
    char dir[512];
    struct sl_obj *store;
    struct sl__wk_backend *b;
};

/* Entries of directory @path ("." and ".." not counted), -1 if missing. */
static long
dir_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e = NULL;
    long n = 0;

    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            n++;
        }
    }
    (void)closedir(d);
    return n;
}

/*
 * Parameters: "write" records into "out" (or into "multi", starting a new
 * bulk every "per" records), "read" 1 reads every input, "open" 1 opens
 * the writer of "out" without writing, "result" is the return value,
 * "later" an event for sl_task_retry_later, "fds" 1 checks that the
 * closed bulks hold no file descriptor.
 */
static int
scripted_perform(struct sl_task_ctx *ctx)
{
    const char *slot = sl_task_param_str(ctx, "slot");
    struct sl_bulk_writer *w = NULL;
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    uint64_t write = 0;
    uint64_t per = 0;
    uint64_t result = 0;
    uint64_t flag = 0;
    uint64_t i = 0;
    char id[32];

    assert_int_equal(sl_task_param_u64(ctx, "write", 0, &write), 0);
    assert_int_equal(sl_task_param_u64(ctx, "per", 0, &per), 0);
    assert_int_equal(sl_task_param_u64(ctx, "result", 0, &result), 0);
    long fds = 0;

    if (slot == NULL) {
        slot = "out";
    }
    assert_int_equal(sl_task_param_u64(ctx, "fds", 0, &flag), 0);
    if (flag) {
        fds = dir_entries("/proc/self/fd");
        assert_true(fds > 0);
    }
    for (i = 0; i < write; i++) {
        if (per > 0 && i > 0 && i % per == 0) {
            assert_int_equal(sl_task_output_next(ctx, slot), 0);
            /* A second next on the fresh, empty bulk is a no-op. */
            assert_int_equal(sl_task_output_next(ctx, slot), 0);
        }
        assert_int_equal(sl_task_output_writer(ctx, slot, &w), 0);
        (void)snprintf(id, sizeof(id), "r%llu", (unsigned long long)i);
        rec = sl_record_new(id);
        assert_int_equal(sl_bulk_writer_add(w, rec), 0);
        sl_record_free(rec);
    }
    if (fds > 0) {
        /* The open bulk holds one; the closed ones none. */
        assert_in_range(dir_entries("/proc/self/fd"), 0, fds + 2);
    }
    assert_int_equal(sl_task_param_u64(ctx, "open", 0, &flag), 0);
    if (flag) {
        assert_int_equal(sl_task_output_writer(ctx, "out", &w), 0);
    }
    assert_int_equal(sl_task_param_u64(ctx, "read", 0, &flag), 0);
    for (i = 0; flag && i < sl_task_input_count(ctx, "in"); i++) {
        int rc = 0;

        assert_int_equal(sl_task_input_open(ctx, "in", i, &r), 0);
        do {
            rc = sl_bulk_reader_next(r, &rec, NULL);
            sl_record_free(rec);
            rec = NULL;
        } while (rc == 1);
        assert_int_equal(rc, 0);
    }
    sl_task_counter_add(ctx, "custom", 1.5);
    sl_task_counter_add(ctx, "custom", 1.5);
    if (sl_task_param_str(ctx, "later") != NULL) {
        return sl_task_retry_later(ctx, sl_task_param_str(ctx, "later"));
    }
    if (result != SL_WORKER_OK) {
        sl_task_set_message(
            ctx, "scripted result %llu", (unsigned long long)result);
    }
    return (int)result;
}

static const struct sl_worker_type scripted = {
    SL_WORKER_ABI_VERSION,
    "scripted",
    "{\"name\": \"scripted\"}",
    scripted_perform,
    NULL,
    NULL,
};

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));

    wk_env_open(f->dir, sizeof(f->dir), "test_workers", &f->store, &f->b);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    wk_env_close(f->dir, f->store, f->b);
    sl_free(f);
    return 0;
}

/* Run the scripted worker on a task with @params (JSON text). */
static json_t *
run(struct fixture *f, const char *params, unsigned flags, int cancel)
{
    json_t *task = json_pack("{s:s, s:o, s:{s:i}, s:{s:[{s:s, s:s, s:s}]},"
                             " s:{s:[{s:s, s:s, s:s}], s:[{s:s, s:s, s:s}]}}",
                             "taskId",
                             "t1",
                             "parameters",
                             json_loads(params, 0, NULL),
                             "properties",
                             "retries",
                             0,
                             "input",
                             "in",
                             "bucket",
                             "b",
                             "store",
                             "s",
                             "id",
                             "in/1",
                             "output",
                             "out",
                             "bucket",
                             "b",
                             "store",
                             "s",
                             "id",
                             "out/1",
                             "multi",
                             "bucket",
                             "m",
                             "store",
                             "s",
                             "id",
                             "multi/x/0");
    struct sl_task_ctx *ctx = NULL;
    json_t *result = NULL;

    assert_non_null(task);
    ctx = sl__task_ctx_new(f->b, f->b->impl, &scripted, flags, task);
    if (cancel) {
        sl__task_ctx_cancel(ctx);
    }
    result = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    json_decref(task);
    return result;
}

/* Records in object @id of store "s", or -1 if it does not exist. */
static long
records_in(struct fixture *f, const char *id)
{
    struct sl_obj_reader * or = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    long n = 0;
    int rc = 0;

    if (sl_obj_reader_open(f->store, "s", id, & or, NULL) != 0) {
        return -1;
    }
    sl_obj_reader_source(or, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &br, NULL), 0);
    for (;;) {
        rc = sl_bulk_reader_next(br, &rec, NULL);
        if (rc != 1) {
            break;
        }
        sl_record_free(rec);
        n++;
    }
    assert_int_equal(rc, 0);
    sl_bulk_reader_free(br);
    sl_obj_reader_free(or);
    return n;
}

static json_int_t
counter(const json_t *result, const char *name)
{
    return json_integer_value(
        json_object_get(json_object_get(result, "counters"), name));
}

static const char *
status(const json_t *result)
{
    return json_string_value(json_object_get(result, "status"));
}

static void
test_workers_commit_on_ok(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f, "{\"write\": 3}", 0, 0);

    assert_string_equal(status(r), "SUCCESSFUL");
    assert_null(json_object_get(r, "errorMessage"));
    assert_int_equal(records_in(f, "out/1"), 3);
    assert_int_equal(counter(r, "output.out.recordCount"), 3);
    assert_int_equal(counter(r, "custom"), 3);
    assert_true(json_is_number(
        json_object_get(json_object_get(r, "counters"), "duration")));
    assert_true(json_is_number(
        json_object_get(json_object_get(r, "counters"), "duration.perform")));
    json_decref(r);
}

/* Table: results that discard outputs, unless the worker is autoCommit. */
static void
test_workers_discard_unless_ok(void **state)
{
    static const struct {
        const char *params;
        unsigned flags;
        const char *status;
        long records; /* -1: not committed */
    } cases[] = {
        {"{\"write\": 2, \"result\": 1}", 0, "RECOVERABLE_ERROR", -1},
        {"{\"write\": 2, \"result\": 2}", 0, "FATAL_ERROR", -1},
        {"{\"write\": 2, \"result\": 3}", 0, "POSTPONE", -1},
        {"{\"write\": 2, \"result\": 1}",
         SL__WK_AUTO_COMMIT,
         "RECOVERABLE_ERROR",
         2},
        {"{\"write\": 2, \"result\": 9}", 0, "FATAL_ERROR", -1},
    };
    struct fixture *f = *state;
    size_t i = 0;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *r = run(f, cases[i].params, cases[i].flags, 0);

        assert_string_equal(status(r), cases[i].status);
        assert_non_null(json_string_value(json_object_get(r, "errorMessage")));
        assert_int_equal(records_in(f, "out/1"), cases[i].records);
        (void)sl_obj_delete(f->store, "s", "out/1", NULL);
        json_decref(r);
    }
}

static void
test_workers_empty_bulk_not_committed(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f, "{\"open\": 1}", 0, 0);

    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "out/1"), -1);
    assert_int_equal(counter(r, "output.out.recordCount"), 0);
    json_decref(r);
}

static void
test_workers_canceled_not_committed(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f, "{\"write\": 2}", SL__WK_AUTO_COMMIT, 1);

    assert_int_equal(records_in(f, "out/1"), -1);
    json_decref(r);
}

static void
test_workers_multiple_slot_ids(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f, "{\"write\": 5, \"per\": 2, \"slot\": \"multi\"}", 0, 0);

    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "multi/x/0"), 2);
    assert_int_equal(records_in(f, "multi/x/1"), 2);
    assert_int_equal(records_in(f, "multi/x/2"), 1);
    assert_int_equal(records_in(f, "multi/x/3"), -1);
    assert_int_equal(counter(r, "output.multi.recordCount"), 5);
    json_decref(r);
}

/*
 * A task that closes more bulks than a process has descriptors to spare
 * (the webCrawler's sitemap links): each closed bulk is sealed at once and
 * holds no descriptor (checked in perform), and all are committed.
 */
static void
test_workers_closed_bulks_hold_no_fd(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f,
                    "{\"write\": 1500, \"per\": 1, \"slot\": \"multi\","
                    " \"fds\": 1}",
                    0,
                    0);

    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "multi/x/0"), 1);
    assert_int_equal(records_in(f, "multi/x/1499"), 1);
    assert_int_equal(records_in(f, "multi/x/1500"), -1);
    assert_int_equal(counter(r, "output.multi.recordCount"), 1500);
    json_decref(r);
}

/* Sealed bulks of a failed task are discarded: no object, no shadow file. */
static void
test_workers_closed_bulks_discarded(void **state)
{
    struct fixture *f = *state;
    char *tmp = sl_asprintf("%s/.tmp", f->dir);
    json_t *r = run(f,
                    "{\"write\": 50, \"per\": 1, \"slot\": \"multi\","
                    " \"fds\": 1, \"result\": 1}",
                    0,
                    0);

    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_int_equal(records_in(f, "multi/x/0"), -1);
    assert_int_equal(records_in(f, "multi/x/49"), -1);
    assert_int_equal(dir_entries(tmp), 0);
    sl_free(tmp);
    json_decref(r);
}

/* Run @perform (worker type "t") on @task (taken over); the result. */
static json_t *
run_perform(struct fixture *f,
            int (*perform)(struct sl_task_ctx *),
            json_t *task)
{
    const struct sl_worker_type t = {
        SL_WORKER_ABI_VERSION, "t", "{\"name\": \"t\"}", perform, NULL, NULL};
    struct sl_task_ctx *ctx = sl__task_ctx_new(f->b, f->b->impl, &t, 0, task);
    json_t *r = sl__task_ctx_run(ctx);

    sl__task_ctx_free(ctx);
    json_decref(task);
    return r;
}

/* Task @task_id with one bulk @id of store "s" in slot @slot of @kind
 * ("input" or "output"). */
static json_t *
one_slot_task(const char *task_id,
              const char *kind,
              const char *slot,
              const char *id)
{
    return json_pack("{s:s, s:{s:[{s:s, s:s, s:s}]}}",
                     "taskId",
                     task_id,
                     kind,
                     slot,
                     "bucket",
                     "b",
                     "store",
                     "s",
                     "id",
                     id);
}

/* next on a slot that is not multiple is refused (the worker then fails). */
static int
next_on_single(struct sl_task_ctx *ctx)
{
    assert_int_equal(sl_task_output_next(ctx, "out"), SL_EINVAL);
    assert_int_equal(sl_task_output_next(ctx, "nope"), SL_ENOENT);
    return SL_WORKER_OK;
}

static void
test_workers_next_needs_multiple(void **state)
{
    json_t *r = run_perform(
        *state, next_on_single, one_slot_task("t2", "output", "out", "single"));

    assert_string_equal(status(r), "SUCCESSFUL");
    json_decref(r);
}

/* Write bulk "in/1" of store "s" with @n records. */
static void
write_input(struct fixture *f, int n)
{
    struct sl_obj_writer *w = NULL;
    struct sl_bulk_writer *bw = NULL;
    struct sl_record *rec = NULL;
    struct sl_sink sink;
    int i = 0;

    assert_int_equal(sl_obj_writer_open(f->store, "s", "in/1", &w, NULL), 0);
    sl_obj_writer_sink(w, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &bw), 0);
    for (i = 0; i < n; i++) {
        rec = sl_record_new("x");
        assert_int_equal(sl_bulk_writer_add(bw, rec), 0);
        sl_record_free(rec);
    }
    assert_int_equal(sl_bulk_writer_finish(bw), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, NULL), 0);
    sl_bulk_writer_free(bw);
    sl_obj_writer_free(w);
}

static void
test_workers_input_counters(void **state)
{
    struct fixture *f = *state;
    json_t *r = NULL;

    write_input(f, 4);
    r = run(f, "{\"read\": 1}", 0, 0);
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(counter(r, "input.in.recordCount"), 4);
    json_decref(r);
}

/*
 * sl_task_output_copy_input, driven by the parameters: "pre" records are
 * written to "slot" first, the input is read to its end (or one record
 * with "part" 1), the copy must return "expect", then "post" records are
 * written (the writer must return "post_rc"); "fail" 1 fails the task.
 */
static int
copier_perform(struct sl_task_ctx *ctx)
{
    const char *slot = sl_task_param_str(ctx, "slot");
    struct sl_bulk_writer *w = NULL;
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    uint64_t v[6] = {0};
    static const char *const names[6] = {
        "pre", "part", "expect", "post", "post_rc", "fail"};
    uint64_t i = 0;
    int rc = 0;

    for (i = 0; i < 6; i++) {
        assert_int_equal(sl_task_param_u64(ctx, names[i], 0, &v[i]), 0);
    }
    for (i = 0; i < v[0]; i++) {
        assert_int_equal(sl_task_output_writer(ctx, slot, &w), 0);
        rec = sl_record_new("pre");
        assert_int_equal(sl_bulk_writer_add(w, rec), 0);
        sl_record_free(rec);
    }
    assert_int_equal(sl_task_input_open(ctx, "in", 0, &r), 0);
    do {
        rc = sl_bulk_reader_next(r, &rec, NULL);
        sl_record_free(rec);
        rec = NULL;
    } while (rc == 1 && !v[1]);
    /* "expect" is the negated code for errors: params are unsigned */
    rc = sl_task_output_copy_input(ctx, slot, r);
    assert_int_equal(rc < 0 ? (uint64_t)-rc : (uint64_t)rc, v[2]);
    for (i = 0; i < v[3]; i++) {
        rc = sl_task_output_writer(ctx, slot, &w);
        assert_int_equal(rc < 0 ? (uint64_t)-rc : (uint64_t)rc, v[4]);
        if (rc == 0) {
            rec = sl_record_new("post");
            assert_int_equal(sl_bulk_writer_add(w, rec), 0);
            sl_record_free(rec);
        }
    }
    return v[5] ? SL_WORKER_RECOVERABLE : SL_WORKER_OK;
}

static json_t *
run_copier(struct fixture *f, const char *params)
{
    json_t *task = json_pack("{s:s, s:o, s:{s:[{s:s, s:s}]},"
                             " s:{s:[{s:s, s:s}], s:[{s:s, s:s}]}}",
                             "taskId",
                             "c1",
                             "parameters",
                             json_loads(params, 0, NULL),
                             "input",
                             "in",
                             "store",
                             "s",
                             "id",
                             "in/1",
                             "output",
                             "out",
                             "store",
                             "s",
                             "id",
                             "out/1",
                             "multi",
                             "store",
                             "s",
                             "id",
                             "multi/x/0");

    return run_perform(f, copier_perform, task);
}

/* Inode of object @id of store "s" in the fixture's directory, 0 if none. */
static ino_t
inode_of(const struct fixture *f, const char *id)
{
    char *path = sl_asprintf("%s/s/%s", f->dir, id);
    struct stat st;
    ino_t ino = 0;

    if (stat(path, &st) == 0) {
        ino = st.st_ino;
    }
    sl_free(path);
    return ino;
}

/* An input passed on as it is becomes the output without a copy (a hard
 * link: the same inode), committed with the task, counted; the input stays. */
static void
test_workers_copy_input_shared(void **state)
{
    struct fixture *f = *state;
    json_t *r = NULL;

    write_input(f, 3);
    r = run_copier(f, "{\"slot\": \"out\", \"post\": 1, \"post_rc\": 40001}");
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "out/1"), 3);
    assert_int_equal(records_in(f, "in/1"), 3);
    assert_true(inode_of(f, "out/1") != 0);
    assert_true(inode_of(f, "out/1") == inode_of(f, "in/1"));
    assert_int_equal(counter(r, "output.out.recordCount"), 3);
    assert_int_equal(counter(r, "input.in.recordCount"), 3);
    json_decref(r);

    /* deleting the input keeps the output */
    assert_int_equal(sl_obj_delete(f->store, "s", "in/1", NULL), 0);
    assert_int_equal(records_in(f, "out/1"), 3);
}

/* A multiple slot: the copy is one bulk, records written after it go to
 * the next; one written before keeps the worker writing (1). */
static void
test_workers_copy_input_multiple(void **state)
{
    struct fixture *f = *state;
    json_t *r = NULL;

    write_input(f, 2);
    r = run_copier(f, "{\"slot\": \"multi\", \"post\": 3}");
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "multi/x/0"), 2);
    assert_int_equal(records_in(f, "multi/x/1"), 3);
    assert_int_equal(records_in(f, "multi/x/2"), -1);
    assert_int_equal(counter(r, "output.multi.recordCount"), 5);
    json_decref(r);

    r = run_copier(f, "{\"slot\": \"out\", \"pre\": 1, \"expect\": 1}");
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "out/1"), 1);
    assert_true(inode_of(f, "out/1") != inode_of(f, "in/1"));
    json_decref(r);
}

/* Refused: an input not read to its end, a slot that is not connected;
 * an empty input makes no output; a failed task commits nothing. */
static void
test_workers_copy_input_refused(void **state)
{
    struct fixture *f = *state;
    json_t *r = NULL;

    write_input(f, 2);
    r = run_copier(f,
                   "{\"slot\": \"out\", \"part\": 1, \"expect\": 22,"
                   " \"post\": 1}");
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "out/1"), 1);
    assert_true(inode_of(f, "out/1") != inode_of(f, "in/1"));
    json_decref(r);
    assert_int_equal(sl_obj_delete(f->store, "s", "out/1", NULL), 0);

    r = run_copier(f, "{\"slot\": \"nope\", \"expect\": 2}");
    assert_string_equal(status(r), "SUCCESSFUL");
    json_decref(r);

    r = run_copier(f, "{\"slot\": \"out\", \"fail\": 1}");
    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_int_equal(records_in(f, "out/1"), -1);
    json_decref(r);

    write_input(f, 0);
    r = run_copier(f, "{\"slot\": \"out\"}");
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(records_in(f, "out/1"), -1);
    json_decref(r);
}

/* An input read in part, then read whole (the webFetcher's scan, then
 * its pass): its records are counted once, all of them. */
static int
read_twice(struct sl_task_ctx *ctx)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    int rc = 0;

    assert_int_equal(sl_task_input_open(ctx, "in", 0, &r), 0);
    assert_int_equal(sl_bulk_reader_next(r, &rec, NULL), 1);
    sl_record_free(rec);
    sl_task_input_close(ctx, r);
    assert_int_equal(sl_task_input_open(ctx, "in", 0, &r), 0);
    do {
        rec = NULL;
        rc = sl_bulk_reader_next(r, &rec, NULL);
        sl_record_free(rec);
    } while (rc == 1);
    sl_task_input_close(ctx, r);
    assert_int_equal(sl_task_input_open(ctx, "in", 0, &r), 0);
    sl_task_input_close(ctx, r);
    return SL_WORKER_OK;
}

static void
test_workers_input_read_twice(void **state)
{
    struct fixture *f = *state;
    json_t *r = NULL;

    write_input(f, 5);
    r = run_perform(f, read_twice, one_slot_task("t5", "input", "in", "in/1"));
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_int_equal(counter(r, "input.in.recordCount"), 5);
    json_decref(r);
}

/* A missing input object is SL_ENOENT with a message naming it. */
static int
missing_input(struct sl_task_ctx *ctx)
{
    struct sl_bulk_reader *r = NULL;

    assert_int_equal(sl_task_input_count(ctx, "in"), 1);
    assert_int_equal(sl_task_input_count(ctx, "other"), 0);
    assert_int_equal(sl_task_input_open(ctx, "in", 1, &r), SL_ENOENT);
    assert_int_equal(sl_task_input_open(ctx, "in", 0, &r), SL_ENOENT);
    assert_null(r);
    return SL_WORKER_RECOVERABLE;
}

static void
test_workers_missing_input(void **state)
{
    json_t *r = run_perform(
        *state, missing_input, one_slot_task("t3", "input", "in", "gone"));

    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_non_null(
        strstr(json_string_value(json_object_get(r, "errorMessage")), "gone"));
    json_decref(r);
}

static void
test_workers_retry_later(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f, "{\"write\": 1, \"later\": \"ev1\"}", 0, 0);

    assert_string_equal(status(r), "POSTPONE");
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(r, "prerequisiteEvents"), 0)),
                        "ev1");
    assert_int_equal(records_in(f, "out/1"), -1);
    json_decref(r);
}

/* Parameters: integers, decimal strings, defaults, junk. */
static int
params_perform(struct sl_task_ctx *ctx)
{
    uint64_t v = 0;

    assert_int_equal(sl_task_param_u64(ctx, "i", 7, &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(sl_task_param_u64(ctx, "s", 7, &v), 0);
    assert_int_equal(v, 34);
    assert_int_equal(sl_task_param_u64(ctx, "absent", 7, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(sl_task_param_u64(ctx, "bad", 7, &v), SL_EINVAL);
    assert_int_equal(sl_task_param_u64(ctx, "neg", 7, &v), SL_EINVAL);
    assert_string_equal(sl_task_param_str(ctx, "s"), "34");
    assert_null(sl_task_param_str(ctx, "i"));
    assert_false(sl_task_completion(ctx, NULL, NULL));
    assert_false(sl_task_is_canceled(ctx));
    assert_string_equal(sl_task_worker(ctx), "t");
    return SL_WORKER_OK;
}

static void
test_workers_params(void **state)
{
    json_t *r = run_perform(*state,
                            params_perform,
                            json_pack("{s:s, s:{s:i, s:s, s:s, s:i}}",
                                      "taskId",
                                      "t4",
                                      "parameters",
                                      "i",
                                      12,
                                      "s",
                                      "34",
                                      "bad",
                                      "x1",
                                      "neg",
                                      -1));

    assert_string_equal(status(r), "SUCCESSFUL");
    json_decref(r);
}

static void
test_workers_type_flags(void **state)
{
    static const struct sl_worker_type ac = {
        SL_WORKER_ABI_VERSION,
        "ac",
        "{\"name\": \"ac\", \"modes\": [\"bulkSource\", \"autoCommit\"]}",
        params_perform,
        NULL,
        NULL};
    static const struct sl_worker_type bad = {SL_WORKER_ABI_VERSION,
                                              "bad",
                                              "{\"name\": \"other\"}",
                                              params_perform,
                                              NULL,
                                              NULL};
    static const struct sl_worker_type old = {
        0, "old", "{\"name\": \"old\"}", params_perform, NULL, NULL};
    /* the table before the start hook */
    static const struct sl_worker_type v1 = {
        1, "v1", "{\"name\": \"v1\"}", params_perform, NULL, NULL};
    unsigned flags = 0;

    (void)state;
    assert_int_equal(sl__wk_type_flags(&ac, &flags, NULL), 0);
    assert_int_equal(flags, SL__WK_AUTO_COMMIT);
    assert_int_equal(sl__wk_type_flags(&scripted, &flags, NULL), 0);
    assert_int_equal(flags, 0);
    assert_int_equal(sl__wk_type_flags(&bad, &flags, NULL), SL_EINVALDEF);
    assert_int_equal(sl__wk_type_flags(&old, &flags, NULL), SL_EINVALDEF);
    assert_int_equal(sl__wk_type_flags(&v1, &flags, NULL), SL_EINVALDEF);
}

/* ---- a full disk: the backend's output sinks fail with SL_ENOSPC */

static const struct sl__wk_ops *real_ops;

static int full_writes; /* writes since the last open */

/* The header goes (a small first write), then the disk is full. */
static int
full_write(void *ctx, const void *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return full_writes++ == 0 ? 0 : SL_ENOSPC;
}

static int
full_output_open(void *conn,
                 const char *store,
                 const char *id,
                 void **handle,
                 struct sl_sink *sink,
                 struct sl_err *err)
{
    int rc = real_ops->output_open(conn, store, id, handle, sink, err);

    if (rc == 0) {
        sink->write = full_write;
        sink->ctx = NULL;
        full_writes = 0;
    }
    return rc;
}

/* Writes one record and flushes it: the flush fails, and like some
 * workers this one calls a failed write fatal. */
static int
flush_perform(struct sl_task_ctx *ctx)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_record *rec = sl_record_new("r1");
    int rc = 0;

    assert_int_equal(sl_task_output_writer(ctx, "out", &w), 0);
    assert_int_equal(sl_bulk_writer_add(w, rec), 0);
    sl_record_free(rec);
    rc = sl_bulk_writer_flush(w);
    if (rc != 0) {
        sl_task_set_message(ctx, "write: %s", sl_strerror(rc));
        return SL_WORKER_FATAL;
    }
    return SL_WORKER_OK;
}

/* Writes one record into the writer's buffer and succeeds. */
static int
buffer_perform(struct sl_task_ctx *ctx)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_record *rec = sl_record_new("r1");

    assert_int_equal(sl_task_output_writer(ctx, "out", &w), 0);
    assert_int_equal(sl_bulk_writer_add(w, rec), 0);
    sl_record_free(rec);
    return SL_WORKER_OK;
}

/* Codes a worker notes itself (the index, the delta service). */
static int
noted_perform(struct sl_task_ctx *ctx)
{
    uint64_t code = 0;
    uint64_t res = 0;

    assert_int_equal(sl_task_param_u64(ctx, "code", 0, &code), 0);
    assert_int_equal(sl_task_param_u64(ctx, "result", 0, &res), 0);
    sl_task_note_error(ctx, -(int)code);
    sl_task_set_message(ctx, "noted %d", -(int)code);
    return (int)res;
}

static json_t *
noted_task(int code, int res)
{
    return json_pack("{s:s, s:{s:i, s:i}}",
                     "taskId",
                     "t9",
                     "parameters",
                     "code",
                     -code,
                     "result",
                     res);
}

static void
test_workers_nospace(void **state)
{
    struct fixture *f = *state;
    struct sl__wk_ops ops = *f->b->ops;
    struct sl__wk_backend full = *f->b;
    struct sl__wk_backend *saved = f->b;
    json_t *r = NULL;
    json_t *r2 = NULL;

    /* A write that finds the disk full: RECOVERABLE_ERROR with errorCode
     * NO_SPACE, whatever the worker called it. */
    real_ops = f->b->ops;
    ops.output_open = full_output_open;
    full.ops = &ops;
    f->b = &full;
    r = run_perform(
        f, flush_perform, one_slot_task("t8", "output", "out", "o"));
    /* a worker that writes into its buffer only: the seal at the commit
     * fails, and the successful task becomes a temporary failure */
    r2 = run_perform(
        f, buffer_perform, one_slot_task("t8", "output", "out", "o"));
    f->b = saved;
    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_string_equal(json_string_value(json_object_get(r, "errorCode")),
                        "NO_SPACE");
    assert_string_equal(status(r2), "RECOVERABLE_ERROR");
    assert_string_equal(json_string_value(json_object_get(r2, "errorCode")),
                        "NO_SPACE");
    assert_int_equal(records_in(f, "o"), -1);
    json_decref(r);
    json_decref(r2);

    /* Codes the worker notes: SL_ENOSPC and -EDQUOT make a failure
     * temporary, others leave it as it is; a success stays one. */
    r = run_perform(f, noted_perform, noted_task(SL_ENOSPC, SL_WORKER_FATAL));
    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_string_equal(json_string_value(json_object_get(r, "errorCode")),
                        "NO_SPACE");
    json_decref(r);
    r = run_perform(
        f, noted_perform, noted_task(-EDQUOT, SL_WORKER_RECOVERABLE));
    assert_string_equal(json_string_value(json_object_get(r, "errorCode")),
                        "NO_SPACE");
    json_decref(r);
    r = run_perform(f, noted_perform, noted_task(SL_EIO, SL_WORKER_FATAL));
    assert_string_equal(status(r), "FATAL_ERROR");
    assert_null(json_object_get(r, "errorCode"));
    json_decref(r);
    r = run_perform(
        f, noted_perform, noted_task(SL_EIO, SL_WORKER_RECOVERABLE));
    assert_string_equal(status(r), "RECOVERABLE_ERROR");
    assert_null(json_object_get(r, "errorCode"));
    json_decref(r);
    r = run_perform(f, noted_perform, noted_task(SL_ENOSPC, SL_WORKER_OK));
    assert_string_equal(status(r), "SUCCESSFUL");
    assert_null(json_object_get(r, "errorCode"));
    json_decref(r);
}

/* ---- the start hook: once per pool, with its services, before any
 * thread takes a task */

static atomic_int hook_takes;  /* takes of the pool's threads */
static int hook_calls;         /* start hooks called */
static int hook_takes_at_call; /* hook_takes when the last hook ran */
static int hook_rc;            /* what the hook returns */
static struct sl_worker_services hook_seen;

static int
hook_take(void *conn, const char *worker, json_t **task, struct sl_err *err)
{
    (void)conn;
    (void)worker;
    (void)task;
    (void)err;
    atomic_fetch_add(&hook_takes, 1);
    return SL_ENOENT;
}

static int
hook_start(const struct sl_worker_services *services, struct sl_err *err)
{
    hook_calls++;
    hook_takes_at_call = atomic_load(&hook_takes);
    hook_seen = *services;
    return hook_rc == 0 ? 0 : sl_err_set(err, hook_rc, "", "hook refused");
}

static void
hook_backend_free(struct sl__wk_backend *b)
{
    sl_free(b);
}

static void
test_workers_start_hook(void **state)
{
    struct fixture *f = *state;
    static const struct sl_worker_type hooked = {SL_WORKER_ABI_VERSION,
                                                 "hooked",
                                                 "{\"name\": \"hooked\"}",
                                                 params_perform,
                                                 NULL,
                                                 hook_start};
    const struct sl_worker_type *types[2] = {&scripted, &hooked};
    struct sl__wk_ops ops = *f->b->ops;
    struct sl__wk_backend *b = NULL;
    struct sl_worker_services svc;
    struct sl_worker_pool *pool = NULL;
    int marks[2];

    memset(&svc, 0, sizeof(svc));
    svc.delta = (struct sl_delta *)&marks[0];
    svc.index = (struct sl_index_set *)&marks[1];
    ops.take = hook_take;
    ops.wait_work = NULL;

    /* once for the pool (not per thread), before the first take */
    atomic_store(&hook_takes, 0);
    hook_calls = 0;
    hook_rc = 0;
    b = sl_calloc(1, sizeof(*b));
    b->ops = &ops;
    b->services = svc;
    assert_int_equal(
        sl__wk_pool_start(b, hook_backend_free, types, 2, 3, 0, NULL, &pool),
        0);
    assert_non_null(pool);
    assert_int_equal(hook_calls, 1);
    assert_int_equal(hook_takes_at_call, 0);
    assert_ptr_equal(hook_seen.delta, svc.delta);
    assert_ptr_equal(hook_seen.index, svc.index);
    assert_null(hook_seen.bulkbuilder);
    while (atomic_load(&hook_takes) == 0) {
        (void)poll(NULL, 0, 1); /* the threads run */
    }
    sl_worker_pool_stop(pool);

    /* a refusal fails the start: no thread ever takes a task */
    atomic_store(&hook_takes, 0);
    hook_calls = 0;
    hook_rc = SL_EINVAL;
    b = sl_calloc(1, sizeof(*b));
    b->ops = &ops;
    pool = (struct sl_worker_pool *)&marks[0];
    assert_int_equal(
        sl__wk_pool_start(b, hook_backend_free, types, 2, 3, 0, NULL, &pool),
        SL_EINVAL);
    assert_null(pool);
    assert_int_equal(hook_calls, 1);
    assert_int_equal(atomic_load(&hook_takes), 0);

    /* the public start hands the hook the services it was given (the
     * refusal keeps the threads, which would need a jobmanager, off) */
    hook_calls = 0;
    memset(&hook_seen, 0, sizeof(hook_seen));
    assert_int_equal(
        sl_worker_pool_start(NULL, f->store, &svc, types, 2, 1, NULL, &pool),
        SL_EINVAL);
    assert_null(pool);
    assert_int_equal(hook_calls, 1);
    assert_ptr_equal(hook_seen.delta, svc.delta);
    assert_ptr_equal(hook_seen.index, svc.index);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_workers_commit_on_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_discard_unless_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_empty_bulk_not_committed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_canceled_not_committed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_multiple_slot_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_closed_bulks_hold_no_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_closed_bulks_discarded, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_next_needs_multiple, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_input_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_input_read_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_copy_input_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_copy_input_multiple, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_copy_input_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_missing_input, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_workers_retry_later, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workers_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workers_nospace, setup, teardown),
        cmocka_unit_test(test_workers_type_flags),
        cmocka_unit_test_setup_teardown(
            test_workers_start_hook, setup, teardown),
    };

    json_set_alloc_funcs(sl_malloc, sl_free);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
