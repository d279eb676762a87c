/*
 * Unit tests of the documents' stored text in the embedded index (schema
 * 7, index/textpack.c): the text is stored packed and read back as it
 * was, by a get, in a snippet and when a changed document's old terms
 * leave the FTS table; a schema 6 database is packed at open with its FTS
 * table untouched; a damaged packed value is an error naming it, not a
 * crash or a wrong text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "index/index.h"
#include "index_fixture.h"

static int
setup(void **state)
{
    return index_setup(state, "test_index_text.");
}

/* Prose of about @n bytes in @buf: a sentence repeated with a counter, as
 * compressible as real text, and the word "needle" in the middle. */
static void
prose(char *buf, size_t n)
{
    size_t len = 0;
    int i = 0;

    buf[0] = '\0';
    for (i = 0; len + 96 < n; i++) {
        len += (size_t)snprintf(buf + len,
                                n - len,
                                "%s the river carries sediment %d down to the "
                                "delta where it settles. ",
                                i == 20 ? "needle" : "Slowly",
                                i);
    }
}

/* An upsert of @id with @text (NULL: no text field); asserts success. */
static void
put_text(struct sl_index_set *set,
         const char *index,
         const char *id,
         const char *text)
{
    json_t *doc = json_pack("{s:s, s:s}", "_recordid", id, "title", "T");
    struct sl_err err;

    if (text != NULL) {
        (void)json_object_set_new(doc, "text", json_string(text));
    }
    sl_err_clear(&err);
    if (sl_index_upsert(set, index, doc, &err) != 0) {
        fail_msg("upsert %s: %s", id, err.message);
    }
    json_decref(doc);
}

/* The text sl_index_get gives for @id (a static copy; "(none)" when the
 * document has no text). */
static const char *
get_text(struct sl_index_set *set, const char *index, const char *id)
{
    static char out[16384];
    json_t *doc = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_index_get(set, index, id, &doc, &err) != 0) {
        fail_msg("get %s: %s", id, err.message);
    }
    (void)snprintf(out,
                   sizeof(out),
                   "%s",
                   json_is_string(json_object_get(doc, "text"))
                       ? json_string_value(json_object_get(doc, "text"))
                       : "(none)");
    json_decref(doc);
    return out;
}

/* The first byte of doc @id's text_z as a character ('Z', 'T'), or 'N'
 * for NULL. */
static int
kind_of(const char *dir, const char *id)
{
    char sql[256];

    (void)snprintf(sql,
                   sizeof(sql),
                   "SELECT coalesce(unicode(CAST(substr(text_z, 1, 1) AS"
                   " TEXT)), unicode('N')) FROM docs WHERE _recordid = '%s'",
                   id);
    return (int)db_int(dir, "p", sql);
}

/*
 * Long prose is stored compressed ('Z', well under half its length), a
 * short text as it is ('T'), no text as NULL; each reads back as it was,
 * a search snippet highlights inside the compressed text, a changed text
 * replaces the old terms (the FTS delete reads the old text unpacked) and
 * FTS5's integrity check agrees throughout.
 */
static void
test_text_packed(void **state)
{
    struct fixture *f = *state;
    static char long_text[8192];
    static char changed[8192];
    struct sl_err err;
    json_t *hits = NULL;
    const char *snip = NULL;

    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    prose(long_text, sizeof(long_text));
    put_text(f->set, "p", "long", long_text);
    put_text(f->set, "p", "short", "tiny words");
    put_text(f->set, "p", "empty", "");
    put_text(f->set, "p", "none", NULL);

    assert_string_equal(get_text(f->set, "p", "long"), long_text);
    assert_string_equal(get_text(f->set, "p", "short"), "tiny words");
    assert_string_equal(get_text(f->set, "p", "empty"), "");
    assert_string_equal(get_text(f->set, "p", "none"), "(none)");
    assert_int_equal(kind_of(f->dir, "long"), 'Z');
    assert_int_equal(kind_of(f->dir, "short"), 'T');
    assert_int_equal(kind_of(f->dir, "empty"), 'T');
    assert_int_equal(kind_of(f->dir, "none"), 'N');
    assert_true(db_int(f->dir,
                       "p",
                       "SELECT length(text_z) FROM docs"
                       " WHERE _recordid = 'long'") <
                (int64_t)strlen(long_text) / 2);

    hits = search(f->set, "p", "needle");
    assert_int_equal(json_array_size(json_object_get(hits, "hits")), 1);
    snip = json_string_value(json_object_get(
        json_array_get(json_object_get(hits, "hits"), 0), "snippet"));
    assert_non_null(snip);
    assert_non_null(strstr(snip, "<b>needle</b>"));
    json_decref(hits);
    assert_int_equal(fts_integrity(f->dir, "p"), SQLITE_OK);

    /* a changed text: the old terms leave, the new are found */
    (void)snprintf(changed, sizeof(changed), "%s", long_text);
    memcpy(strstr(changed, "needle"), "pebble", 6);
    put_text(f->set, "p", "long", changed);
    assert_int_equal(total(f->set, "p", "needle"), 0);
    assert_int_equal(total(f->set, "p", "pebble"), 1);
    assert_string_equal(get_text(f->set, "p", "long"), changed);
    assert_int_equal(fts_integrity(f->dir, "p"), SQLITE_OK);

    /* the same again writes nothing (compared by the text's SHA-256) */
    put_text(f->set, "p", "long", changed);
    assert_int_equal(total(f->set, "p", "pebble"), 1);
    /* text removed, then deleted: nothing of it stays searchable */
    put_text(f->set, "p", "long", NULL);
    assert_int_equal(total(f->set, "p", "pebble"), 0);
    assert_string_equal(get_text(f->set, "p", "long"), "(none)");
    assert_int_equal(sl_index_delete(f->set, "p", "short", &err), 0);
    assert_int_equal(total(f->set, "p", "tiny"), 0);
    assert_int_equal(fts_integrity(f->dir, "p"), SQLITE_OK);
}

/* The tables of schema 6 as the index wrote them (the text as it is). */
static const char schema6_sql[] =
    "PRAGMA page_size=16384;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE documents(id INTEGER PRIMARY KEY,"
    " _recordid TEXT NOT NULL UNIQUE COLLATE BINARY,"
    " title TEXT, text TEXT, path TEXT, mime TEXT, size INTEGER,"
    " modified TEXT, source TEXT, compound_id TEXT,"
    " text_sha256 TEXT NOT NULL, meta TEXT NOT NULL,"
    " version INTEGER NOT NULL DEFAULT 0,"
    " author TEXT, created TEXT, pages INTEGER);"
    "CREATE TABLE tombstones(_recordid TEXT PRIMARY KEY COLLATE BINARY,"
    " version INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE VIRTUAL TABLE documents_fts USING fts5("
    " title, text, path, author, content='documents', content_rowid='id',"
    " tokenize='unicode61 remove_diacritics 2');"
    "CREATE TABLE settings(key TEXT PRIMARY KEY,"
    " value INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO settings VALUES('shards', 1);"
    "CREATE TABLE doc_sources(doc INTEGER NOT NULL,"
    " source TEXT NOT NULL COLLATE BINARY,"
    " PRIMARY KEY(doc, source)) WITHOUT ROWID;"
    "CREATE INDEX doc_sources_by_source ON doc_sources(source, doc);";

/*
 * A schema 6 database is packed at open: the same rows with their rowids,
 * the FTS table as it was (its integrity check agrees with the packed
 * text), the texts read back as they were, the sources kept; then it is
 * written as any other.
 */
static void
test_text_migrate6(void **state)
{
    struct fixture *f = *state;
    static char long_text[8192];
    char path[600];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct sl_err err;

    prose(long_text, sizeof(long_text));
    (void)snprintf(path, sizeof(path), "%s/p.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema6_sql, NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO documents(id, _recordid, title, text,"
                           " text_sha256, meta) VALUES (?1, ?2, 'T', ?3, ?4,"
                           " '{\"title\":\"T\"}')",
                           -1,
                           &st,
                           NULL),
        SQLITE_OK);
    {
        const char *ids[] = {"long", "short", "none"};
        const char *texts[] = {long_text, "tiny words", NULL};
        char hex[65];
        int i = 0;

        for (i = 0; i < 3; i++) {
            sl_sha256_hex(texts[i] != NULL ? texts[i] : "",
                          texts[i] != NULL ? strlen(texts[i]) : 0,
                          hex);
            (void)sqlite3_bind_int(st, 1, 10 + i); /* rowids kept */
            (void)sqlite3_bind_text(st, 2, ids[i], -1, SQLITE_STATIC);
            if (texts[i] != NULL) {
                (void)sqlite3_bind_text(st, 3, texts[i], -1, SQLITE_STATIC);
            } else {
                (void)sqlite3_bind_null(st, 3);
            }
            (void)sqlite3_bind_text(st, 4, hex, -1, SQLITE_TRANSIENT);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            (void)sqlite3_reset(st);
        }
    }
    (void)sqlite3_finalize(st);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO documents_fts(rowid, title, text, path,"
                     " author) SELECT id, title, text, path, author"
                     " FROM documents;"
                     "INSERT INTO doc_sources VALUES(10, 'srcA');"
                     "PRAGMA user_version=6;",
                     NULL,
                     NULL,
                     NULL),
        SQLITE_OK);
    (void)sqlite3_close(db);

    assert_int_equal(count(f->set, "p"), 3);
    assert_int_equal(db_int(f->dir, "p", "PRAGMA user_version"), 11);
    assert_int_equal(kind_of(f->dir, "long"), 'Z');
    assert_int_equal(kind_of(f->dir, "short"), 'T');
    assert_int_equal(kind_of(f->dir, "none"), 'N');
    assert_int_equal(db_int(f->dir,
                            "p",
                            "SELECT id FROM docs"
                            " WHERE _recordid = 'short'"),
                     11);
    assert_string_equal(get_text(f->set, "p", "long"), long_text);
    assert_string_equal(get_text(f->set, "p", "short"), "tiny words");
    assert_string_equal(get_text(f->set, "p", "none"), "(none)");
    assert_int_equal(total(f->set, "p", "needle"), 1);
    assert_int_equal(total(f->set, "p", "tiny"), 1);
    assert_int_equal(fts_integrity(f->dir, "p"), SQLITE_OK);
    /* written as any other: the old terms leave through the packed text */
    put_text(f->set, "p", "long", "a new text entirely");
    assert_int_equal(total(f->set, "p", "needle"), 0);
    assert_int_equal(total(f->set, "p", "entirely"), 1);
    assert_int_equal(sl_index_delete(f->set, "p", "short", &err), 0);
    assert_int_equal(fts_integrity(f->dir, "p"), SQLITE_OK);
}

/* A damaged packed text: reading it is an error that names it, the other
 * documents read on. */
static void
test_text_damaged(void **state)
{
    struct fixture *f = *state;
    static char long_text[8192];
    char path[600];
    sqlite3 *db = NULL;
    json_t *doc = NULL;
    struct sl_err err;

    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    prose(long_text, sizeof(long_text));
    put_text(f->set, "p", "bad", long_text);
    put_text(f->set, "p", "good", long_text);
    sl_index_close(f->set); /* no connection holds the file */
    f->set = NULL;
    (void)snprintf(path, sizeof(path), "%s/p.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sl__index_text_functions(db), SQLITE_OK);
    /* 'Z', a length of 1000 and no DEFLATE stream after it */
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE docs SET text_z ="
                                  " x'5AE8030000FFFFFFFF'"
                                  " WHERE _recordid = 'bad'",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
    (void)sqlite3_close(db);
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);

    sl_err_clear(&err);
    assert_int_not_equal(sl_index_get(f->set, "p", "bad", &doc, &err), 0);
    assert_null(doc);
    assert_non_null(strstr(err.message, "damaged packed text"));
    assert_string_equal(get_text(f->set, "p", "good"), long_text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_migrate6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_damaged, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
