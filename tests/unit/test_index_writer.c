/*
 * The indexWriter over the in-process task context and a real index set
 * (SQLite FTS5 files under $TMPDIR): what it holds before writing is
 * bounded by bytes as well as by records, so a task of big texts writes
 * in several transactions instead of holding all of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "index/index.h"
#include "workers/workers_int.h"
#include "wk_fixture.h"

struct fixture {
    char dir[512];
    struct sl_obj *store;
    struct sl_index_set *index;
    struct sl__wk_backend *b;
};

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    char *ix = NULL;

    wk_env_open(f->dir, sizeof(f->dir), "test_index_writer", &f->store, &f->b);
    ix = sl_asprintf("%s/index", f->dir);
    assert_int_equal(sl_index_open(ix, &f->index, NULL), 0);
    assert_int_equal(sl_index_set_shards(f->index, 2), 0);
    sl_free(ix);
    f->b->services.index = f->index;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_index_close(f->index);
    wk_env_close(f->dir, f->store, f->b);
    sl_free(f);
    return 0;
}

/* Object @id of store "s": @n records r0.. with a text attachment of
 * @len bytes each, streamed to the store (never held whole). */
static void
put_bulk(struct fixture *f, const char *id, size_t n, size_t len)
{
    struct sl_obj_writer *ow = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    char *text = sl_malloc(len);
    size_t i = 0;

    /* few, long tokens: the test is about bytes, not FTS5's tokenizer */
    memset(text, 'a', len);
    for (i = 4096; i < len; i += 4096) {
        text[i] = ' ';
    }
    assert_int_equal(sl_obj_writer_open(f->store, "s", id, &ow, NULL), 0);
    sl_obj_writer_sink(ow, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    for (i = 0; i < n; i++) {
        char rid[32];
        struct sl_record *rec = NULL;

        (void)snprintf(rid, sizeof(rid), "r%zu", i);
        rec = sl_record_new(rid);
        text[0] = (char)('b' + i % 20); /* distinct texts */
        assert_int_equal(sl_record_attachment_set(rec, "text", text, len), 0);
        assert_int_equal(sl_bulk_writer_add(w, rec), 0);
        sl_record_free(rec);
    }
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    sl_bulk_writer_free(w);
    assert_int_equal(sl_obj_writer_commit(ow, NULL, NULL), 0);
    sl_obj_writer_free(ow);
    sl_free(text);
}

/* Run the indexWriter on object @in; returns the finish request. */
static json_t *
run(struct fixture *f, const char *in)
{
    json_t *task = json_pack("{s:s, s:{}, s:{s:i}, s:{s:[{s:s, s:s, s:s}]}}",
                             "taskId",
                             "t",
                             "parameters",
                             "properties",
                             "retries",
                             0,
                             "input",
                             "records",
                             "bucket",
                             "b",
                             "store",
                             "s",
                             "id",
                             in);
    struct sl_task_ctx *ctx = NULL;
    json_t *result = NULL;

    assert_non_null(task);
    ctx = sl__task_ctx_new(f->b, f->b->impl, &sl_worker_indexWriter, 0, task);
    result = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    json_decref(task);
    return result;
}

static double
counter(const json_t *result, const char *name)
{
    return json_number_value(
        json_object_get(json_object_get(result, "counters"), name));
}

/* 24 texts of 3 MiB (72 MiB, more than the 64 MiB held at most): the
 * shards are written as their held texts reach 32 MiB each, so there are
 * more transactions than the one per shard at the end that 24 records
 * (far below the 256 per transaction) would give. */
static void
test_index_writer_bytes_bound(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    uint64_t docs = 0;

    put_bulk(f, "in/big", 24, (size_t)3 << 20);
    res = run(f, "in/big");
    assert_string_equal(json_string_value(json_object_get(res, "status")),
                        "SUCCESSFUL");
    assert_int_equal((int)counter(res, "records.indexed"), 24);
    assert_true(counter(res, "transactions") >= 3);
    assert_int_equal(sl_index_count(f->index, "default", &docs, NULL), 0);
    assert_int_equal((int)docs, 24);
    json_decref(res);
}

/* Small records: one transaction per shard for a task under 256 each. */
static void
test_index_writer_small(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;

    put_bulk(f, "in/small", 100, 100);
    res = run(f, "in/small");
    assert_string_equal(json_string_value(json_object_get(res, "status")),
                        "SUCCESSFUL");
    assert_int_equal((int)counter(res, "records.indexed"), 100);
    assert_int_equal((int)counter(res, "transactions"), 2);
    json_decref(res);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_index_writer_bytes_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_writer_small, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
