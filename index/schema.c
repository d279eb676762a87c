/*
 * Embedded full-text index, the schema of a shard database and its
 * columns (docs/index.md "Schema"): the tables created at open, the
 * migrations of an older database, and where each column of `documents`
 * comes from in a document (the first field present wins; a value of a
 * wrong type is refused).
 */
#include <stdio.h>
#include <string.h>

#include "index/index_int.h"

#define SCHEMA_VERSION 11

/* The FTS5 table, external content over the indexed columns (schema 5:
 * title, text, path, author; before: title, text, path). */
#define FTS_SQL                                                                \
    "CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5("             \
    " title, text, path, author, content='documents', content_rowid='id',"     \
    " tokenize='" SL__IX_TOKENIZE "');"

/* Merge FTS5 segments in bigger steps: about 25% less time per document
 * when many small transactions arrive (measured with the import
 * benchmark's documents; docs/index.md).  Stored in the table's
 * configuration, so set when the table is created. */
#define AUTOMERGE_SQL                                                          \
    "INSERT INTO documents_fts(documents_fts, rank) VALUES('automerge', 16);"

/*
 * Schema 7: the rows live in `docs` with the text packed in text_z
 * (textpack.c), and `documents` is a view that unpacks it, so that the FTS
 * table's external content (which names `documents`) and the readers see
 * the text as it is.  The writes go to `docs`, and so do the reads that
 * need no text: nothing is unpacked for them (a generated column would be
 * computed at every insert).
 */
#define DOCS_SQL                                                               \
    "CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY,"                  \
    " _recordid TEXT NOT NULL UNIQUE COLLATE BINARY,"                          \
    " title TEXT, text_z BLOB, path TEXT, mime TEXT, size INTEGER,"            \
    " modified TEXT, source TEXT, compound_id TEXT,"                           \
    " text_sha256 TEXT NOT NULL, meta TEXT NOT NULL,"                          \
    " version INTEGER NOT NULL DEFAULT 0,"                                     \
    " author TEXT, created TEXT, pages INTEGER, url TEXT, host TEXT);"
#define DOCUMENTS_VIEW_SQL                                                     \
    "CREATE VIEW IF NOT EXISTS documents AS SELECT id, _recordid, title,"      \
    " sl_text_unpack(text_z) AS text, path, mime, size, modified, source,"     \
    " compound_id, text_sha256, meta, version, author, created, pages"         \
    " FROM docs;"

/* The tables a database lacks; the migrations below bring an older one's
 * tables to this schema. */
static const char schema_sql[] =
    /* 16 KiB pages for a new database (an existing one keeps its size):
     * a document row of a few KiB fits one page instead of spilling to
     * overflow pages; FTS5 indexing took about 28% less time than with
     * 4 KiB pages (docs/index.md).  Must come before WAL mode is set. */
    "PRAGMA page_size=16384;"
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    /* an older database keeps its table `documents` (the view is not
     * made over it) until the migration to 7 moves its rows */
    DOCS_SQL DOCUMENTS_VIEW_SQL "CREATE TABLE IF NOT EXISTS tombstones("
    " _recordid TEXT PRIMARY KEY COLLATE BINARY,"
    " version INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;" FTS_SQL
    /* Schema 2 kept the FTS table in step with triggers; a trigger makes
     * every upsert a statement transaction, and FTS5 writes its pending
     * terms to a new segment at each one (one segment per document: 1.5x
     * slower, docs/index.md).  apply() maintains the FTS table itself. */
    "DROP TRIGGER IF EXISTS documents_ai;"
    "DROP TRIGGER IF EXISTS documents_ad;"
    "DROP TRIGGER IF EXISTS documents_au;"
    "CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY,"
    " value INTEGER NOT NULL) WITHOUT ROWID;"
    /* The sources that hold each document (docs/index.md "Sources"); a
     * delete from one source leaves it to the others.  Schema 6 keys them
     * by the document's rowid, which grows: a new document's rows are
     * appended to both B-trees.  Schema 4 and 5 keyed them by _recordid,
     * two random B-tree inserts a document, whose pages written a commit
     * grew with the index (issue 29). */
    "CREATE TABLE IF NOT EXISTS doc_sources("
    " doc INTEGER NOT NULL,"
    " source TEXT NOT NULL COLLATE BINARY,"
    " PRIMARY KEY(doc, source)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS doc_sources_by_source"
    " ON doc_sources(source, doc);";

/* Schema 1 (before versions) to 2. */
static const char migrate1_sql[] =
    "ALTER TABLE documents ADD COLUMN version INTEGER NOT NULL DEFAULT 0;";

/* Schema 3 (and before) to 4: a document's source column names the one
 * source known to hold it. */
static const char migrate3_sql[] =
    "INSERT OR IGNORE INTO doc_sources(doc, source)"
    " SELECT id, source FROM documents"
    " WHERE typeof(source) = 'text' AND source != '';";

/*
 * Schema 4 (and before) to 5: the columns author (FTS-indexed), created
 * and pages; fill5 gives them to the stored documents that have their
 * fields.  FTS5 cannot add a column: the FTS table is made again and
 * rebuilt from `documents` (fts5_sql), which reads every document's
 * indexed columns once.
 */
static const char add5_sql[] =
    "ALTER TABLE documents ADD COLUMN author TEXT;"
    "ALTER TABLE documents ADD COLUMN created TEXT;"
    "ALTER TABLE documents ADD COLUMN pages INTEGER;";
static const char fts5_sql[] =
    "DROP TABLE documents_fts;" FTS_SQL
    "INSERT INTO documents_fts(documents_fts) VALUES('rebuild');" AUTOMERGE_SQL;
static int fill5(sqlite3 *db);

/* Schema 4 and 5 to 6: the sources table keyed by _recordid becomes
 * doc_sources keyed by the document's rowid (fill6). */
static int fill6(sqlite3 *db);

/* Schema 6 (and before) to 7: the rows move to `docs` (made empty by
 * schema_sql) with their rowids and the text packed, and `documents`
 * becomes the view: the FTS table, which names it, stays as it is. */
static const char pack7_sql[] =
    "INSERT INTO docs(id, _recordid, title, text_z, path, mime, size,"
    " modified, source, compound_id, text_sha256, meta, version, author,"
    " created, pages)"
    " SELECT id, _recordid, title, sl_text_pack(text), path, mime, size,"
    " modified, source, compound_id, text_sha256, meta, version, author,"
    " created, pages FROM documents ORDER BY id;"
    "DROP TABLE documents;" DOCUMENTS_VIEW_SQL;

/* Schema 7 (and before) to 8: the url and host columns (fill8). */
static int fill8(sqlite3 *db);

/*
 * Schema 10 (new databases too): the columns searches filter, facet and
 * sort on, in a table of their own keyed by the rowid of `docs`, which a
 * search joins instead of the rows (search.c).  A row of `docs` holds the
 * packed text before these columns, so reading them from the row reads a
 * page of text per match.  Schema 9 held them in an index (docs_cols on
 * docs(id, ...)); a rowid table is searched by integer keys, and the
 * matches, coming in rowid order, mostly find their row next to the last
 * one: joining 78,000 matches took 20 ms through the index and 8 ms
 * through the table (sqlite3 shell, docs/index.md "Schema").
 *
 * A write of a row writes its columns too (index.c, SL__IX_COLS_PUT and
 * SL__IX_COLS_DEL).  Schema 10 as first landed kept them by triggers on
 * `docs`: with a trigger every write of `docs` opens a statement
 * savepoint, at which FTS5 flushes its pending terms, so a transaction
 * wrote a segment per document (an import 29% slower); schema 11 drops
 * them.
 */
static const char cols10_sql[] =
    "DROP INDEX IF EXISTS docs_cols;"
    "CREATE TABLE IF NOT EXISTS docs_cols(id INTEGER PRIMARY KEY,"
    " _recordid TEXT, path TEXT, mime TEXT, size INTEGER, modified TEXT,"
    " created TEXT, url TEXT, host TEXT);"
    "INSERT OR REPLACE INTO docs_cols SELECT id, _recordid, path, mime,"
    " size, modified, created, url, host FROM docs;";
static const char drop11_sql[] = "DROP TRIGGER IF EXISTS docs_cols_ins;"
                                 "DROP TRIGGER IF EXISTS docs_cols_upd;"
                                 "DROP TRIGGER IF EXISTS docs_cols_del;";

/* The steps that bring a database of schema 1.. to this one: @sql, then
 * @fill (unless NULL), when its schema is below @below, in this order. */
static const struct {
    int below;
    const char *sql;
    int (*fill)(sqlite3 *db); /* a SQLite result code */
} migrations[] = {
    {2, migrate1_sql, NULL},
    {4, migrate3_sql, NULL},
    {5, add5_sql, fill5},
    {5, fts5_sql, NULL},
    {6, NULL, fill6},
    {7, pack7_sql, NULL},
    {8, NULL, fill8},
};

/* Field kinds: what a column accepts (a string and numbers are kept as
 * they are, a boolean as 0 or 1; null is no value).  The metadata columns
 * (author, created, pages) are lenient: a value of another type is left
 * out of the column, never a reason to refuse the document. */
enum { TEXT, SCALAR, NUMBER };
static const char *const kinds[] = {"string", "string or number", "number"};

/* Column i + 2 of SL__IX_UPSERT; the first SL__IX_NFTS are indexed and
 * also parameters i + 2 of SL__IX_FTS_ADD.  Title, text, path and author
 * are strings since they are indexed. */
enum { F_AUTHOR = 3, F_CREATED = 9, F_PAGES = 10 }; /* schema 5's */
const struct sl__index_field sl__index_fields[SL__IX_NFIELDS] = {
    {TEXT, {"title", NULL, NULL}, 0},
    {TEXT, {"text", NULL, NULL}, 0},
    {TEXT, {"path", "FilePath", NULL}, 0},
    [F_AUTHOR] = {TEXT, {"author", "creator", "Author"}, 1},
    {SCALAR, {"mimeType", "mime", NULL}, 0},
    {SCALAR, {"size", "FileSize", NULL}, 0},
    {SCALAR, {"lastModified", "modified", NULL}, 0},
    {SCALAR, {"_source", "source", NULL}, 0},
    {SCALAR, {"_compoundRecordId", "compoundId", NULL}, 0},
    [F_CREATED] = {TEXT, {"created", "dateCreated", NULL}, 1},
    [F_PAGES] = {NUMBER, {"pageCount", "pages", NULL}, 1},
    [SL__IX_F_URL] = {TEXT, {"url", "httpUrl", NULL}, 1},
};

/* PRAGMA user_version of @db into *version (0 for a new database). */
static int
schema_version(sqlite3 *db, int *version)
{
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);

    *version = 0;
    if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        src = SQLITE_OK;
    }
    (void)sqlite3_finalize(st);
    return src;
}

static int
newer(struct sl__index *ix, int version, struct sl_err *err)
{
    return sl_err_set(err,
                      SL_ECORRUPT,
                      "index",
                      "index '%s' has schema %d, newer than this program's %d",
                      ix->name,
                      version,
                      SCHEMA_VERSION);
}

/*
 * Bring the tables of @ix's database, of schema *version (0: new), to
 * this schema in one transaction: a crash leaves the old schema, which
 * the next open migrates again.  The version is read again in the
 * transaction, since another process (index-seed) may have migrated the
 * database meanwhile; *version is that one.
 */
static int
migrate(struct sl__index *ix, int *version, struct sl_err *err)
{
    char sql[48];
    size_t i = 0;
    int src = sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    int rc = 0;

    if (src == SQLITE_OK) {
        src = schema_version(ix->db, version);
    }
    if (src == SQLITE_OK && *version > SCHEMA_VERSION) {
        rc = newer(ix, *version, err);
    }
    if (src == SQLITE_OK && rc == 0 && *version == 0) {
        src = sqlite3_exec(ix->db, AUTOMERGE_SQL, NULL, NULL, NULL);
    }
    for (i = 0; i < sizeof(migrations) / sizeof(migrations[0]) &&
                src == SQLITE_OK && rc == 0 && *version > 0;
         i++) {
        if (*version < migrations[i].below) {
            src = sqlite3_exec(ix->db, migrations[i].sql, NULL, NULL, NULL);
        }
        if (*version < migrations[i].below && src == SQLITE_OK &&
            migrations[i].fill != NULL) {
            src = migrations[i].fill(ix->db);
        }
    }
    if (src == SQLITE_OK && rc == 0 && *version < 10) {
        src = sqlite3_exec(ix->db, cols10_sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK && rc == 0 && *version == 10) {
        src = sqlite3_exec(ix->db, drop11_sql, NULL, NULL, NULL);
    }
    (void)snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", SCHEMA_VERSION);
    if (src == SQLITE_OK && rc == 0 && *version < SCHEMA_VERSION) {
        src = sqlite3_exec(ix->db, sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK && rc == 0) {
        src = sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL);
    }
    if (src != SQLITE_OK) {
        rc = sl__index_db_err(ix, src, "schema", err);
    }
    if (rc != 0) {
        (void)sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

int
sl__index_schema(struct sl__index *ix, int *fresh, struct sl_err *err)
{
    int version = 0;
    int src = schema_version(ix->db, &version);
    int rc = 0;

    *fresh = 0;
    if (src == SQLITE_OK && version > SCHEMA_VERSION) {
        return newer(ix, version, err);
    }
    if (src == SQLITE_OK) {
        src = sqlite3_exec(ix->db, schema_sql, NULL, NULL, NULL);
    }
    if (src != SQLITE_OK) {
        return sl__index_db_err(ix, src, "schema", err);
    }
    if (version < SCHEMA_VERSION) {
        rc = migrate(ix, &version, err);
    }
    *fresh = version == 0;
    return rc;
}

/* Does a column of @kind accept @v (not null)? */
static int
kind_ok(int kind, const json_t *v)
{
    if (json_is_string(v)) {
        return kind != NUMBER;
    }
    if (kind == NUMBER) {
        return json_is_number(v);
    }
    return kind == SCALAR && !json_is_object(v) && !json_is_array(v);
}

/* The value of column @i in @doc (NULL: none) and the field it came from:
 * the first field present, checked for the column's kind. */
static int
field_value(const json_t *doc,
            size_t i,
            const json_t **value,
            struct sl_err *err)
{
    const struct sl__index_field *f = &sl__index_fields[i];
    const json_t *v = NULL;
    const char *key = NULL;
    size_t k = 0;

    for (k = 0; k < 3 && f->keys[k] != NULL && v == NULL; k++) {
        key = f->keys[k];
        v = json_object_get(doc, key);
    }
    *value = v;
    if (v == NULL || json_is_null(v) || kind_ok(f->kind, v)) {
        return 0;
    }
    if (f->lenient) {
        /* metadata as a pusher wrote it (several authors as an array, a
         * page count as a string): kept in the document, in no column */
        *value = NULL;
        return 0;
    }
    return sl_err_set(
        err, SL_EINVAL, key, "field '%s' must be a %s", key, kinds[f->kind]);
}

int
sl__index_check_fields(const json_t *doc, struct sl_err *err)
{
    const json_t *v = NULL;
    size_t i = 0;
    int rc = 0;

    for (i = 0; i < SL__IX_NFIELDS && rc == 0; i++) {
        rc = field_value(doc, i, &v, err);
    }
    return rc;
}

/* Bind @v as parameter @param of @st: strings and numbers as they are, a
 * boolean as 0 or 1, absent (NULL) or null as NULL.  A SQLite result
 * code; a string is bound SQLITE_STATIC. */
static int
bind_value(sqlite3_stmt *st, int param, const json_t *v)
{
    if (json_is_string(v)) {
        return sqlite3_bind_text64(st,
                                   param,
                                   json_string_value(v),
                                   json_string_length(v),
                                   SQLITE_STATIC,
                                   SQLITE_UTF8);
    }
    if (json_is_integer(v)) {
        return sqlite3_bind_int64(st, param, json_integer_value(v));
    }
    if (json_is_real(v)) {
        return sqlite3_bind_double(st, param, json_real_value(v));
    }
    if (json_is_boolean(v)) {
        return sqlite3_bind_int(st, param, json_is_true(v));
    }
    return sqlite3_bind_null(st, param);
}

/* Bind column @i from @doc as parameter i + 2 of @st. */
int
sl__index_bind_field(sqlite3_stmt *st,
                     const json_t *doc,
                     size_t i,
                     struct sl_err *err)
{
    const json_t *v = NULL;
    int rc = field_value(doc, i, &v, err);

    if (rc != 0) {
        return rc;
    }
    return bind_value(st, (int)i + 2, v) == SQLITE_OK ? 0 : SL_EINTERNAL;
}

/*
 * Schema 5's columns of the stored documents (a document without its
 * text is in `meta`), by the rules of sl__index_fields except that a
 * value of a wrong type is left out (NULL): a stored document is not
 * refused.  Only the documents that have one of them are written.
 */
static int
fill5(sqlite3 *db)
{
    static const size_t cols[] = {F_AUTHOR, F_CREATED, F_PAGES};
    sqlite3_stmt *rd = NULL;
    sqlite3_stmt *wr = NULL;
    int src =
        sqlite3_prepare_v2(db, "SELECT id, meta FROM documents", -1, &rd, NULL);

    if (src == SQLITE_OK) {
        src = sqlite3_prepare_v2(db,
                                 "UPDATE documents SET author = ?2,"
                                 " created = ?3, pages = ?4 WHERE id = ?1",
                                 -1,
                                 &wr,
                                 NULL);
    }
    while (src == SQLITE_OK && (src = sqlite3_step(rd)) == SQLITE_ROW) {
        const char *meta = (const char *)sqlite3_column_text(rd, 1);
        json_t *doc = meta != NULL ? json_loads(meta, 0, NULL) : NULL;
        const json_t *v = NULL;
        size_t k = 0;
        int any = 0;

        src = sqlite3_bind_int64(wr, 1, sqlite3_column_int64(rd, 0));
        for (k = 0; k < sizeof(cols) / sizeof(cols[0]) && src == SQLITE_OK;
             k++) {
            if (!json_is_object(doc) ||
                field_value(doc, cols[k], &v, NULL) != 0) {
                v = NULL; /* no document, or a value of a wrong type */
            }
            any |= v != NULL && !json_is_null(v);
            src = bind_value(wr, (int)k + 2, v);
        }
        if (src == SQLITE_OK && any) {
            src = sqlite3_step(wr);
            src = src == SQLITE_DONE ? SQLITE_OK : src;
            (void)sqlite3_reset(wr);
        }
        (void)sqlite3_clear_bindings(wr); /* before doc goes */
        json_decref(doc);
    }
    (void)sqlite3_finalize(rd);
    (void)sqlite3_finalize(wr);
    return src == SQLITE_DONE ? SQLITE_OK : src;
}

/* Schema 6: the rows of the `sources` table of schema 4 and 5 (a database
 * of schema 3 or before has none: migrate3_sql filled doc_sources). */
/* Whether @sql gives a row, into *yes; a SQLite result code. */
static int
has_row(sqlite3 *db, const char *sql, int *yes)
{
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

    *yes = 0;
    if (src == SQLITE_OK) {
        src = sqlite3_step(st);
        *yes = src == SQLITE_ROW;
        src = src == SQLITE_ROW || src == SQLITE_DONE ? SQLITE_OK : src;
    }
    (void)sqlite3_finalize(st);
    return src;
}

static int
fill6(sqlite3 *db)
{
    int have = 0;
    int src = has_row(db,
                      "SELECT 1 FROM sqlite_master"
                      " WHERE type = 'table' AND name = 'sources'",
                      &have);

    if (src == SQLITE_OK && have) {
        src = sqlite3_exec(db,
                           "INSERT OR IGNORE INTO doc_sources(doc, source)"
                           " SELECT d.id, s.source FROM sources s"
                           " JOIN documents d ON d._recordid = s._recordid;"
                           "DROP TABLE sources;",
                           NULL,
                           NULL,
                           NULL);
    }
    return src;
}

/*
 * Schema 8: the url and host columns of web documents, from the stored
 * documents' url or httpUrl (a database migrated from before schema 7 has
 * them already: its `docs` was made by schema_sql).  Their path column
 * stays as it was, since the FTS table indexed it: it gets the URL's path
 * when the document is written again.
 */
static int
fill8(sqlite3 *db)
{
    int have = 0;
    int src =
        has_row(db,
                "SELECT 1 FROM pragma_table_info('docs') WHERE name = 'url'",
                &have);

    if (src == SQLITE_OK && !have) {
        src = sqlite3_exec(db,
                           "ALTER TABLE docs ADD COLUMN url TEXT;"
                           "ALTER TABLE docs ADD COLUMN host TEXT;",
                           NULL,
                           NULL,
                           NULL);
    }
    if (src == SQLITE_OK) {
        src = sqlite3_exec(
            db,
            "UPDATE docs SET url = CASE WHEN json_type(meta, '$.url') ="
            " 'text' THEN json_extract(meta, '$.url') WHEN json_type(meta,"
            " '$.url') IS NULL AND json_type(meta, '$.httpUrl') = 'text'"
            " THEN json_extract(meta, '$.httpUrl') END"
            " WHERE json_valid(meta) AND (json_type(meta, '$.url') = 'text'"
            " OR json_type(meta, '$.httpUrl') = 'text');"
            "UPDATE docs SET host = sl_url_host(url) WHERE url IS NOT NULL;",
            NULL,
            NULL,
            NULL);
    }
    return src;
}
