/*
 * Set-up shared by the embedded index unit tests (test_index,
 * test_index_drop, test_index_meta): each test gets an index set opened
 * on a fresh directory under $TMPDIR.  A test file defines its setup as a
 * call of index_setup with its own directory prefix; teardown is this
 * one.  Also the helpers the index tests share.  Include after cmocka.h.
 */
#ifndef SL_TESTS_INDEX_FIXTURE_H
#define SL_TESTS_INDEX_FIXTURE_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>
#include <sys/stat.h>

#include "index/index.h"
#include "index/index_int.h" /* sl__index_text_functions */
#include "tmpdir.h"

struct fixture {
    char dir[512];
    struct sl_index_set *set;
};

/* The fixture in *state: sl_index_open on the directory
 * "<$TMPDIR>/<@prefix>XXXXXX". */
static inline int
index_setup(void **state, const char *prefix)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), prefix));
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);
    *state = f;
    return 0;
}

/* Close the set, remove the directory, free the fixture. */
static inline int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_index_close(f->set);
    (void)tmpdir_remove(f->dir);
    sl_free(f);
    return 0;
}

/* The documents of @index. */
static inline uint64_t
count(struct sl_index_set *set, const char *index)
{
    uint64_t n = 0;

    assert_int_equal(sl_index_count(set, index, &n, NULL), 0);
    return n;
}

/* The search result of @q in @index, at most 10 hits (caller decrefs). */
static inline json_t *
search(struct sl_index_set *set, const char *index, const char *q)
{
    json_t *out = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_index_search(set, index, q, 10, 0, &out, &err) != 0) {
        fail_msg("search %s: %s", q, err.message);
    }
    return out;
}

/* One integer of @sql on the (single shard) database of index @name,
 * read without the index's SQL functions; -1 when it gives no row. */
static inline int64_t
db_int(const char *dir, const char *name, const char *sql)
{
    char path[600];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;

    (void)snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    (void)sqlite3_finalize(st);
    (void)sqlite3_close(db);
    return v;
}

/* The total hits of @q in @index. */
static inline int64_t
total(struct sl_index_set *set, const char *index, const char *q)
{
    json_t *res = search(set, index, q);
    int64_t n = json_integer_value(json_object_get(res, "total"));

    json_decref(res);
    return n;
}

/* Run FTS5's integrity check (which also compares the index with the
 * content table, the text unpacked) on every shard database of index
 * @name; the first failure's result code. */
static inline int
fts_integrity(const char *dir, const char *name)
{
    char path[600];
    sqlite3 *db = NULL;
    struct stat sb;
    int src = SQLITE_OK;
    int k = 0;

    for (k = 0; src == SQLITE_OK; k++) {
        if (k == 0) {
            (void)snprintf(path, sizeof(path), "%s/%s.db", dir, name);
        } else {
            (void)snprintf(path, sizeof(path), "%s/%s~%d.db", dir, name, k);
        }
        if (stat(path, &sb) != 0) {
            break;
        }
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        /* the FTS table reads the text through sl_text_unpack */
        assert_int_equal(sl__index_text_functions(db), SQLITE_OK);
        src = sqlite3_exec(db,
                           "INSERT INTO documents_fts(documents_fts, rank)"
                           " VALUES('integrity-check', 1)",
                           NULL,
                           NULL,
                           NULL);
        (void)sqlite3_close(db);
    }
    return src;
}

/* The tables documents, tombstones and documents_fts as schemas 2 to 4
 * created them, for the migration tests. */
#define INDEX_TABLES_V2_SQL                                                    \
    "CREATE TABLE documents(id INTEGER PRIMARY KEY,"                           \
    " _recordid TEXT NOT NULL UNIQUE COLLATE BINARY,"                          \
    " title TEXT, text TEXT, path TEXT, mime TEXT, size INTEGER,"              \
    " modified TEXT, source TEXT, compound_id TEXT,"                           \
    " text_sha256 TEXT NOT NULL, meta TEXT NOT NULL,"                          \
    " version INTEGER NOT NULL DEFAULT 0);"                                    \
    "CREATE TABLE tombstones(_recordid TEXT PRIMARY KEY COLLATE BINARY,"       \
    " version INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"           \
    "CREATE VIRTUAL TABLE documents_fts USING fts5(title, text, path,"         \
    " content='documents', content_rowid='id',"                                \
    " tokenize='unicode61 remove_diacritics 2');"

#endif /* SL_TESTS_INDEX_FIXTURE_H */
