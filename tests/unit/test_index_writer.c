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

#include "builtin/builtin.h"
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

/* Start bulk object @id of store "s" (streamed to the store). */
static struct sl_bulk_writer *
bulk_open(struct fixture *f, const char *id, struct sl_obj_writer **ow)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;

    assert_int_equal(sl_obj_writer_open(f->store, "s", id, ow, NULL), 0);
    sl_obj_writer_sink(*ow, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    return w;
}

/* Add record @rid with the "text" attachment @text (@len bytes). */
static void
bulk_add(struct sl_bulk_writer *w,
         const char *rid,
         const char *text,
         size_t len)
{
    struct sl_record *rec = sl_record_new(rid);

    assert_int_equal(sl_record_attachment_set(rec, "text", text, len), 0);
    assert_int_equal(sl_bulk_writer_add(w, rec), 0);
    sl_record_free(rec);
}

/* Finish the bulk and commit its object. */
static void
bulk_close(struct sl_obj_writer *ow, struct sl_bulk_writer *w)
{
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    sl_bulk_writer_free(w);
    assert_int_equal(sl_obj_writer_commit(ow, NULL, NULL), 0);
    sl_obj_writer_free(ow);
}

/* Object @id of store "s": @n records r0.. with a text attachment of
 * @len bytes each, streamed to the store (never held whole). */
static void
put_bulk(struct fixture *f, const char *id, size_t n, size_t len)
{
    struct sl_obj_writer *ow = NULL;
    struct sl_bulk_writer *w = bulk_open(f, id, &ow);
    char *text = sl_malloc(len);
    size_t i = 0;

    /* few, long tokens: the test is about bytes, not FTS5's tokenizer */
    memset(text, 'a', len);
    for (i = 4096; i < len; i += 4096) {
        text[i] = ' ';
    }
    for (i = 0; i < n; i++) {
        char rid[32];

        (void)snprintf(rid, sizeof(rid), "r%zu", i);
        text[0] = (char)('b' + i % 20); /* distinct texts */
        bulk_add(w, rid, text, len);
    }
    bulk_close(ow, w);
    sl_free(text);
}

/* Object @id of store "s": one record per text of @texts (@lens bytes
 * each) with ids u0.., the text as its "text" attachment. */
static void
put_texts(struct fixture *f,
          const char *id,
          const char *const *texts,
          const size_t *lens,
          size_t n)
{
    struct sl_obj_writer *ow = NULL;
    struct sl_bulk_writer *w = bulk_open(f, id, &ow);
    size_t i = 0;

    for (i = 0; i < n; i++) {
        char rid[32];

        (void)snprintf(rid, sizeof(rid), "u%zu", i);
        bulk_add(w, rid, texts[i], lens[i]);
    }
    bulk_close(ow, w);
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

/* A record the index refuses (a _recordid of 70,000 bytes, a path that
 * is an object) between good ones is skipped alone: the task succeeds,
 * counts records.invalid, and the good records are indexed.  It used to
 * fail the whole task on every retry. */
static void
test_index_writer_bad_record_alone(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_writer *ow = NULL;
    struct sl_bulk_writer *w = bulk_open(f, "in/bad", &ow);
    char *long_id = sl_malloc(70001);
    struct sl_record *rec = NULL;
    json_t *res = NULL;
    uint64_t docs = 0;

    memset(long_id, 'x', 70000);
    long_id[70000] = '\0';
    bulk_add(w, "good-before", "alpha", 5);
    bulk_add(w, long_id, "beta", 4);
    rec = sl_record_new("bad-path");
    (void)json_object_set_new(sl_record_meta(rec), "path", json_object());
    assert_int_equal(sl_bulk_writer_add(w, rec), 0);
    sl_record_free(rec);
    bulk_add(w, "good-after", "gamma", 5);
    bulk_close(ow, w);
    sl_free(long_id);
    res = run(f, "in/bad");
    assert_string_equal(json_string_value(json_object_get(res, "status")),
                        "SUCCESSFUL");
    assert_int_equal((int)counter(res, "records.indexed"), 2);
    assert_int_equal((int)counter(res, "records.invalid"), 2);
    assert_int_equal(sl_index_count(f->index, "default", &docs, NULL), 0);
    assert_int_equal((int)docs, 2);
    json_decref(res);
}

/* Texts are checked for UTF-8 before they are indexed: valid ones (ASCII
 * runs longer than a word, 2-, 3- and 4-byte sequences, a NUL) are kept
 * byte for byte; an invalid byte after a long ASCII run, a surrogate, an
 * overlong form or a sequence cut at the end makes the text "" and counts
 * records.textInvalid. */
static void
test_index_writer_text_utf8(void **state)
{
    static const char ok[] = "plain ascii text, longer than eight bytes: "
                             "gr\xc3\xbc\xc3\x9f"
                             "e \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 end";
    static const char nul[] = "before\0after the NUL";
    static const char bad_late[] = "0123456789abcdef0123\xff tail";
    static const char surrogate[] = "abc \xed\xa0\x80 def";
    static const char overlong[] = "\xc0\xaf";
    static const char cut[] = "ends inside a sequence \xe6\x97";
    const char *const texts[] = {ok, nul, bad_late, surrogate, overlong, cut};
    const size_t lens[] = {sizeof(ok) - 1,
                           sizeof(nul) - 1,
                           sizeof(bad_late) - 1,
                           sizeof(surrogate) - 1,
                           sizeof(overlong) - 1,
                           sizeof(cut) - 1};
    const char *const expect[] = {ok, nul, "", "", "", ""};
    struct fixture *f = *state;
    json_t *res = NULL;
    size_t i = 0;

    put_texts(f, "in/utf8", texts, lens, 6);
    res = run(f, "in/utf8");
    assert_string_equal(json_string_value(json_object_get(res, "status")),
                        "SUCCESSFUL");
    assert_int_equal((int)counter(res, "records.indexed"), 6);
    assert_int_equal((int)counter(res, "records.textInvalid"), 4);
    json_decref(res);
    for (i = 0; i < 6; i++) {
        char rid[32];
        json_t *doc = NULL;
        const json_t *text = NULL;
        size_t want = i < 2 ? lens[i] : 0;

        (void)snprintf(rid, sizeof(rid), "u%zu", i);
        assert_int_equal(sl_index_get(f->index, "default", rid, &doc, NULL), 0);
        text = json_object_get(doc, "text");
        assert_true(json_is_string(text));
        assert_int_equal(json_string_length(text), want);
        assert_memory_equal(
            json_string_value(text), expect[i], want + (want == 0));
        json_decref(doc);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_index_writer_bytes_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_writer_small, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_writer_text_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_writer_bad_record_alone, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
