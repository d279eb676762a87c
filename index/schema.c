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

#define SCHEMA_VERSION 4

static const char schema_sql[] =
    /* 16 KiB pages for a new database (an existing one keeps its size):
     * a document row of a few KiB fits one page instead of spilling to
     * overflow pages; FTS5 indexing took about 28% less time than with
     * 4 KiB pages (docs/index.md).  Must come before WAL mode is set. */
    "PRAGMA page_size=16384;"
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS documents("
    " id INTEGER PRIMARY KEY,"
    " _recordid TEXT NOT NULL UNIQUE COLLATE BINARY,"
    " title TEXT, text TEXT, path TEXT, mime TEXT, size INTEGER,"
    " modified TEXT, source TEXT, compound_id TEXT,"
    " text_sha256 TEXT NOT NULL, meta TEXT NOT NULL,"
    " version INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS tombstones("
    " _recordid TEXT PRIMARY KEY COLLATE BINARY,"
    " version INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5("
    " title, text, path, content='documents', content_rowid='id',"
    " tokenize='unicode61 remove_diacritics 2');"
    /* Schema 2 kept the FTS table in step with triggers; a trigger makes
     * every upsert a statement transaction, and FTS5 writes its pending
     * terms to a new segment at each one (one segment per document: 1.5x
     * slower, docs/index.md).  apply() maintains the FTS table itself. */
    "DROP TRIGGER IF EXISTS documents_ai;"
    "DROP TRIGGER IF EXISTS documents_ad;"
    "DROP TRIGGER IF EXISTS documents_au;"
    "CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY,"
    " value INTEGER NOT NULL) WITHOUT ROWID;"
    /* Schema 4: the sources that hold each document (docs/index.md
     * "Sources"); a delete from one source leaves it to the others. */
    "CREATE TABLE IF NOT EXISTS sources("
    " _recordid TEXT NOT NULL COLLATE BINARY,"
    " source TEXT NOT NULL COLLATE BINARY,"
    " PRIMARY KEY(_recordid, source)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS sources_by_source"
    " ON sources(source, _recordid);"
    "PRAGMA user_version=4;";

/* Schema 3 (and before) to 4: a document's source column names the one
 * source known to hold it. */
static const char migrate3_sql[] =
    "INSERT OR IGNORE INTO sources(_recordid, source)"
    " SELECT _recordid, source FROM documents"
    " WHERE typeof(source) = 'text' AND source != '';";

/* Schema 1 (before versions) to 2. */
static const char migrate1_sql[] =
    "ALTER TABLE documents ADD COLUMN version INTEGER NOT NULL DEFAULT 0;";

/* Field kinds: what a column accepts. */
enum { TEXT, SCALAR };

/* Column i + 2 of SL__IX_UPSERT; the first SL__IX_NFTS are indexed and
 * also parameters i + 2 of SL__IX_FTS_ADD. */
const struct sl__index_field sl__index_fields[SL__IX_NFIELDS] = {
    {TEXT, {"title", NULL, NULL}},
    {TEXT, {"text", NULL, NULL}},
    {TEXT, {"path", "FilePath", NULL}},
    {SCALAR, {"mimeType", "mime", NULL}},
    {SCALAR, {"size", "FileSize", NULL}},
    {SCALAR, {"lastModified", "modified", NULL}},
    {SCALAR, {"_source", "source", NULL}},
    {SCALAR, {"_compoundRecordId", "compoundId", NULL}},
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

int
sl__index_schema(struct sl__index *ix, int *fresh, struct sl_err *err)
{
    int version = 0;
    int src = schema_version(ix->db, &version);

    *fresh = 0;
    if (src == SQLITE_OK && version == 1) {
        src = sqlite3_exec(ix->db, migrate1_sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK && version > SCHEMA_VERSION) {
        return sl_err_set(err,
                          SL_ECORRUPT,
                          "index",
                          "index '%s' has schema %d, newer than this "
                          "program's %d",
                          ix->name,
                          version,
                          SCHEMA_VERSION);
    }
    if (src == SQLITE_OK) {
        src = sqlite3_exec(ix->db, schema_sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK && version > 0 && version < 4) {
        src = sqlite3_exec(ix->db, migrate3_sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK && version == 0) {
        /* Merge FTS5 segments in bigger steps: about 25% less time per
         * document when many small transactions arrive (measured with the
         * import benchmark's documents; docs/index.md).  Stored in the
         * table's configuration, so set once at creation. */
        src = sqlite3_exec(ix->db,
                           "INSERT INTO documents_fts(documents_fts, rank)"
                           " VALUES('automerge', 16);",
                           NULL,
                           NULL,
                           NULL);
    }
    *fresh = version == 0;
    return src == SQLITE_OK ? 0 : sl__index_db_err(ix, src, "schema", err);
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
    if (v == NULL || json_is_null(v) || json_is_string(v)) {
        return 0;
    }
    if (f->kind == TEXT || json_is_object(v) || json_is_array(v)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          key,
                          "field '%s' must be a %s",
                          key,
                          f->kind == TEXT ? "string" : "string or number");
    }
    return 0;
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

/*
 * Bind column @i from @doc as parameter i + 2 of @st: strings, numbers and
 * booleans as they are, absent or null as NULL.
 */
int
sl__index_bind_field(sqlite3_stmt *st,
                     const json_t *doc,
                     size_t i,
                     struct sl_err *err)
{
    const json_t *v = NULL;
    int param = (int)i + 2;
    int rc = field_value(doc, i, &v, err);
    int src = SQLITE_OK;

    if (rc != 0) {
        return rc;
    }
    if (v == NULL || json_is_null(v)) {
        src = sqlite3_bind_null(st, param);
    } else if (json_is_string(v)) {
        src = sqlite3_bind_text64(st,
                                  param,
                                  json_string_value(v),
                                  json_string_length(v),
                                  SQLITE_STATIC,
                                  SQLITE_UTF8);
    } else if (json_is_integer(v)) {
        src = sqlite3_bind_int64(st, param, json_integer_value(v));
    } else if (json_is_real(v)) {
        src = sqlite3_bind_double(st, param, json_real_value(v));
    } else {
        src = sqlite3_bind_int(st, param, json_is_true(v));
    }
    return src == SQLITE_OK ? 0 : SL_EINTERNAL;
}
