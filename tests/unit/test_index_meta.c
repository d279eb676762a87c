/*
 * Unit tests of document metadata in the embedded index (index/, schema
 * 5, docs/index.md): the author column (FTS-indexed, the column filter
 * author:, its bm25 weight), the fields search hits carry (author,
 * mimeType, created, modified, pages), the types the new columns accept,
 * and the migration of a schema 4 database (all or nothing).  Each test works
 * in its own temporary directory under $TMPDIR, with one shard per index, so an
 * index is one database file.
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
    struct fixture *f = NULL;

    (void)index_setup(state, "test_index_meta.");
    f = *state;
    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    return 0;
}

/* Upsert the document of JSON text @json into @index; its result. */
static int
upsert(struct sl_index_set *set,
       const char *index,
       const char *json,
       struct sl_err *err)
{
    json_t *doc = json_loads(json, 0, NULL);
    int rc = 0;

    assert_non_null(doc);
    sl_err_clear(err);
    rc = sl_index_upsert(set, index, doc, err);
    json_decref(doc);
    return rc;
}

/* Upsert that must succeed. */
static void
store(struct sl_index_set *set, const char *index, const char *json)
{
    struct sl_err err;

    if (upsert(set, index, json, &err) != 0) {
        fail_msg("upsert %s: %s", json, err.message);
    }
}

static int
cmp_id(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The record ids of the hits of @q in @index, sorted, joined by ","
 * (a static buffer). */
static const char *
ids(struct sl_index_set *set, const char *index, const char *q)
{
    static char out[512];
    const char *id[16];
    json_t *res = search(set, index, q);
    json_t *hit = NULL;
    size_t n = 0;
    size_t i = 0;
    size_t len = 0;

    json_array_foreach(json_object_get(res, "hits"), i, hit)
    {
        assert_true(n < sizeof(id) / sizeof(id[0]));
        id[n++] = json_string_value(json_object_get(hit, "_recordid"));
    }
    qsort(id, n, sizeof(id[0]), cmp_id);
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        len += (size_t)snprintf(
            out + len, sizeof(out) - len, "%s%s", i > 0 ? "," : "", id[i]);
        assert_true(len < sizeof(out));
    }
    json_decref(res);
    return out;
}

/* The hit of record @id in search result @res, or NULL (borrowed). */
static json_t *
hit_of(json_t *res, const char *id)
{
    json_t *hit = NULL;
    size_t i = 0;

    json_array_foreach(json_object_get(res, "hits"), i, hit)
    {
        if (strcmp(json_string_value(json_object_get(hit, "_recordid")), id) ==
            0) {
            return hit;
        }
    }
    return NULL;
}

/*
 * The author comes from author, then creator, then Author; it is
 * searched like title, text and path, alone with author:, and follows
 * updates and deletes.
 */
static void
test_meta_author_search(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;

    store(f->set,
          "a",
          "{\"_recordid\":\"a1\",\"title\":\"Sketch\","
          "\"text\":\"the analytical engine\",\"author\":\"Ada Lovelace\"}");
    store(f->set,
          "a",
          "{\"_recordid\":\"a2\",\"title\":\"Letters\","
          "\"text\":\"letters to lovelace\",\"creator\":\"Charles Babbage\"}");
    store(f->set,
          "a",
          "{\"_recordid\":\"a3\",\"text\":\"memo\","
          "\"Author\":\"Lovelace Byron\"}");
    store(f->set,
          "a",
          "{\"_recordid\":\"a4\",\"text\":\"note\",\"author\":\"Grace Hopper\","
          "\"creator\":\"Ada Lovelace\"}");
    /* any column; the creator of a4 is not its author (author wins) */
    assert_string_equal(ids(f->set, "a", "lovelace"), "a1,a2,a3");
    assert_string_equal(ids(f->set, "a", "author:lovelace"), "a1,a3");
    assert_string_equal(ids(f->set, "a", "author:babbage"), "a2");
    assert_string_equal(ids(f->set, "a", "author:hopper"), "a4");
    assert_string_equal(ids(f->set, "a", "title:lovelace OR author:lovelace"),
                        "a1,a3");
    assert_string_equal(ids(f->set, "a", "author:letters"), "");
    assert_string_equal(ids(f->set, "a", "author:\"ada lovelace\""), "a1");
    /* a changed author replaces the old one in the FTS table */
    store(f->set,
          "a",
          "{\"_recordid\":\"a1\",\"title\":\"Sketch\","
          "\"text\":\"the analytical engine\",\"author\":\"L. F. Menabrea\"}");
    assert_string_equal(ids(f->set, "a", "author:lovelace"), "a3");
    assert_string_equal(ids(f->set, "a", "author:menabrea"), "a1");
    assert_int_equal(sl_index_delete(f->set, "a", "a3", &err), 0);
    assert_string_equal(ids(f->set, "a", "lovelace"), "a2");
    assert_int_equal(fts_integrity(f->dir, "a"), SQLITE_OK);
}

/* The author weighs twice the text (as the path does): the same term
 * once in the author ranks above once in the text of a shorter
 * document. */
static void
test_meta_author_weight(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;

    store(f->set,
          "w",
          "{\"_recordid\":\"w1\",\"text\":\"alpha beta gamma\","
          "\"author\":\"zed\"}");
    store(f->set, "w", "{\"_recordid\":\"w2\",\"text\":\"alpha beta zed\"}");
    store(f->set, "w", "{\"_recordid\":\"w3\",\"text\":\"filler one\"}");
    store(f->set, "w", "{\"_recordid\":\"w4\",\"text\":\"filler two\"}");
    store(f->set, "w", "{\"_recordid\":\"w5\",\"text\":\"filler three\"}");
    assert_string_equal(ids(f->set, "w", "zed"), "w1,w2");
    res = search(f->set, "w", "zed");
    assert_true(json_real_value(json_object_get(hit_of(res, "w1"), "score")) >
                json_real_value(json_object_get(hit_of(res, "w2"), "score")));
    json_decref(res);
}

/* Member @key of @hit when a string, else "(none)". */
static const char *
str(json_t *hit, const char *key)
{
    const char *v = json_string_value(json_object_get(hit, key));

    return v != NULL ? v : "(none)";
}

/* Number of members of @hit. */
static size_t
nkeys(json_t *hit)
{
    assert_non_null(hit);
    return json_object_size(hit);
}

/*
 * A hit carries author, mimeType, created, modified and pages when the
 * document has them, as stored (modified: lastModified before the
 * document's own modified); absent ones are left out.
 */
static void
test_meta_hit_fields(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    json_t *h = NULL;

    store(f->set,
          "h",
          "{\"_recordid\":\"h1\",\"title\":\"Report\",\"text\":\"quarterly "
          "numbers\",\"path\":\"/d/h1.pdf\",\"author\":\"Ada\","
          "\"mimeType\":\"application/pdf\","
          "\"created\":\"2024-03-15T10:00:00Z\","
          "\"lastModified\":\"2024-04-01T00:00:00Z\","
          "\"modified\":\"2024-03-20\",\"pageCount\":12}");
    store(f->set,
          "h",
          "{\"_recordid\":\"h2\",\"text\":\"quarterly memo\","
          "\"modified\":\"2024-03-20\",\"pages\":3,\"mime\":\"text/plain\","
          "\"dateCreated\":\"2024-03-15\"}");
    store(f->set, "h", "{\"_recordid\":\"h3\",\"text\":\"quarterly plain\"}");
    store(f->set,
          "h",
          "{\"_recordid\":\"h4\",\"text\":\"quarterly epoch\","
          "\"lastModified\":1700000000,\"pageCount\":2.0,\"author\":null}");
    res = search(f->set, "h", "quarterly");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 4);

    h = hit_of(res, "h1");
    assert_int_equal(nkeys(h), 10);
    assert_string_equal(str(h, "title"), "Report");
    assert_string_equal(str(h, "path"), "/d/h1.pdf");
    assert_non_null(strstr(json_string_value(json_object_get(h, "snippet")),
                           "<b>quarterly</b>"));
    assert_string_equal(str(h, "author"), "Ada");
    assert_string_equal(str(h, "mimeType"), "application/pdf");
    assert_string_equal(str(h, "created"), "2024-03-15T10:00:00Z");
    assert_string_equal(str(h, "modified"), "2024-04-01T00:00:00Z");
    assert_true(json_is_integer(json_object_get(h, "pages")));
    assert_int_equal(json_integer_value(json_object_get(h, "pages")), 12);

    h = hit_of(res, "h2");
    assert_int_equal(nkeys(h), 9); /* no author */
    assert_null(json_object_get(h, "author"));
    assert_string_equal(str(h, "mimeType"), "text/plain");
    assert_string_equal(str(h, "created"), "2024-03-15");
    assert_string_equal(str(h, "modified"), "2024-03-20");
    assert_int_equal(json_integer_value(json_object_get(h, "pages")), 3);

    /* the five of before, title null as before */
    h = hit_of(res, "h3");
    assert_int_equal(nkeys(h), 5);
    assert_true(json_is_null(json_object_get(h, "title")));
    assert_true(json_is_null(json_object_get(h, "path")));

    h = hit_of(res, "h4");
    assert_int_equal(nkeys(h), 7);
    /* the modified column is TEXT: a number comes back as its digits */
    assert_string_equal(str(h, "modified"), "1700000000");
    assert_int_equal(json_integer_value(json_object_get(h, "pages")), 2);
    json_decref(res);
}

/* author and created are strings, pages a number; a value of another
 * type (several authors as an array, a page count as a string) fills no
 * column and refuses nothing: the document is stored whole and found by
 * its text, its hit has no such member.  null is no value. */
static void
test_meta_types(void **state)
{
    static const char *const docs[] = {
        "{\"_recordid\":\"t1\",\"text\":\"odd one\",\"author\":5}",
        "{\"_recordid\":\"t2\",\"text\":\"odd two\",\"creator\":[\"a\",\"b\"]}",
        "{\"_recordid\":\"t3\",\"text\":\"odd three\",\"created\":20240315}",
        "{\"_recordid\":\"t4\",\"text\":\"odd four\",\"pageCount\":\"12\"}",
        "{\"_recordid\":\"t5\",\"text\":\"odd five\",\"pages\":true,"
        "\"author\":null,\"created\":null}",
    };
    struct fixture *f = *state;
    struct sl_index_op op;
    struct sl_err err;
    json_t *res = NULL;
    json_t *h = NULL;
    size_t i = 0;

    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_t *doc = json_loads(docs[i], 0, NULL);

        store(f->set, "t", docs[i]);
        memset(&op, 0, sizeof(op));
        op.doc = doc;
        sl_err_clear(&err);
        assert_int_equal(sl_index_op_check(&op, &err), 0);
        json_decref(doc);
    }
    assert_int_equal(count(f->set, "t"), 5);
    res = search(f->set, "t", "odd");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 5);
    json_array_foreach(json_object_get(res, "hits"), i, h)
    {
        assert_null(json_object_get(h, "author"));
        assert_null(json_object_get(h, "created"));
        assert_null(json_object_get(h, "pages"));
    }
    json_decref(res);
    /* the first field present decides: a good author hides a bad creator */
    store(f->set,
          "t",
          "{\"_recordid\":\"t6\",\"text\":\"six\",\"author\":\"ok\","
          "\"creator\":5,\"pageCount\":7,\"pages\":\"vii\"}");
    res = search(f->set, "t", "author:ok");
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
    h = json_array_get(json_object_get(res, "hits"), 0);
    assert_int_equal(json_integer_value(json_object_get(h, "pages")), 7);
    json_decref(res);
}

/* The tables of schema 4 as the index wrote them before schema 5 (one
 * shard), with three documents written as it wrote them. */
static const char schema4_sql[] =
    "PRAGMA page_size=16384;"
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;" INDEX_TABLES_V2_SQL
    "CREATE TABLE settings(key TEXT PRIMARY KEY,"
    " value INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE sources(_recordid TEXT NOT NULL COLLATE BINARY,"
    " source TEXT NOT NULL COLLATE BINARY,"
    " PRIMARY KEY(_recordid, source)) WITHOUT ROWID;"
    "CREATE INDEX sources_by_source ON sources(source, _recordid);"
    "PRAGMA user_version=4;"
    "INSERT INTO documents_fts(documents_fts, rank) VALUES('automerge', 16);"
    "INSERT INTO settings VALUES('shards', 1);"
    "INSERT INTO documents(_recordid, title, text, path, mime, modified,"
    " source, text_sha256, meta) VALUES"
    " ('m1', 'Notes', 'analytical engine notes', '/d/m1.pdf',"
    "  'application/pdf', '2024-01-02T03:04:05Z', NULL, 'x',"
    "  '{\"Author\":\"Ada Lovelace\",\"_recordid\":\"m1\","
    "\"created\":\"1843-10-01\",\"lastModified\":\"2024-01-02T03:04:05Z\","
    "\"mimeType\":\"application/pdf\",\"pageCount\":52,"
    "\"path\":\"/d/m1.pdf\",\"title\":\"Notes\"}'),"
    " ('m2', NULL, 'legacy plain words', NULL, NULL, NULL, 'S', 'x',"
    "  '{\"_recordid\":\"m2\",\"_source\":\"S\","
    "\"httpUrl\":\"https://Web.Example/p?q=1\"}'),"
    " ('m3', NULL, 'legacy odd types', NULL, NULL, NULL, NULL, 'x',"
    "  '{\"_recordid\":\"m3\",\"author\":[\"A\",\"B\"],\"pages\":\"x\"}'),"
    " ('m4', NULL, 'legacy broken meta', NULL, NULL, NULL, NULL, 'x',"
    "  'not json');"
    "INSERT INTO documents_fts(rowid, title, text, path)"
    " SELECT id, title, text, path FROM documents;"
    "INSERT INTO sources VALUES ('m2', 'S');";

/* Rows of `docs` and `docs_cols` (schema 10) that do not agree: 0 when
 * each row has its twin with the same columns. */
static int64_t
cols_differ(const char *dir, const char *name)
{
    return db_int(dir,
                  name,
                  "SELECT (SELECT count(*) FROM docs) + (SELECT count(*) FROM"
                  " docs_cols) - 2 * (SELECT count(*) FROM docs d JOIN"
                  " docs_cols c ON c.id = d.id WHERE c._recordid IS"
                  " d._recordid AND c.path IS d.path AND c.mime IS d.mime"
                  " AND c.size IS d.size AND c.modified IS d.modified AND"
                  " c.created IS d.created AND c.url IS d.url AND c.host IS"
                  " d.host)");
}

/* Run @sql on the database file of index @name (created if new). */
static void
make_db(const char *dir, const char *name, const char *sql)
{
    char path[600];
    sqlite3 *db = NULL;
    char *msg = NULL;

    (void)snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("%s", msg);
    }
    (void)sqlite3_close(db);
}

/*
 * A schema 4 database gets the columns at open: documents that have the
 * fields get them (one of a wrong type is left out), the others stay as
 * they were; the FTS table is made again with author and agrees with the
 * documents; sources, search and writes keep working; a reopen finds
 * schema 5.
 */
static void
test_meta_migrate4(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    json_t *doc = NULL;
    json_t *h = NULL;
    struct sl_err err;

    make_db(f->dir, "old", schema4_sql);
    assert_int_equal(count(f->set, "old"), 4);
    assert_int_equal(db_int(f->dir, "old", "PRAGMA user_version"), 11);
    /* schema 6: the sources keyed by _recordid moved to doc_sources */
    assert_int_equal(db_int(f->dir,
                            "old",
                            "SELECT count(*) FROM sqlite_master"
                            " WHERE name = 'sources'"),
                     0);
    assert_int_equal(db_int(f->dir, "old", "SELECT count(*) FROM doc_sources"),
                     1);
    assert_string_equal(ids(f->set, "old", "legacy"), "m2,m3,m4");
    assert_string_equal(ids(f->set, "old", "author:lovelace"), "m1");
    assert_string_equal(ids(f->set, "old", "author:a"), "");
    res = search(f->set, "old", "engine OR legacy");
    h = hit_of(res, "m1");
    assert_int_equal(nkeys(h), 10);
    assert_string_equal(str(h, "author"), "Ada Lovelace");
    assert_string_equal(str(h, "created"), "1843-10-01");
    assert_int_equal(json_integer_value(json_object_get(h, "pages")), 52);
    assert_string_equal(str(h, "modified"), "2024-01-02T03:04:05Z");
    /* schema 8: url and host from the stored httpUrl */
    assert_int_equal(nkeys(hit_of(res, "m2")), 7);
    assert_string_equal(str(hit_of(res, "m2"), "url"),
                        "https://Web.Example/p?q=1");
    assert_string_equal(str(hit_of(res, "m2"), "host"), "web.example");
    assert_int_equal(nkeys(hit_of(res, "m3")), 5);
    json_decref(res);
    assert_int_equal(fts_integrity(f->dir, "old"), SQLITE_OK);
    /* the sources of schema 4 are kept */
    assert_int_equal(sl_index_get(f->set, "old", "m2", &doc, &err), 0);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(doc, "_sources"), 0)),
        "S");
    json_decref(doc);
    /* writes of the new columns */
    store(f->set,
          "old",
          "{\"_recordid\":\"m2\",\"_source\":\"S\",\"text\":\"legacy plain "
          "words\",\"author\":\"Grace Hopper\",\"pageCount\":4}");
    assert_int_equal(sl_index_delete(f->set, "old", "m1", &err), 0);
    assert_string_equal(ids(f->set, "old", "author:hopper"), "m2");
    assert_string_equal(ids(f->set, "old", "lovelace"), "");
    assert_int_equal(fts_integrity(f->dir, "old"), SQLITE_OK);
    /* reopened: schema 5 stays, nothing is migrated again */
    sl_index_close(f->set);
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);
    assert_string_equal(ids(f->set, "old", "author:hopper"), "m2");
    assert_int_equal(count(f->set, "old"), 3);
    assert_int_equal(
        db_int(f->dir, "old", "SELECT pages FROM docs WHERE id = 2"), 4);
}

/* Schema 7: the tables as they were before url and host. */
static const char schema7_sql[] =
    "PRAGMA page_size=16384;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE docs(id INTEGER PRIMARY KEY,"
    " _recordid TEXT NOT NULL UNIQUE COLLATE BINARY,"
    " title TEXT, text_z BLOB, path TEXT, mime TEXT, size INTEGER,"
    " modified TEXT, source TEXT, compound_id TEXT,"
    " text_sha256 TEXT NOT NULL, meta TEXT NOT NULL,"
    " version INTEGER NOT NULL DEFAULT 0,"
    " author TEXT, created TEXT, pages INTEGER);"
    "CREATE VIEW documents AS SELECT id, _recordid, title,"
    " sl_text_unpack(text_z) AS text, path, mime, size, modified, source,"
    " compound_id, text_sha256, meta, version, author, created, pages"
    " FROM docs;"
    "CREATE TABLE tombstones(_recordid TEXT PRIMARY KEY COLLATE BINARY,"
    " version INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE VIRTUAL TABLE documents_fts USING fts5("
    " title, text, path, author, content='documents', content_rowid='id',"
    " tokenize='unicode61 remove_diacritics 2');"
    "CREATE TABLE settings(key TEXT PRIMARY KEY,"
    " value INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE doc_sources(doc INTEGER NOT NULL,"
    " source TEXT NOT NULL COLLATE BINARY,"
    " PRIMARY KEY(doc, source)) WITHOUT ROWID;"
    "INSERT INTO settings VALUES('shards', 1);"
    "INSERT INTO docs(id, _recordid, title, text_sha256, meta) VALUES"
    " (1, 'https://Example.ORG/a%20b/c.html', 'Web page', 'x',"
    "  '{\"_recordid\":\"https://Example.ORG/a%20b/c.html\","
    "\"httpUrl\":\"https://Example.ORG/a%20b/c.html\",\"title\":\"Web "
    "page\"}'),"
    " (2, '/f/x.txt', 'File', 'x',"
    "  '{\"_recordid\":\"/f/x.txt\",\"path\":\"/f/x.txt\",\"title\":\"File\","
    "\"url\":\"ftp://h/x\"}');"
    "INSERT INTO documents_fts(rowid, title) VALUES (1, 'Web page'),"
    " (2, 'File');"
    "PRAGMA user_version=7;";

/*
 * A schema 7 database gets the url and host columns at open, filled from
 * the stored url or httpUrl (an ftp URL has no host column); its path
 * column stays until the document is written again, which gives a web
 * document without a path its URL's path, decoded, searchable and
 * filterable; the FTS table agrees with the rows throughout.
 */
static void
test_meta_migrate7(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    json_t *h = NULL;

    make_db(f->dir, "web", schema7_sql);
    assert_int_equal(count(f->set, "web"), 2);
    assert_int_equal(db_int(f->dir, "web", "PRAGMA user_version"), 11);
    /* schema 10: the columns of searches have their table */
    assert_int_equal(db_int(f->dir,
                            "web",
                            "SELECT count(*) FROM sqlite_master WHERE name ="
                            " 'docs_cols' AND type = 'table'"),
                     1);
    assert_int_equal(cols_differ(f->dir, "web"), 0);
    res = search(f->set, "web", "page OR file");
    h = hit_of(res, "https://Example.ORG/a%20b/c.html");
    assert_string_equal(str(h, "url"), "https://Example.ORG/a%20b/c.html");
    assert_string_equal(str(h, "host"), "example.org");
    assert_true(json_is_null(json_object_get(h, "path")));
    h = hit_of(res, "/f/x.txt");
    assert_string_equal(str(h, "url"), "ftp://h/x");
    assert_null(json_object_get(h, "host"));
    json_decref(res);
    assert_int_equal(fts_integrity(f->dir, "web"), SQLITE_OK);
    store(f->set,
          "web",
          "{\"_recordid\":\"https://Example.ORG/a%20b/c.html\","
          "\"httpUrl\":\"https://Example.ORG/a%20b/c.html\","
          "\"title\":\"Web page\",\"text\":\"renewed\"}");
    res = search(f->set, "web", "renewed");
    assert_string_equal(
        str(hit_of(res, "https://Example.ORG/a%20b/c.html"), "path"),
        "/a b/c.html");
    json_decref(res);
    assert_string_equal(ids(f->set, "web", "path:\"/a b\""),
                        "https://Example.ORG/a%20b/c.html");
    assert_string_equal(ids(f->set, "web", "path:c.html"), "");
    assert_string_equal(ids(f->set, "web", "renewed c"),
                        "https://Example.ORG/a%20b/c.html");
    assert_int_equal(fts_integrity(f->dir, "web"), SQLITE_OK);
}

/* Close the set, run @sql on index "c" (2 documents), open it again: it
 * is migrated to the current schema. */
static void
reopen_after(struct fixture *f, const char *sql)
{
    sl_index_close(f->set);
    make_db(f->dir, "c", sql);
    assert_int_equal(sl_index_open(f->dir, &f->set, NULL), 0);
    assert_int_equal(count(f->set, "c"), 2);
    assert_int_equal(db_int(f->dir, "c", "PRAGMA user_version"), 11);
}

/*
 * The columns searches filter on (table docs_cols, schema 10) stay equal
 * to the rows through inserts, updates, deletes and a purge; a schema 9
 * database (the columns in an index of that name) gets the table, filled,
 * at open, and its filters find the same; a schema 10 database with the
 * triggers of its first version loses them (schema 11).
 */
static void
test_meta_cols10(void **state)
{
    struct fixture *f = *state;
    uint64_t n = 0;

    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    store(f->set,
          "c",
          "{\"_recordid\":\"/a/x.txt\",\"text\":\"alpha\",\"size\":10,"
          "\"mimeType\":\"text/plain\",\"lastModified\":\"2025-01-02\","
          "\"_source\":\"S\"}");
    store(f->set,
          "c",
          "{\"_recordid\":\"/a/y.html\",\"text\":\"alpha\",\"size\":2000,"
          "\"mimeType\":\"text/html\",\"_source\":\"T\"}");
    store(f->set,
          "c",
          "{\"_recordid\":\"https://h.example/p\",\"url\":"
          "\"https://h.example/p\",\"text\":\"alpha\",\"_source\":\"S\"}");
    store(f->set,
          "c",
          "{\"_recordid\":\"/b/z.md\",\"text\":\"alpha\",\"_source\":\"S\"}");
    assert_int_equal(cols_differ(f->dir, "c"), 0);
    /* an update changes every column, a delete and a purge remove rows */
    store(f->set,
          "c",
          "{\"_recordid\":\"/a/y.html\",\"text\":\"beta\",\"size\":5,"
          "\"path\":\"/c/y.HTML\",\"mimeType\":\"application/xhtml+xml\","
          "\"lastModified\":\"2026-03-04\",\"_source\":\"T\"}");
    assert_int_equal(sl_index_delete(f->set, "c", "/b/z.md", NULL), 0);
    assert_int_equal(cols_differ(f->dir, "c"), 0);
    assert_string_equal(ids(f->set, "c", "ext:html size:<10 path:/c"),
                        "/a/y.html");
    assert_int_equal(sl_index_purge_source(f->set, "c", "S", 0, &n, NULL, NULL),
                     0);
    assert_int_equal(n, 2);
    assert_int_equal(cols_differ(f->dir, "c"), 0);
    assert_int_equal(db_int(f->dir, "c", "SELECT count(*) FROM docs_cols"), 1);
    store(f->set,
          "c",
          "{\"_recordid\":\"/a/x.txt\",\"text\":\"alpha\",\"size\":10,"
          "\"mimeType\":\"text/plain\",\"_source\":\"S\"}");

    /* the same database as schema 9 left it */
    reopen_after(f,
                 "DROP TABLE docs_cols;"
                 " CREATE INDEX docs_cols ON docs(id, _recordid, path, mime,"
                 " size, modified, created, url, host);"
                 " PRAGMA user_version=9;");
    assert_int_equal(db_int(f->dir,
                            "c",
                            "SELECT count(*) FROM sqlite_master WHERE name"
                            " LIKE 'docs_cols%' AND type IN ('table',"
                            " 'trigger', 'index')"),
                     1);
    assert_int_equal(cols_differ(f->dir, "c"), 0);
    assert_string_equal(ids(f->set, "c", "alpha OR beta ext:txt"), "/a/x.txt");
    assert_string_equal(ids(f->set, "c", "type:html"), "/a/y.html");

    /* schema 10 as first landed kept the table by triggers: gone at open,
     * and the writes keep the table as they did */
    reopen_after(f,
                 "CREATE TRIGGER docs_cols_ins AFTER INSERT ON docs BEGIN"
                 " INSERT OR REPLACE INTO docs_cols(id) VALUES (new.id); END;"
                 "CREATE TRIGGER docs_cols_upd AFTER UPDATE ON docs BEGIN"
                 " SELECT 1; END;"
                 "CREATE TRIGGER docs_cols_del AFTER DELETE ON docs BEGIN"
                 " SELECT 1; END;"
                 "PRAGMA user_version=10;");
    assert_int_equal(db_int(f->dir,
                            "c",
                            "SELECT count(*) FROM sqlite_master WHERE type ="
                            " 'trigger'"),
                     0);
    store(f->set,
          "c",
          "{\"_recordid\":\"/d/new.pdf\",\"text\":\"gamma\",\"size\":7,"
          "\"mimeType\":\"application/pdf\"}");
    assert_int_equal(sl_index_delete(f->set, "c", "/a/x.txt", NULL), 0);
    assert_int_equal(cols_differ(f->dir, "c"), 0);
    assert_string_equal(ids(f->set, "c", "gamma ext:pdf size:7"), "/d/new.pdf");
}

/* A migration that fails leaves the database as it was (one
 * transaction): here the third new column exists already. */
static void
test_meta_migrate_atomic(void **state)
{
    struct fixture *f = *state;
    char sql[sizeof(schema4_sql) + 64];
    uint64_t n = 0;
    struct sl_err err;

    (void)snprintf(sql,
                   sizeof(sql),
                   "%sALTER TABLE documents ADD COLUMN pages INTEGER;",
                   schema4_sql);
    make_db(f->dir, "half", sql);
    sl_err_clear(&err);
    assert_int_not_equal(sl_index_count(f->set, "half", &n, &err), 0);
    assert_non_null(strstr(err.message, "pages"));
    assert_int_equal(db_int(f->dir, "half", "PRAGMA user_version"), 4);
    assert_int_equal(db_int(f->dir,
                            "half",
                            "SELECT count(*) FROM pragma_table_info("
                            "'documents') WHERE name = 'author'"),
                     0);
    assert_int_equal(db_int(f->dir,
                            "half",
                            "SELECT count(*) FROM pragma_table_info("
                            "'documents_fts')"),
                     3);
}

/* An index of a newer schema than the program's is refused, untouched. */
static void
test_meta_newer_refused(void **state)
{
    struct fixture *f = *state;
    uint64_t n = 0;
    struct sl_err err;

    make_db(f->dir,
            "new",
            "CREATE TABLE documents(id INTEGER PRIMARY KEY);"
            "PRAGMA user_version=12;");
    sl_err_clear(&err);
    assert_int_equal(sl_index_count(f->set, "new", &n, &err), SL_ECORRUPT);
    assert_non_null(strstr(err.message, "newer"));
    assert_int_equal(db_int(f->dir, "new", "PRAGMA user_version"), 12);
    assert_int_equal(
        db_int(f->dir, "new", "SELECT count(*) FROM sqlite_master"), 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_meta_author_search, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_meta_author_weight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_hit_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_migrate4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_migrate7, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_cols10, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_meta_migrate_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_meta_newer_refused, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
