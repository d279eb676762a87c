/*
 * Unit tests of the updatePusher's element checks (issue 25): the worker
 * runs over the in-process task context with a filesystem object store
 * and a real delta service in a temporary directory, pushing to `remote`
 * with curl_easy_perform and curl_easy_getinfo wrapped (-Wl,--wrap): every
 * push is accepted with 200 unless a test makes the Nth fail.  The
 * records pushed are read back from the output `pushedRecords`.
 *
 * A compound (/d/a.zip) with elements, one of them a nested zip with an
 * element of its own, is pushed in run 1; run 2 brings the compound
 * changed with one element edited, one removed, one new: only the
 * compound, the edited and the new element are pushed, the unchanged
 * ones (nested included) are marked visited, the removed one is the only
 * obsolete entry.  Also: a retried task, strategy `initial`, records
 * without heads, a push that fails (the compound is not marked before its
 * elements), windows of more than 1000 records, and the number of
 * completion tasks the start hook's delta service gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "builtin/builtin.h"
#include "deltaservice/deltaservice.h"
#include "workers/workers_int.h"
#include "wk_fixture.h"

#define SRC "src"

CURLcode __wrap_curl_easy_perform(CURL *h);
CURLcode __wrap_curl_easy_getinfo(CURL *h, CURLINFO info, ...);

static int perform_calls; /* pushes tried */
static int fail_at;       /* the push (from 1) that fails; 0: none */

CURLcode
__wrap_curl_easy_perform(CURL *h)
{
    (void)h;
    perform_calls++;
    return perform_calls == fail_at ? CURLE_COULDNT_CONNECT : CURLE_OK;
}

CURLcode
__wrap_curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
    va_list ap;

    (void)h;
    va_start(ap, info);
    if (info == CURLINFO_RESPONSE_CODE) {
        *va_arg(ap, long *) = 200;
    }
    va_end(ap);
    return CURLE_OK;
}

struct fixture {
    char dir[512];
    struct sl_obj *store;
    struct sl__wk_backend *b;
    struct sl_delta *delta;
    unsigned objects; /* object ids */
};

/* One record of an input bulk: no compound id for a top-level record. */
struct rec {
    const char *id;
    const char *compound;
    const char *hash;
    int is_compound;
    const char *source; /* NULL: SRC */
};

/* What one task did. */
struct result {
    const char *status;
    double pushed, uptodate, duplicate;
    json_t *ids; /* the pushed ids, in order */
};

#define C "/d/a.zip"
static const struct rec run1[] = {
    {"/d/plain.txt", NULL, "p1", 0, NULL},
    {C, NULL, "c1", 1, NULL},
    {C "!/keep.txt", C, "k1", 0, NULL},
    {C "!/edit.txt", C, "e1", 0, NULL},
    {C "!/gone.txt", C, "g1", 0, NULL},
    {C "!/in.zip", C, "n1", 1, NULL},
    {C "!/in.zip!/deep.txt", C, "d1", 0, NULL},
};
/* The compound changed: edit.txt edited, gone.txt removed, new.txt new. */
static const struct rec run2[] = {
    {"/d/plain.txt", NULL, "p1", 0, NULL},
    {C, NULL, "c2", 1, NULL},
    {C "!/keep.txt", C, "k1", 0, NULL},
    {C "!/edit.txt", C, "e2", 0, NULL},
    {C "!/in.zip", C, "n1", 1, NULL},
    {C "!/in.zip!/deep.txt", C, "d1", 0, NULL},
    {C "!/new.txt", C, "w1", 0, NULL},
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    char *path = NULL;

    wk_env_open(f->dir, sizeof(f->dir), "test_update_pusher", &f->store, &f->b);
    path = sl_asprintf("%s/delta", f->dir);
    assert_int_equal(
        sl_delta_open(path, 4, SL_DURABILITY_PROCESS, 0, &f->delta, NULL), 0);
    sl_free(path);
    f->b->services.delta = f->delta;
    perform_calls = fail_at = 0;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_delta_close(f->delta);
    wk_env_close(f->dir, f->store, f->b);
    sl_free(f);
    (void)unsetenv("SLUICE_TEST_NO_HEADS");
    return 0;
}

/* Write @n records (each with a small attachment) as a new object; its id
 * in a new string. */
static char *
write_bulk(struct fixture *f, const struct rec *r, size_t n)
{
    char *id = sl_asprintf("in/%u", f->objects++);
    struct sl_obj_writer *w = NULL;
    struct sl_bulk_writer *bw = NULL;
    struct sl_sink sink;
    size_t i = 0;

    assert_int_equal(sl_obj_writer_open(f->store, "s", id, &w, NULL), 0);
    sl_obj_writer_sink(w, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &bw), 0);
    for (i = 0; i < n; i++) {
        json_t *meta = json_pack("{s:s, s:s, s:s}",
                                 "_recordid",
                                 r[i].id,
                                 "_source",
                                 r[i].source != NULL ? r[i].source : SRC,
                                 "_deltaHash",
                                 r[i].hash);

        if (r[i].compound != NULL) {
            (void)json_object_set_new(
                meta, "_compoundRecordId", json_string(r[i].compound));
        }
        if (r[i].is_compound) {
            (void)json_object_set_new(meta, "_isCompound", json_true());
        }
        assert_int_equal(sl_bulk_writer_record_begin(bw, meta), 0);
        assert_int_equal(sl_bulk_writer_attachment_begin(bw, "fileContent", 2),
                         0);
        assert_int_equal(sl_bulk_writer_attachment_write(bw, "ok", 2), 0);
        assert_int_equal(sl_bulk_writer_record_end(bw), 0);
        json_decref(meta);
    }
    assert_int_equal(sl_bulk_writer_finish(bw), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, NULL), 0);
    sl_bulk_writer_free(bw);
    sl_obj_writer_free(w);
    return id;
}

static json_t *
slot(const char *id)
{
    return json_pack(
        "[{s:s, s:s, s:s}]", "bucket", "b", "store", "s", "id", id);
}

/* The _recordid of every record of object @id, in order. */
static json_t *
read_ids(struct fixture *f, const char *id)
{
    struct sl_obj_reader *rd = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    json_t *ids = json_array();

    if (sl_obj_reader_open(f->store, "s", id, &rd, NULL) != 0) {
        return ids; /* nothing pushed: no bulk */
    }
    sl_obj_reader_source(rd, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &br, NULL), 0);
    while (sl_bulk_reader_next(br, &rec, NULL) == 1) {
        (void)json_array_append_new(ids, json_string(sl_record_id(rec)));
        sl_record_free(rec);
    }
    sl_bulk_reader_free(br);
    sl_obj_reader_free(rd);
    return ids;
}

static double
counter(const json_t *r, const char *name)
{
    return json_number_value(
        json_object_get(json_object_get(r, "counters"), name));
}

/* Push the records @r in job run @run with strategy @strategy. */
static struct result
push(struct fixture *f,
     const char *run,
     const char *strategy,
     const struct rec *r,
     size_t n)
{
    char *in = write_bulk(f, r, n);
    char *out = sl_asprintf("out/%u", f->objects++);
    json_t *task =
        json_pack("{s:s, s:{s:s, s:s, s:{s:[s], s:s}}, s:{s:s, s:i}, s:{s:o},"
                  " s:{s:o}}",
                  "taskId",
                  "t",
                  "parameters",
                  "dataSource",
                  SRC,
                  "deltaImportStrategy",
                  strategy,
                  "remote",
                  "endpoints",
                  "127.0.0.1:9",
                  "urlPath",
                  "smila/job/x/record",
                  "properties",
                  "jobRunId",
                  run,
                  "retries",
                  0,
                  "input",
                  "recordsToPush",
                  slot(in),
                  "output",
                  "pushedRecords",
                  slot(out));
    struct sl_task_ctx *ctx = NULL;
    json_t *res = NULL;
    struct result rs;
    static char status[32];

    assert_non_null(task);
    ctx = sl__task_ctx_new(f->b, f->b->impl, &sl_worker_updatePusher, 0, task);
    res = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    (void)snprintf(status,
                   sizeof(status),
                   "%s",
                   json_string_value(json_object_get(res, "status")));
    rs.status = status;
    rs.pushed = counter(res, "records.pushed");
    rs.uptodate = counter(res, "elements.uptodate");
    rs.duplicate = counter(res, "records.duplicate");
    rs.ids = read_ids(f, out);
    json_decref(res);
    json_decref(task);
    sl_free(in);
    sl_free(out);
    return rs;
}

/* Assert that @rs pushed exactly @want (NULL-terminated), in order. */
static void
expect_ids(const struct result *rs, const char *const *want)
{
    size_t i = 0;

    for (i = 0; want[i] != NULL; i++) {
        assert_true(i < json_array_size(rs->ids));
        assert_string_equal(json_string_value(json_array_get(rs->ids, i)),
                            want[i]);
    }
    assert_int_equal(json_array_size(rs->ids), i);
}

/* The run sequence of job run @run. */
static uint64_t
seq_of(struct fixture *f, const char *run)
{
    uint64_t seq = 0;

    assert_int_equal(sl_delta_run_for(f->delta, SRC, run, &seq, NULL), 0);
    return seq;
}

/* Whether @id (compound @cid) holds @hash and was last visited in the run
 * of sequence @seq (run 1 has 1, run 2 has 2). */
static int
visited(struct fixture *f,
        uint64_t seq,
        const char *id,
        const char *cid,
        const char *hash)
{
    struct sl_delta_rec dr = {id, cid, hash, 0, 0};
    int pushed = 0;

    assert_int_equal(sl_delta_was_pushed_in_run(
                         f->delta, SRC, seq, &dr, &pushed, NULL, NULL),
                     0);
    return pushed;
}

static int
collect_obsolete(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        (void)json_array_append_new(ctx, json_string(e[i].id));
    }
    return 0;
}

/* The ids of the current run @run's obsolete entries (removed by the
 * scan). */
static json_t *
obsolete(struct fixture *f, const char *run)
{
    json_t *ids = json_array();
    unsigned s = 0;

    for (s = 0; s < sl_delta_shards(f->delta); s++) {
        assert_int_equal(sl_delta_obsolete_scan(f->delta,
                                                SRC,
                                                seq_of(f, run),
                                                s,
                                                0,
                                                collect_obsolete,
                                                ids,
                                                NULL,
                                                NULL),
                         0);
    }
    return ids;
}

static void
result_free(struct result *rs)
{
    json_decref(rs->ids);
}

/* Run 1 (everything new) with @strategy; every record is pushed. */
static void
first_run(struct fixture *f, const char *strategy)
{
    struct result rs = push(f, "r1", strategy, run1, N(run1));

    assert_string_equal(rs.status, "SUCCESSFUL");
    assert_int_equal(rs.pushed, N(run1));
    assert_int_equal(rs.uptodate, 0);
    result_free(&rs);
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

static const char *const changed_pushed[] = {
    "/d/plain.txt", C, C "!/edit.txt", C "!/new.txt", NULL};

/* Run 2 after run 1 with @strategy: only the compound, the edited and the
 * new element (and the plain record, never checked here) are pushed. */
static void
changed_run(struct fixture *f, const char *strategy)
{
    struct result rs;
    json_t *gone = NULL;

    first_run(f, strategy);
    rs = push(f, "r2", strategy, run2, N(run2));
    assert_string_equal(rs.status, "SUCCESSFUL");
    expect_ids(&rs, changed_pushed);
    assert_int_equal(rs.pushed, 4);
    assert_int_equal(rs.uptodate, 3);
    assert_int_equal(rs.duplicate, 0);
    result_free(&rs);
    assert_true(visited(f, 2, C "!/keep.txt", C, "k1"));
    assert_true(visited(f, 2, C "!/in.zip", C, "n1"));
    assert_true(visited(f, 2, C "!/in.zip!/deep.txt", C, "d1"));
    assert_true(visited(f, 2, C "!/edit.txt", C, "e2"));
    assert_true(visited(f, 2, C, NULL, "c2"));
    gone = obsolete(f, "r2");
    assert_int_equal(json_array_size(gone), 1);
    assert_string_equal(json_string_value(json_array_get(gone, 0)),
                        C "!/gone.txt");
    json_decref(gone);
}

static void
test_pusher_changed_compound_full(void **state)
{
    changed_run(*state, "full");
}

static void
test_pusher_changed_compound_additive(void **state)
{
    changed_run(*state, "additive");
}

/* Records written without heads (a bulk of a version before heads): the
 * metadata is decoded, the verdicts are the same. */
static void
test_pusher_changed_compound_noheads(void **state)
{
    assert_int_equal(setenv("SLUICE_TEST_NO_HEADS", "1", 1), 0);
    changed_run(*state, "full");
}

/* A retried task of run 2 pushes nothing again. */
static void
test_pusher_retried_task(void **state)
{
    struct fixture *f = *state;
    struct result rs;

    changed_run(f, "full");
    rs = push(f, "r2", "full", run2, N(run2));
    assert_string_equal(rs.status, "SUCCESSFUL");
    assert_int_equal(rs.pushed, 0);
    assert_int_equal(rs.duplicate, 2); /* plain.txt and the compound */
    assert_int_equal(rs.uptodate, 5);  /* its elements */
    result_free(&rs);
}

/* `initial` does not check: every record is pushed again. */
static void
test_pusher_initial_pushes_all(void **state)
{
    struct fixture *f = *state;
    struct result rs;

    first_run(f, "initial");
    rs = push(f, "r2", "initial", run2, N(run2));
    assert_string_equal(rs.status, "SUCCESSFUL");
    assert_int_equal(rs.pushed, N(run2));
    assert_int_equal(rs.uptodate, 0);
    result_free(&rs);
}

/*
 * The push of edit.txt fails (a crash has the same effect: nothing after
 * the last mark batch is marked): the task is retried, the compound is
 * not marked (else an unchanged-compound check in a later run would keep
 * the old edit.txt), edit.txt keeps its old hash; the retry pushes the
 * rest and ends as a run without failure would.
 */
static void
test_pusher_failed_push(void **state)
{
    struct fixture *f = *state;
    static const char *const retry_pushed[] = {
        C, C "!/edit.txt", C "!/new.txt", NULL};
    struct result rs;
    json_t *gone = NULL;

    first_run(f, "full");
    perform_calls = 0;
    fail_at = 3; /* plain.txt, the compound, edit.txt */
    rs = push(f, "r2", "full", run2, N(run2));
    assert_string_equal(rs.status, "RECOVERABLE_ERROR");
    result_free(&rs);
    assert_true(visited(f, 2, "/d/plain.txt", NULL, "p1"));
    assert_false(visited(f, 2, C, NULL, "c2"));
    assert_false(visited(f, 2, C "!/edit.txt", C, "e2"));
    assert_true(visited(f, 1, C "!/edit.txt", C, "e1"));
    fail_at = 0;
    rs = push(f, "r2", "full", run2, N(run2));
    assert_string_equal(rs.status, "SUCCESSFUL");
    expect_ids(&rs, retry_pushed);
    assert_int_equal(rs.duplicate, 1);
    result_free(&rs);
    assert_true(visited(f, 2, C, NULL, "c2"));
    gone = obsolete(f, "r2");
    assert_int_equal(json_array_size(gone), 1);
    json_decref(gone);
}

/* 2,500 elements (three windows), every other one changed in run 2, then
 * a compound of another source, so the last window checks two sources. */
static void
test_pusher_windows(void **state)
{
    struct fixture *f = *state;
    enum { M = 2500 };
    static const struct rec other[] = {
        {"/o/x.zip", NULL, "x1", 1, "other"},
        {"/o/x.zip!/1", "/o/x.zip", "o1", 0, "other"},
        {"/o/x.zip!/2", "/o/x.zip", "o2", 0, "other"},
        {"/o/x.zip!/3", "/o/x.zip", "o3", 0, "other"},
    };
    size_t total = 1 + M + N(other);
    struct rec *r = sl_calloc(total, sizeof(*r));
    char **ids = sl_calloc(M, sizeof(*ids));
    struct result rs;
    size_t i = 0;

    r[0] = (struct rec){"/d/big.zip", NULL, "b1", 1, NULL};
    for (i = 0; i < M; i++) {
        ids[i] = sl_asprintf("/d/big.zip!/e%04zu", i);
        r[i + 1] = (struct rec){ids[i], "/d/big.zip", "h1", 0, NULL};
    }
    memcpy(r + 1 + M, other, sizeof(other));
    rs = push(f, "r1", "full", r, total);
    assert_int_equal(rs.pushed, total);
    result_free(&rs);
    r[0].hash = "b2";
    r[1 + M].hash = "x2";
    for (i = 0; i < M; i += 2) {
        r[i + 1].hash = "h2";
    }
    rs = push(f, "r2", "full", r, total);
    assert_string_equal(rs.status, "SUCCESSFUL");
    assert_int_equal(rs.pushed, 2 + M / 2);
    assert_int_equal(rs.uptodate, M / 2 + 3);
    for (i = 0; i < M / 2; i++) {
        assert_string_equal(json_string_value(json_array_get(rs.ids, i + 1)),
                            ids[2 * i]);
    }
    assert_string_equal(json_string_value(json_array_get(rs.ids, 1 + M / 2)),
                        "/o/x.zip");
    result_free(&rs);
    for (i = 0; i < M; i++) {
        sl_free(ids[i]);
    }
    sl_free(ids);
    sl_free(r);
}

/* The completion tasks of a `full` run: one per shard of the delta
 * service the pool's start hook found; a REST pool (no services) leaves
 * the count as it is. */
static void
test_pusher_partitions(void **state)
{
    struct fixture *f = *state;
    const struct sl_worker_type *t = &sl_worker_updatePusher;
    struct sl_worker_services none;
    json_t *full = json_pack("{s:s}", "deltaImportStrategy", "full");
    json_t *additive = json_pack("{s:s}", "deltaImportStrategy", "additive");
    json_t *bad = json_pack("{s:s}", "deltaImportStrategy", "fast");
    json_t *dflt = json_object();
    struct sl_err err;

    memset(&none, 0, sizeof(none));
    sl_err_clear(&err);
    assert_non_null(t->partitions);
    assert_non_null(t->start);
    assert_int_equal(t->start(&none, &err), 0);
    assert_int_equal(t->partitions(full), 1); /* no shards known yet */
    assert_int_equal(t->start(&f->b->services, &err), 0);
    assert_int_equal(t->partitions(full), 4);
    assert_int_equal(t->partitions(dflt), 4);
    assert_int_equal(t->partitions(additive), 1);
    assert_int_equal(t->partitions(bad), 1);
    assert_int_equal(t->start(&none, &err), 0);
    assert_int_equal(t->partitions(full), 4);
    json_decref(full);
    json_decref(additive);
    json_decref(bad);
    json_decref(dflt);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: no start hook ran in this process before */
        cmocka_unit_test_setup_teardown(
            test_pusher_partitions, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_changed_compound_full, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_changed_compound_additive, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_changed_compound_noheads, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_retried_task, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_initial_pushes_all, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pusher_failed_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pusher_windows, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
