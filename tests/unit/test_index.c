/*
 * Unit tests of the embedded full-text index (index/): idempotent upserts
 * and deletes, batches, search ranking and snippets, unicode text,
 * malformed queries, record paging, counts, reopening, two writer
 * threads, and queries while a writer holds a shard (the ranking:
 * test_index_rank.c).  Each test works in its own temporary directory under
 * $TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "index/index.h"
#include "index/index_int.h" /* test_index_read_while_writing holds a shard */
#include "index_fixture.h"

static int
setup(void **state)
{
    return index_setup(state, "test_index.");
}

/* Upsert a document built from a JSON text; asserts success. */
static void
put(struct sl_index_set *set, const char *index, const char *json)
{
    json_t *doc = json_loads(json, 0, NULL);
    struct sl_err err;

    assert_non_null(doc);
    sl_err_clear(&err);
    if (sl_index_upsert(set, index, doc, &err) != 0) {
        fail_msg("upsert %s: %s", json, err.message);
    }
    json_decref(doc);
}

/* The sources of document @id joined by ",", "-" when it is absent (a
 * static buffer). */
static const char *
sources_of(struct sl_index_set *set, const char *index, const char *id)
{
    static char out[256];
    json_t *doc = NULL;
    json_t *v = NULL;
    size_t i = 0;

    out[0] = '\0';
    if (sl_index_get(set, index, id, &doc, NULL) != 0) {
        return "-";
    }
    json_array_foreach(json_object_get(doc, "_sources"), i, v)
    {
        (void)snprintf(out + strlen(out),
                       sizeof(out) - strlen(out),
                       "%s%s",
                       i > 0 ? "," : "",
                       json_string_value(v));
    }
    json_decref(doc);
    return out;
}

/* A versioned delete of @id from @source (NULL: outright); *kept set. */
static void
del_from(struct sl_index_set *set,
         const char *id,
         const char *source,
         uint64_t version,
         int *kept)
{
    struct sl_index_op op;
    struct sl_err err;

    memset(&op, 0, sizeof(op));
    op.id = id;
    op.source = source;
    op.version = version;
    sl_err_clear(&err);
    if (sl_index_apply(set, "s", &op, 1, &err) != 0) {
        fail_msg("delete %s: %s", id, err.message);
    }
    *kept = op.kept;
}

/*
 * Sources: a document two sources pushed stays while one of them holds
 * it; a delete without a source removes it outright; a purge removes a
 * source's documents unless another holds them, and skips documents
 * newer than the purge.
 */
static void
test_index_sources(void **state)
{
    struct fixture *f = *state;
    uint64_t deleted = 0;
    uint64_t kept_n = 0;
    struct sl_err err;
    int kept = 0;

    put(f->set, "s", "{\"_recordid\":\"d\",\"_source\":\"A\"}");
    put(f->set, "s", "{\"_recordid\":\"d\",\"_source\":\"B\"}");
    put(f->set, "s", "{\"_recordid\":\"a1\",\"_source\":\"A\"}");
    put(f->set, "s", "{\"_recordid\":\"a2\",\"_source\":\"A\"}");
    put(f->set, "s", "{\"_recordid\":\"n\"}");
    assert_string_equal(sources_of(f->set, "s", "d"), "A,B");
    assert_string_equal(sources_of(f->set, "s", "n"), "");
    del_from(f->set, "d", "A", 0, &kept);
    assert_true(kept);
    assert_string_equal(sources_of(f->set, "s", "d"), "B");
    del_from(f->set, "d", "A", 0, &kept); /* again: idempotent */
    assert_string_equal(sources_of(f->set, "s", "d"), "B");
    put(f->set, "s", "{\"_recordid\":\"d\",\"_source\":\"A\"}");
    del_from(f->set, "n", "A", 0, &kept); /* no source held it */
    assert_false(kept);
    assert_string_equal(sources_of(f->set, "s", "n"), "-");
    /* a2 is newer than the purge: it stays */
    put(f->set, "s", "{\"_recordid\":\"a2\",\"_source\":\"A\",\"x\":1}");
    {
        json_t *doc = json_pack(
            "{s:s, s:s, s:i}", "_recordid", "a2", "_source", "A", "y", 2);
        struct sl_index_op op = {doc, NULL, 50, 0, NULL, 0};

        sl_err_clear(&err);
        assert_int_equal(sl_index_apply(f->set, "s", &op, 1, &err), 0);
        json_decref(doc);
    }
    sl_err_clear(&err);
    assert_int_equal(
        sl_index_purge_source(f->set, "s", "A", 40, &deleted, &kept_n, &err),
        0);
    assert_int_equal(deleted, 1); /* a1 */
    assert_int_equal(kept_n, 1);  /* d, held by B */
    assert_string_equal(sources_of(f->set, "s", "a1"), "-");
    assert_string_equal(sources_of(f->set, "s", "a2"), "A");
    assert_string_equal(sources_of(f->set, "s", "d"), "B");
    del_from(f->set, "d", NULL, 0, &kept); /* outright */
    assert_string_equal(sources_of(f->set, "s", "d"), "-");
    /* a purge of an index that does not exist is no error */
    assert_int_equal(
        sl_index_purge_source(f->set, "none", "A", 0, NULL, NULL, &err), 0);
}

/*
 * Sources are keyed by the document's row (schema 6): a purge pages
 * through more than one page of them (256 a page) in row order, and a
 * row number SQLite hands out again after the last document was deleted
 * brings none of the deleted document's sources along.
 */
static void
test_index_sources_rows(void **state)
{
    struct fixture *f = *state;
    uint64_t deleted = 0;
    uint64_t kept_n = 0;
    struct sl_err err;
    char doc[96];
    int kept = 0;
    int i = 0;

    for (i = 0; i < 600; i++) {
        (void)snprintf(doc,
                       sizeof(doc),
                       "{\"_recordid\":\"p%03d\",\"_source\":\"%s\"}",
                       i,
                       i % 100 == 7 ? "Q" : "P");
        put(f->set, "s", doc);
    }
    put(f->set, "s", "{\"_recordid\":\"p123\",\"_source\":\"Q\"}");
    sl_err_clear(&err);
    assert_int_equal(
        sl_index_purge_source(f->set, "s", "P", 0, &deleted, &kept_n, &err), 0);
    assert_int_equal(deleted, 593); /* 600 - 6 of Q alone - p123 */
    assert_int_equal(kept_n, 1);    /* p123, held by Q too */
    assert_string_equal(sources_of(f->set, "s", "p000"), "-");
    assert_string_equal(sources_of(f->set, "s", "p599"), "-");
    assert_string_equal(sources_of(f->set, "s", "p107"), "Q");
    assert_string_equal(sources_of(f->set, "s", "p123"), "Q");
    /* the last row goes; the next document may get its number */
    put(f->set, "s", "{\"_recordid\":\"last\",\"_source\":\"L\"}");
    del_from(f->set, "last", NULL, 0, &kept);
    put(f->set, "s", "{\"_recordid\":\"next\"}");
    assert_string_equal(sources_of(f->set, "s", "next"), "");
    assert_string_equal(sources_of(f->set, "s", "last"), "-");
}

static void
test_index_upsert_idempotent(void **state)
{
    struct fixture *f = *state;
    json_t *doc = NULL;
    json_t *res = NULL;
    struct sl_err err;

    put(f->set,
        "docs",
        "{\"_recordid\":\"a\",\"title\":\"A\",\"text\":\"alpha\"}");
    put(f->set,
        "docs",
        "{\"_recordid\":\"a\",\"title\":\"A\",\"text\":\"alpha\"}");
    assert_int_equal(count(f->set, "docs"), 1);
    /* Update: the old text is no longer found, the new one is. */
    put(f->set,
        "docs",
        "{\"_recordid\":\"a\",\"title\":\"A2\",\"text\":\"beta\"}");
    assert_int_equal(count(f->set, "docs"), 1);
    res = search(f->set, "docs", "alpha");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 0);
    json_decref(res);
    res = search(f->set, "docs", "beta");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    json_decref(res);
    assert_int_equal(sl_index_get(f->set, "docs", "a", &doc, &err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "title")), "A2");
    assert_string_equal(json_string_value(json_object_get(doc, "text")),
                        "beta");
    json_decref(doc);

    assert_int_equal(sl_index_delete(f->set, "docs", "a", &err), 0);
    assert_int_equal(sl_index_delete(f->set, "docs", "a", &err), 0);
    assert_int_equal(sl_index_delete(f->set, "nosuch", "a", &err), 0);
    assert_int_equal(count(f->set, "docs"), 0);
    assert_int_equal(sl_index_get(f->set, "docs", "a", &doc, &err), SL_ENOENT);
    res = search(f->set, "docs", "beta");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 0);
    json_decref(res);
}

static void
test_index_bad_input(void **state)
{
    struct fixture *f = *state;
    json_t *doc = json_pack("{s:s}", "title", "no id");
    json_t *out = NULL;
    uint64_t n = 0;
    struct sl_err err;

    assert_int_equal(sl_index_upsert(f->set, "docs", doc, &err), SL_EINVAL);
    json_decref(doc);
    doc = json_pack("{s:s, s:i}", "_recordid", "x", "text", 5);
    assert_int_equal(sl_index_upsert(f->set, "docs", doc, &err), SL_EINVAL);
    assert_string_equal(err.field, "text");
    json_decref(doc);
    doc = json_pack("{s:s}", "_recordid", "x");
    assert_int_equal(sl_index_upsert(f->set, "bad/name", doc, &err),
                     SL_EBADNAME);
    json_decref(doc);
    assert_int_equal(sl_index_count(f->set, "nosuch", &n, &err), SL_ENOENT);
    assert_int_equal(sl_index_search(f->set, "nosuch", "x", 10, 0, &out, &err),
                     SL_ENOENT);
}

static void
test_index_batch(void **state)
{
    struct fixture *f = *state;
    json_t *a = json_pack("{s:s, s:s}", "_recordid", "a", "text", "one");
    json_t *b = json_pack("{s:s, s:s}", "_recordid", "b", "text", "two");
    json_t *bad = json_pack("{s:s}", "text", "no id");
    struct sl_index_op ops[3];
    struct sl_err err;
    uint64_t n = 0;

    memset(ops, 0, sizeof(ops));
    ops[0].doc = a;
    ops[1].doc = b;
    ops[2].doc = bad;
    /* All or nothing: the third op fails, nothing is written on any
     * shard; the index is not even created. */
    assert_int_equal(sl_index_apply(f->set, "docs", ops, 3, &err), SL_EINVAL);
    assert_string_equal(err.field, "ops[2]");
    assert_int_equal(sl_index_count(f->set, "docs", &n, NULL), SL_ENOENT);
    put(f->set, "docs", "{\"_recordid\":\"other\"}");
    assert_int_equal(sl_index_apply(f->set, "docs", ops, 3, &err), SL_EINVAL);
    assert_int_equal(count(f->set, "docs"), 1);
    assert_int_equal(sl_index_delete(f->set, "docs", "other", &err), 0);
    ops[2].doc = NULL;
    ops[2].id = "a";
    assert_int_equal(sl_index_apply(f->set, "docs", ops, 3, &err), 0);
    assert_int_equal(count(f->set, "docs"), 1);
    json_decref(a);
    json_decref(b);
    json_decref(bad);
}

/* Does @id exist in index "docs"? */
static int
exists(struct sl_index_set *set, const char *id)
{
    json_t *doc = NULL;
    struct sl_err err;
    int rc = sl_index_get(set, "docs", id, &doc, &err);

    json_decref(doc);
    return rc == 0;
}

/* Versioned writes arriving out of order: the newest version wins, also
 * over a delete (tombstone); unversioned writes always apply. */
static void
test_index_versions(void **state)
{
    struct fixture *f = *state;
    json_t *v5 = json_pack("{s:s, s:s}", "_recordid", "x", "text", "five");
    json_t *v6 = json_pack("{s:s, s:s}", "_recordid", "x", "text", "six");
    json_t *v8 = json_pack("{s:s, s:s}", "_recordid", "x", "text", "eight");
    json_t *doc = NULL;
    struct sl_index_op op;
    struct sl_err err;

    memset(&op, 0, sizeof(op));
    op.doc = v5;
    op.version = 5;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    /* an older delete is skipped */
    memset(&op, 0, sizeof(op));
    op.id = "x";
    op.version = 3;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 1);
    assert_true(exists(f->set, "x"));
    /* a newer delete applies and leaves a tombstone */
    op.version = 7;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    assert_false(exists(f->set, "x"));
    /* an add older than the tombstone is skipped */
    memset(&op, 0, sizeof(op));
    op.doc = v6;
    op.version = 6;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 1);
    assert_false(exists(f->set, "x"));
    /* a newer add applies */
    op.doc = v8;
    op.version = 8;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    assert_int_equal(sl_index_get(f->set, "docs", "x", &doc, &err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "text")),
                        "eight");
    json_decref(doc);
    /* the same version again (a retried task) applies, idempotently */
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    /* an older add is skipped; an unversioned one always applies */
    op.doc = v6;
    op.version = 6;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 1);
    op.version = 0;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    assert_int_equal(sl_index_get(f->set, "docs", "x", &doc, &err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "text")), "six");
    json_decref(doc);
    /* the add of version 8 removed the tombstone of version 7: after an
     * unversioned delete (which leaves none) an add of version 6 applies */
    memset(&op, 0, sizeof(op));
    op.id = "x";
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_false(exists(f->set, "x"));
    memset(&op, 0, sizeof(op));
    op.doc = v6;
    op.version = 6;
    assert_int_equal(sl_index_apply(f->set, "docs", &op, 1, &err), 0);
    assert_int_equal(op.skipped, 0);
    assert_true(exists(f->set, "x"));
    json_decref(v5);
    json_decref(v6);
    json_decref(v8);
}

static void
test_index_search_ranking(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    json_t *hit = NULL;
    struct sl_err err;

    put(f->set,
        "docs",
        "{\"_recordid\":\"/data/a.txt\",\"title\":\"Quarterly report\","
        "\"path\":\"/data/a.txt\",\"text\":\"The quarterly report shows "
        "growth in the northern region and a new warehouse.\"}");
    put(f->set,
        "docs",
        "{\"_recordid\":\"/data/b.txt\",\"title\":\"Lunch menu\","
        "\"text\":\"Soup, bread and a report about nothing much.\"}");
    put(f->set,
        "docs",
        "{\"_recordid\":\"/data/c.txt\",\"title\":\"Holidays\","
        "\"text\":\"Nothing to see here.\"}");
    res = search(f->set, "docs", "warehouse");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    hit = json_array_get(json_object_get(res, "hits"), 0);
    assert_string_equal(json_string_value(json_object_get(hit, "_recordid")),
                        "/data/a.txt");
    assert_string_equal(json_string_value(json_object_get(hit, "path")),
                        "/data/a.txt");
    assert_non_null(strstr(json_string_value(json_object_get(hit, "snippet")),
                           "<b>warehouse</b>"));
    assert_true(json_real_value(json_object_get(hit, "score")) > 0);
    json_decref(res);

    /* Both mention "report"; the one with it in the title ranks first. */
    res = search(f->set, "docs", "report");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 2);
    hit = json_array_get(json_object_get(res, "hits"), 0);
    assert_string_equal(json_string_value(json_object_get(hit, "_recordid")),
                        "/data/a.txt");
    json_decref(res);

    res = search(f->set, "docs", "title:lunch OR holidays");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 2);
    json_decref(res);
    res = search(f->set, "docs", "quarter*");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    json_decref(res);
    /* limit and offset page through the hits, total stays. */
    assert_int_equal(
        sl_index_search(f->set, "docs", "report", 1, 1, &res, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 2);
    assert_int_equal(json_array_size(json_object_get(res, "hits")), 1);
    hit = json_array_get(json_object_get(res, "hits"), 0);
    assert_string_equal(json_string_value(json_object_get(hit, "_recordid")),
                        "/data/b.txt");
    json_decref(res);
}

static void
test_index_unicode(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    json_t *doc = NULL;
    struct sl_err err;

    put(f->set,
        "docs",
        "{\"_recordid\":\"k\\u00f6ln\",\"title\":\"Gr\\u00fc\\u00dfe\","
        "\"text\":\"Viele Gr\\u00fc\\u00dfe aus K\\u00f6ln und ein Caf\\u00e9 "
        "\\u2603\"}");
    res = search(f->set, "docs", "köln");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    json_decref(res);
    res = search(f->set, "docs", "KÖLN");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    json_decref(res);
    res = search(f->set, "docs", "cafe"); /* diacritics removed */
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    json_decref(res);
    assert_int_equal(sl_index_get(f->set, "docs", "köln", &doc, &err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "title")),
                        "Grüße");
    json_decref(doc);
}

static void
test_index_malformed_query(void **state)
{
    struct fixture *f = *state;
    /* what the query language refuses (docs/index.md "Query
     * language"); "\"unterminated", "AND", "a OR" and "(a" are read */
    static const char *const bad[] = {
        "nosuchcolumn:x", "modified:yesterday", "size:big", "++", ""};
    json_t *out = NULL;
    struct sl_err err;
    size_t i = 0;

    put(f->set, "docs", "{\"_recordid\":\"a\",\"text\":\"alpha\"}");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sl_err_clear(&err);
        assert_int_equal(
            sl_index_search(f->set, "docs", bad[i], 10, 0, &out, &err),
            SL_EINVAL);
        assert_null(out);
        assert_string_equal(err.field, "q");
        assert_true(strlen(err.message) > 0);
    }
    /* The index still works after the errors, and forgiving reads find
     * the document. */
    assert_int_equal(total(f->set, "docs", "alpha"), 1);
    assert_int_equal(total(f->set, "docs", "\"alpha"), 1);
    assert_int_equal(total(f->set, "docs", "(alpha"), 1);
    assert_int_equal(total(f->set, "docs", "alpha OR"), 1);
    assert_int_equal(total(f->set, "docs", "AND"), 0);
}

static void
test_index_records_paging(void **state)
{
    struct fixture *f = *state;
    static const char *const ids[] = {"b", "a", "/x", "B", "é", "a/b", "aa"};
    static const char *const sorted[] = {"/x", "B", "a", "a/b", "aa", "b", "é"};
    char json[128];
    const char *after = NULL;
    char *next = NULL;
    json_t *page = NULL;
    json_t *rec = NULL;
    size_t seen = 0;
    size_t i = 0;

    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        (void)snprintf(json,
                       sizeof(json),
                       "{\"_recordid\":\"%s\",\"text\":\"t %zu\"}",
                       ids[i],
                       i);
        put(f->set, "docs", json);
    }
    assert_int_equal(count(f->set, "docs"), 7);
    do {
        assert_int_equal(
            sl_index_records(f->set, "docs", after, 3, &page, NULL), 0);
        json_array_foreach(json_object_get(page, "records"), i, rec)
        {
            assert_true(seen < 7);
            assert_string_equal(
                json_string_value(json_object_get(rec, "_recordid")),
                sorted[seen]);
            assert_int_equal(
                strlen(json_string_value(json_object_get(rec, "textSha256"))),
                64);
            seen++;
        }
        sl_free(next);
        next = NULL;
        if (json_is_string(json_object_get(page, "next"))) {
            next = sl_strdup(json_string_value(json_object_get(page, "next")));
            assert_string_equal(next, sorted[seen - 1]);
        }
        after = next;
        json_decref(page);
    } while (after != NULL);
    assert_int_equal(seen, 7);
    /* Exactly a full last page: next is null. */
    assert_int_equal(sl_index_records(f->set, "docs", "aa", 2, &page, NULL), 0);
    assert_int_equal(json_array_size(json_object_get(page, "records")), 2);
    assert_true(json_is_null(json_object_get(page, "next")));
    json_decref(page);
}

static void
test_index_list_and_reopen(void **state)
{
    struct fixture *f = *state;
    json_t *list = NULL;
    json_t *doc = NULL;
    struct sl_err err;

    put(f->set, "zeta", "{\"_recordid\":\"1\",\"text\":\"z\"}");
    put(f->set, "alpha", "{\"_recordid\":\"1\",\"text\":\"a\"}");
    put(f->set, "alpha", "{\"_recordid\":\"2\",\"text\":\"persisted words\"}");
    sl_index_close(f->set);
    f->set = NULL;
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);
    assert_int_equal(sl_index_list(f->set, &list, &err), 0);
    assert_int_equal(json_array_size(list), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(list, 0), "name")),
        "alpha");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0),
                                                        "documentCount")),
                     2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 1),
                                                        "documentCount")),
                     1);
    json_decref(list);
    /* sizeBytes: an index's own files; "alpha.x" (a name with a dot) is
     * another index, not counted as alpha's */
    {
        json_int_t alpha = 0;
        json_int_t alpha_x = 0;

        put(f->set, "alpha.x", "{\"_recordid\":\"1\",\"text\":\"x\"}");
        assert_int_equal(sl_index_list(f->set, &list, &err), 0);
        assert_int_equal(json_array_size(list), 3);
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(list, 1), "name")),
            "alpha.x");
        alpha = json_integer_value(
            json_object_get(json_array_get(list, 0), "sizeBytes"));
        alpha_x = json_integer_value(
            json_object_get(json_array_get(list, 1), "sizeBytes"));
        assert_true(alpha > 0 && alpha_x > 0);
        json_decref(list);
        {
            /* the sum of alpha's shard files and logs, and nothing else */
            json_int_t want = 0;
            int k = 0;
            int wal = 0;

            for (k = 0; k < 16; k++) {
                for (wal = 0; wal < 2; wal++) {
                    struct stat st;
                    char *path = k == 0 ? sl_asprintf("%s/alpha.db%s",
                                                      f->dir,
                                                      wal ? "-wal" : "")
                                        : sl_asprintf("%s/alpha~%d.db%s",
                                                      f->dir,
                                                      k,
                                                      wal ? "-wal" : "");

                    if (stat(path, &st) == 0) {
                        want += (json_int_t)st.st_size;
                    }
                    sl_free(path);
                }
            }
            assert_int_equal(alpha, want);
        }
    }
    doc = search(f->set, "alpha", "persisted");
    assert_int_equal(json_integer_value(json_object_get(doc, "total")), 1);
    json_decref(doc);
}

#define MT_DOCS 200

struct mt_arg {
    struct sl_index_set *set;
    int t;
    int errors;
};

static void *
mt_writer(void *p)
{
    struct mt_arg *a = p;
    struct sl_err err;
    char id[32];
    int i = 0;

    for (i = 0; i < MT_DOCS; i++) {
        json_t *doc = NULL;

        (void)snprintf(id, sizeof(id), "t%d/%d", a->t, i);
        doc = json_pack(
            "{s:s, s:s}", "_recordid", id, "text", i % 2 ? "odd" : "even");
        if (sl_index_upsert(a->set, "mt", doc, &err) != 0) {
            a->errors++;
        }
        json_decref(doc);
        if (i % 10 == 0 &&
            sl_index_count(a->set, "mt", &(uint64_t){0}, &err) != 0) {
            a->errors++;
        }
    }
    return NULL;
}

static void
test_index_concurrent_upserts(void **state)
{
    struct fixture *f = *state;
    struct mt_arg args[2];
    pthread_t th[2];
    json_t *res = NULL;
    int i = 0;

    for (i = 0; i < 2; i++) {
        args[i].set = f->set;
        args[i].t = i;
        args[i].errors = 0;
        assert_int_equal(pthread_create(&th[i], NULL, mt_writer, &args[i]), 0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].errors, 0);
    }
    assert_int_equal(count(f->set, "mt"), 2 * MT_DOCS);
    res = search(f->set, "mt", "odd");
    assert_int_equal(json_integer_value(json_object_get(res, "total")),
                     MT_DOCS);
    json_decref(res);
}

/*
 * The FTS table follows every kind of write (the index maintains it
 * itself since schema 3): new, changed text, changed title only, changed
 * metadata only, unchanged, deleted, deleted and added again in one
 * batch; FTS5's integrity check agrees with the content table after each
 * step, and a planted mismatch is caught by it (the check can fail).
 */
static void
test_index_fts_in_step(void **state)
{
    struct fixture *f = *state;
    struct sl_index_op ops[4];
    json_t *d[3];
    char path[600];
    sqlite3 *db = NULL;
    struct sl_err err;
    int i = 0;

    for (i = 0; i < 20; i++) {
        char json[128];

        (void)snprintf(json,
                       sizeof(json),
                       "{\"_recordid\":\"r%02d\",\"title\":\"t%d\","
                       "\"text\":\"common w%d\",\"path\":\"/p/%d\"}",
                       i,
                       i,
                       i,
                       i);
        put(f->set, "fts", json);
    }
    assert_int_equal(fts_integrity(f->dir, "fts"), SQLITE_OK);
    assert_int_equal(total(f->set, "fts", "common"), 20);
    /* text, title, metadata only, unchanged */
    put(f->set,
        "fts",
        "{\"_recordid\":\"r01\",\"title\":\"t1\",\"text\":\"fresh\","
        "\"path\":\"/p/1\"}");
    put(f->set,
        "fts",
        "{\"_recordid\":\"r02\",\"title\":\"renamed\",\"text\":\"common w2\","
        "\"path\":\"/p/2\"}");
    put(f->set,
        "fts",
        "{\"_recordid\":\"r03\",\"title\":\"t3\",\"text\":\"common w3\","
        "\"path\":\"/p/3\",\"size\":7}");
    put(f->set,
        "fts",
        "{\"_recordid\":\"r04\",\"title\":\"t4\",\"text\":\"common w4\","
        "\"path\":\"/p/4\"}");
    assert_int_equal(fts_integrity(f->dir, "fts"), SQLITE_OK);
    assert_int_equal(total(f->set, "fts", "common"), 19);
    assert_int_equal(total(f->set, "fts", "w1"), 0);
    assert_int_equal(total(f->set, "fts", "fresh"), 1);
    assert_int_equal(total(f->set, "fts", "t2"), 0);
    assert_int_equal(total(f->set, "fts", "renamed"), 1);
    /* one batch: delete r05, add it again with new text, delete r06,
     * update r07 */
    d[0] = json_pack("{s:s, s:s}", "_recordid", "r05", "text", "again");
    d[1] = json_pack("{s:s, s:s}", "_recordid", "r07", "text", "seven");
    memset(ops, 0, sizeof(ops));
    ops[0].id = "r05";
    ops[1].doc = d[0];
    ops[2].id = "r06";
    ops[3].doc = d[1];
    assert_int_equal(sl_index_apply(f->set, "fts", ops, 4, &err), 0);
    json_decref(d[0]);
    json_decref(d[1]);
    assert_int_equal(fts_integrity(f->dir, "fts"), SQLITE_OK);
    assert_int_equal(count(f->set, "fts"), 19);
    assert_int_equal(total(f->set, "fts", "common"), 16);
    assert_int_equal(total(f->set, "fts", "again"), 1);
    assert_int_equal(total(f->set, "fts", "w6"), 0);
    /* the check can fail: a content row the FTS table does not know (r09
     * is on one of the two shards; the other has no such row) */
    for (i = 0; i < 2; i++) {
        if (i == 0) {
            (void)snprintf(path, sizeof(path), "%s/fts.db", f->dir);
        } else {
            (void)snprintf(path, sizeof(path), "%s/fts~1.db", f->dir);
        }
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sl__index_text_functions(db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db,
                                      "UPDATE docs SET text_z ="
                                      " CAST('Tplanted' AS BLOB)"
                                      " WHERE _recordid = 'r09'",
                                      NULL,
                                      NULL,
                                      NULL),
                         SQLITE_OK);
        (void)sqlite3_close(db);
    }
    assert_int_not_equal(fts_integrity(f->dir, "fts"), SQLITE_OK);
}

/* A schema 2 database (FTS kept in step by triggers) is migrated at open:
 * the triggers go, the documents stay searchable and writable. */
static void
test_index_migrate_schema2(void **state)
{
    struct fixture *f = *state;
    char path[600];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct sl_err err;

    (void)snprintf(path, sizeof(path), "%s/old.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(
            db,
            INDEX_TABLES_V2_SQL
            "CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN"
            " INSERT INTO documents_fts(rowid, title, text, path)"
            " VALUES (new.id, new.title, new.text, new.path); END;"
            "CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN"
            " INSERT INTO documents_fts(documents_fts, rowid, title, text,"
            " path) VALUES ('delete', old.id, old.title, old.text, old.path);"
            " END;"
            "INSERT INTO documents(_recordid, title, text, source,"
            " text_sha256, meta)"
            " VALUES ('old1', 'Old', 'legacy words', 'srcOld', 'x', '{}');"
            "PRAGMA user_version=2;",
            NULL,
            NULL,
            NULL),
        SQLITE_OK);
    (void)sqlite3_close(db);
    assert_int_equal(total(f->set, "old", "legacy"), 1);
    /* schema 4: the source column became the document's one source */
    assert_string_equal(sources_of(f->set, "old", "old1"), "srcOld");
    put(f->set, "old", "{\"_recordid\":\"old1\",\"text\":\"renewed\"}");
    assert_int_equal(total(f->set, "old", "legacy"), 0);
    assert_int_equal(total(f->set, "old", "renewed"), 1);
    assert_int_equal(sl_index_delete(f->set, "old", "old1", &err), 0);
    assert_int_equal(total(f->set, "old", "renewed"), 0);
    assert_int_equal(fts_integrity(f->dir, "old"), SQLITE_OK);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT count(*) FROM"
                                        " sqlite_master WHERE type ="
                                        " 'trigger'), (SELECT user_version"
                                        " FROM pragma_user_version)",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    assert_int_equal(sqlite3_column_int(st, 1), 11); /* the current schema */
    (void)sqlite3_finalize(st);
    (void)sqlite3_close(db);
}

/* Documents in one shard database file of index @name (-1: no file). */
static int64_t
shard_docs(const char *dir, const char *file)
{
    char path[600];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct stat sb;
    int64_t n = -1;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (stat(path, &sb) != 0) {
        return -1;
    }
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*) FROM docs", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    n = sqlite3_column_int64(st, 0);
    (void)sqlite3_finalize(st);
    (void)sqlite3_close(db);
    return n;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* PRAGMA page_size of the database file @file in @dir. */
static int
page_size(const char *dir, const char *file)
{
    char path[600];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = 0;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, file);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    n = sqlite3_column_int(st, 0);
    (void)sqlite3_finalize(st);
    (void)sqlite3_close(db);
    return n;
}

/*
 * A new index's shards use 16 KiB pages (a document row of a few KiB fits
 * one page); a database created with SQLite's default 4 KiB pages keeps
 * them and is written and searched as before.
 */
static void
test_index_page_size(void **state)
{
    struct fixture *f = *state;
    char path[600];
    sqlite3 *db = NULL;

    int i = 0;

    for (i = 0; i < 8; i++) { /* both shards get some */
        char doc[64];

        (void)snprintf(
            doc, sizeof(doc), "{\"_recordid\":\"d%d\",\"text\":\"alpha\"}", i);
        put(f->set, "fresh", doc);
    }
    assert_int_equal(
        shard_docs(f->dir, "fresh.db") + shard_docs(f->dir, "fresh~1.db"), 8);
    assert_int_equal(page_size(f->dir, "fresh.db"), 16384);
    assert_int_equal(page_size(f->dir, "fresh~1.db"), 16384);

    (void)snprintf(path, sizeof(path), "%s/small.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "CREATE TABLE t(x);DROP TABLE t;", NULL, NULL, NULL),
        SQLITE_OK);
    (void)sqlite3_close(db);
    assert_int_equal(page_size(f->dir, "small.db"), 4096);
    put(f->set, "small", "{\"_recordid\":\"b\",\"text\":\"beta words\"}");
    assert_int_equal(page_size(f->dir, "small.db"), 4096);
    assert_int_equal(total(f->set, "small", "beta"), 1);
    assert_int_equal(fts_integrity(f->dir, "small"), SQLITE_OK);
}

/*
 * Shards: documents spread over both databases of a new index; reads
 * merge them: the count adds up, record pages (7 at a time) give every id
 * once in byte order, search pages concatenate to the whole hit list in
 * score order with no id twice, and every document is found by id.  The
 * shard count is fixed at creation: an index made with 1 shard keeps one.
 */
#define SH_DOCS 61
static void
test_index_shards(void **state)
{
    struct fixture *f = *state;
    char *ids[SH_DOCS];
    json_t *seen = json_object();
    json_t *page = NULL;
    json_t *res = NULL;
    char *after = NULL;
    double last = 1e300;
    size_t got = 0;
    int64_t in0 = 0;
    int64_t in1 = 0;
    int i = 0;

    for (i = 0; i < SH_DOCS; i++) {
        char json[200];
        int k = 0;

        ids[i] = sl_asprintf("/data/doc-%03d", (i * 37) % SH_DOCS);
        /* "shared" once or more: different scores */
        (void)snprintf(
            json, sizeof(json), "{\"_recordid\":\"%s\",\"text\":\"", ids[i]);
        for (k = 0; k <= i % 5; k++) {
            (void)strncat(json, "shared ", sizeof(json) - strlen(json) - 1);
        }
        (void)strncat(json, "filler words\"}", sizeof(json) - strlen(json) - 1);
        put(f->set, "sh", json);
    }
    qsort(ids, SH_DOCS, sizeof(*ids), cmp_str);
    in0 = shard_docs(f->dir, "sh.db");
    in1 = shard_docs(f->dir, "sh~1.db");
    assert_true(in0 > 0 && in1 > 0);
    assert_int_equal(in0 + in1, SH_DOCS);
    assert_int_equal(count(f->set, "sh"), SH_DOCS);
    /* records: 7 per page, byte order, each once */
    for (;;) {
        struct sl_err err;
        json_t *r = NULL;
        size_t j = 0;

        assert_int_equal(sl_index_records(f->set, "sh", after, 7, &page, &err),
                         0);
        json_array_foreach(json_object_get(page, "records"), j, r)
        {
            assert_true(got < SH_DOCS);
            assert_string_equal(
                json_string_value(json_object_get(r, "_recordid")), ids[got]);
            got++;
        }
        sl_free(after);
        after = NULL;
        if (json_is_string(json_object_get(page, "next"))) {
            after = sl_strdup(json_string_value(json_object_get(page, "next")));
        }
        json_decref(page);
        if (after == NULL) {
            break;
        }
    }
    assert_int_equal(got, SH_DOCS);
    /* search pages of 10: whole list, score order, no id twice */
    got = 0;
    for (i = 0; i < 8; i++) {
        struct sl_err err;
        json_t *h = NULL;
        size_t j = 0;

        assert_int_equal(
            sl_index_search(f->set, "sh", "shared", 10, 10 * i, &res, &err), 0);
        assert_int_equal(json_integer_value(json_object_get(res, "total")),
                         SH_DOCS);
        json_array_foreach(json_object_get(res, "hits"), j, h)
        {
            double sc = json_real_value(json_object_get(h, "score"));
            const char *id = json_string_value(json_object_get(h, "_recordid"));

            assert_true(sc <= last);
            last = sc;
            assert_null(json_object_get(seen, id));
            (void)json_object_set_new(seen, id, json_true());
            got++;
        }
        json_decref(res);
    }
    assert_int_equal(got, SH_DOCS);
    for (i = 0; i < SH_DOCS; i++) {
        json_t *doc = NULL;
        struct sl_err err;

        assert_int_equal(sl_index_get(f->set, "sh", ids[i], &doc, &err), 0);
        json_decref(doc);
        sl_free(ids[i]);
    }
    json_decref(seen);
    assert_int_equal(fts_integrity(f->dir, "sh"), SQLITE_OK);
    /* one shard's ops: applied there; an op of another shard refused */
    {
        json_t *d = json_pack("{s:s, s:s}", "_recordid", "/x/1", "text", "t");
        struct sl_index_op op;
        struct sl_err err;
        unsigned nsh = 0;
        unsigned s1 = 0;

        assert_int_equal(sl_index_shards(f->set, "sh", 0, &nsh, &err), 0);
        assert_int_equal(nsh, 2);
        s1 = sl_index_shard_of("/x/1", nsh);
        memset(&op, 0, sizeof(op));
        op.doc = d;
        assert_int_equal(
            sl_index_apply_shard(f->set, "sh", 1 - s1, &op, 1, 0, &err),
            SL_EINVAL);
        assert_int_equal(count(f->set, "sh"), SH_DOCS);
        assert_int_equal(
            sl_index_apply_shard(f->set, "sh", s1, &op, 1, 1, &err), 0);
        assert_int_equal(count(f->set, "sh"), SH_DOCS + 1);
        json_decref(d);
        assert_int_equal(sl_index_shards(f->set, "nosuch", 0, &nsh, &err),
                         SL_ENOENT);
    }
    /* fixed at creation */
    assert_int_equal(sl_index_set_shards(f->set, 0), SL_EINVAL);
    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    put(f->set, "one", "{\"_recordid\":\"a\",\"text\":\"x\"}");
    put(f->set, "one", "{\"_recordid\":\"b\",\"text\":\"x\"}");
    put(f->set, "one", "{\"_recordid\":\"c\",\"text\":\"x\"}");
    assert_int_equal(sl_index_set_shards(f->set, 3), 0);
    put(f->set, "one", "{\"_recordid\":\"d\",\"text\":\"x\"}");
    assert_int_equal(shard_docs(f->dir, "one.db"), 4);
    assert_int_equal(shard_docs(f->dir, "one~1.db"), -1);
    put(f->set, "three", "{\"_recordid\":\"a\",\"text\":\"x\"}");
    assert_int_equal(count(f->set, "three"), 1);
    assert_int_equal(shard_docs(f->dir, "three.db") +
                         shard_docs(f->dir, "three~1.db") +
                         shard_docs(f->dir, "three~2.db"),
                     1);
    assert_int_equal(shard_docs(f->dir, "three~3.db"), -1);
    res = NULL;
    {
        struct sl_err err;

        assert_int_equal(sl_index_list(f->set, &res, &err), 0);
        /* shard files are not listed as indexes */
        assert_int_equal(json_array_size(res), 3);
        json_decref(res);
    }
}

/* Queries of test_index_read_while_writing, in a thread of their own. */
struct reader_arg {
    struct sl_index_set *set;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int rc;
    uint64_t count;
    json_int_t total;
    int got_doc;
};

static void *
reader_main(void *p)
{
    struct reader_arg *a = p;
    json_t *res = NULL;
    json_t *doc = NULL;
    int rc = sl_index_count(a->set, "docs", &a->count, NULL);

    if (rc == 0) {
        rc = sl_index_search(a->set, "docs", "gamma", 10, 0, &res, NULL);
    }
    if (rc == 0) {
        a->total = json_integer_value(json_object_get(res, "total"));
        rc = sl_index_get(a->set, "docs", "c", &doc, NULL);
        a->got_doc = doc != NULL;
    }
    json_decref(res);
    json_decref(doc);
    (void)pthread_mutex_lock(&a->mu);
    a->rc = rc;
    a->done = 1;
    (void)pthread_cond_signal(&a->cv);
    (void)pthread_mutex_unlock(&a->mu);
    return NULL;
}

/*
 * A query does not wait for a writer: with a write transaction open on
 * shard 0 (the writer's lock held, an uncommitted row in it), a count, a
 * search and a get in another thread finish and see the committed state
 * only.  Before queries had a connection of their own they waited for
 * the writer's lock (this test then fails after 10 s).
 */
static void
test_index_read_while_writing(void **state)
{
    struct fixture *f = *state;
    struct reader_arg a;
    struct sl__index *ix = NULL;
    struct timespec until;
    pthread_t th;
    struct sl_err err;
    unsigned s = 0;
    int rc = 0;

    memset(&a, 0, sizeof(a));
    a.set = f->set;
    (void)pthread_mutex_init(&a.mu, NULL);
    (void)pthread_cond_init(&a.cv, NULL);
    put(f->set, "docs", "{\"_recordid\":\"c\",\"text\":\"gamma one\"}");
    put(f->set, "docs", "{\"_recordid\":\"d\",\"text\":\"gamma two\"}");
    assert_int_equal(sl_index_shards(f->set, "docs", 0, &s, NULL), 0);
    s = sl_index_shard_of("c", s);
    sl_err_clear(&err);
    assert_int_equal(sl__index_acquire(f->set, "docs", s, 0, 0, &ix, &err), 0);
    assert_int_equal(
        sqlite3_exec(ix->db,
                     "BEGIN IMMEDIATE; INSERT INTO docs(_recordid, text_z,"
                     " text_sha256, meta) VALUES ('u', CAST('Tgamma' AS BLOB),"
                     " 'x', '{}');"
                     " INSERT INTO documents_fts(rowid, title, text, path)"
                     " VALUES (last_insert_rowid(), '', 'gamma', '');",
                     NULL,
                     NULL,
                     NULL),
        SQLITE_OK);
    assert_int_equal(pthread_create(&th, NULL, reader_main, &a), 0);
    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    (void)pthread_mutex_lock(&a.mu);
    while (!a.done && rc == 0) {
        rc = pthread_cond_timedwait(&a.cv, &a.mu, &until);
    }
    (void)pthread_mutex_unlock(&a.mu);
    /* let a waiting reader go before asserting, so the test never hangs */
    (void)sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
    sl__index_release(ix);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(rc, 0); /* not timed out: the queries did not wait */
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.count, 2); /* the uncommitted row is not seen */
    assert_int_equal(a.total, 2); /* nor found */
    assert_true(a.got_doc);
    assert_int_equal(count(f->set, "docs"), 2);
    (void)pthread_cond_destroy(&a.cv);
    (void)pthread_mutex_destroy(&a.mu);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_index_upsert_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_sources_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_search_ranking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_unicode, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_malformed_query, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_records_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_list_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_concurrent_upserts, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_fts_in_step, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_migrate_schema2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_page_size, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_index_read_while_writing, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
