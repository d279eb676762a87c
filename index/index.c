/*
 * Embedded full-text index, the set of databases and the write side:
 * opening an index (schema, pragmas, prepared statements), upserts and
 * deletes in one transaction per batch (docs/index.md).
 *
 * Schema: `docs` keeps one row per _recordid (a UNIQUE text key in byte
 * order) with the columns of the well-known fields, the SHA-256 of the
 * text and the document without its "text" (which lives in its own
 * column, packed: textpack.c); the view `documents` unpacks the text.  Its
 * INTEGER PRIMARY KEY `id` is the stable rowid that the FTS5 table
 * `documents_fts` (external content over title, text, path, author) refers to;
 * write_doc and delete_doc keep the two in step (no triggers, see schema_sql in
 * schema.c, which also says where each column comes from).  `tombstones`
 * remembers versioned deletes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "index/index_int.h"

#define BUSY_TIMEOUT_MS 5000
#define PRUNE_EVERY_MS  60000

/*
 * A reader maps its shard's file into memory (SQLite caps this at its
 * SQLITE_MAX_MMAP_SIZE, 2 GiB in Debian's build): a search reads the
 * doclist pages in place instead of copying each into the connection's
 * page cache with pread().  The mapped pages are the kernel's page cache,
 * shared and reclaimable, not the process's own memory.  Measured on the
 * 100,000-file benchmark index: the slowest searches 5-10% faster
 * (docs/performance.md).  The file is never truncated while open (no
 * VACUUM), so a mapped page cannot vanish under a reader.  The cost: a
 * read error of the disk under a mapped page ends the process (SIGBUS)
 * where pread() would have failed the search with an I/O error.
 */
#define READER_MMAP_PRAGMA "PRAGMA mmap_size=2147418112"

/* Columns of SL__IX_OLD after id: */
#define OLD_SHA256  1
#define OLD_NOTEXT  2
#define OLD_META    3
#define OLD_VERSION 4
/* Parameters of SL__IX_UPSERT after _recordid and the columns of
 * sl__index_fields (2..SL__IX_NFIELDS + 1; the text's, UPSERT_TEXT, is
 * bound again packed, for text_z): */
#define UPSERT_TEXT    3
#define UPSERT_SHA256  (SL__IX_NFIELDS + 2)
#define UPSERT_META    (SL__IX_NFIELDS + 3)
#define UPSERT_VERSION (SL__IX_NFIELDS + 4)

/* Statement texts, indexed by the SL__IX_* constants. */
static const char *const stmt_sql[SL__IX_NSTMT] = {
    [SL__IX_BEGIN] = "BEGIN IMMEDIATE",
    [SL__IX_COMMIT] = "COMMIT",
    [SL__IX_ROLLBACK] = "ROLLBACK",
    [SL__IX_UPSERT] =
        "INSERT INTO docs(_recordid, title, text_z, path, author, mime,"
        " size, modified, source, compound_id, created, pages, url, host,"
        " text_sha256, meta, version)"
        " VALUES (?1, ?2, ?3, coalesce(?4, sl_url_path(?13)), ?5, ?6, ?7,"
        " ?8, ?9, ?10, ?11, ?12, ?13, sl_url_host(?13), ?14, ?15, ?16)"
        " ON CONFLICT(_recordid) DO UPDATE SET title = excluded.title,"
        " text_z = excluded.text_z, path = excluded.path,"
        " author = excluded.author, mime = excluded.mime,"
        " size = excluded.size, modified = excluded.modified,"
        " source = excluded.source, compound_id = excluded.compound_id,"
        " created = excluded.created, pages = excluded.pages,"
        " url = excluded.url, host = excluded.host, text_sha256 = "
        "excluded.text_sha256, meta = excluded.meta,"
        " version = excluded.version",
    [SL__IX_DELETE] = "DELETE FROM docs WHERE id = ?1",
    /* not the text: it is unpacked only when a changed document's old
     * terms leave the FTS table (SL__IX_FTS_DEL) */
    [SL__IX_OLD] = "SELECT id, text_sha256, text_z IS NULL, meta, version"
                   " FROM docs WHERE _recordid = ?1",
    /* ?13: the URL, whose path a web document without one indexes */
    [SL__IX_FTS_ADD] =
        "INSERT INTO documents_fts(rowid, title, text, path, author)"
        " VALUES (?1, ?2, ?3, coalesce(?4, sl_url_path(?13)), ?5)",
    /* with VALUES: an INSERT ... SELECT opens a statement savepoint, at
     * which FTS5 writes out its pending terms (a segment per document) */
    [SL__IX_FTS_DEL] = "INSERT INTO documents_fts(documents_fts, rowid, title,"
                       " text, path, author)"
                       " VALUES ('delete', ?1, ?2, ?3, ?4, ?5)",
    [SL__IX_FTS_OLD] = "SELECT title, text, path, author FROM documents"
                       " WHERE id = ?1",
    [SL__IX_GET] = "SELECT meta, text FROM documents WHERE _recordid = ?1",
    [SL__IX_COUNT] = "SELECT count(*) FROM docs",
    /* FTS5's table of segments: a row per segment and term page */
    [SL__IX_SEGMENTS] = "SELECT count(DISTINCT segid) FROM documents_fts_idx",
    [SL__IX_RECORDS] = "SELECT _recordid, text_sha256 FROM docs"
                       " WHERE _recordid > ?1 ORDER BY _recordid LIMIT ?2",
    [SL__IX_TOMB_GET] = "SELECT version FROM tombstones WHERE _recordid = ?1",
    [SL__IX_TOMB_PUT] =
        "INSERT INTO tombstones(_recordid, version, at) VALUES (?1, ?2, ?3)"
        " ON CONFLICT(_recordid) DO UPDATE SET"
        " version = max(version, excluded.version), at = excluded.at",
    [SL__IX_TOMB_DEL] = "DELETE FROM tombstones WHERE _recordid = ?1",
    [SL__IX_TOMB_PRUNE] = "DELETE FROM tombstones WHERE at < ?1",
    /* doc_sources is keyed by the document's rowid (schema 6), which
     * grows: a new document's rows go to the end of both B-trees instead
     * of a random page of each (docs/index.md "Sources") */
    [SL__IX_SRC_ADD] = "INSERT OR IGNORE INTO doc_sources(doc, source)"
                       " SELECT id, ?2 FROM docs WHERE _recordid = ?1",
    [SL__IX_SRC_DEL] = "DELETE FROM doc_sources WHERE doc = (SELECT id FROM"
                       " docs WHERE _recordid = ?1) AND source = ?2",
    [SL__IX_SRC_ANY] = "SELECT 1 FROM doc_sources WHERE doc = (SELECT id FROM"
                       " docs WHERE _recordid = ?1) LIMIT 1",
    [SL__IX_SRC_DROP] = "DELETE FROM doc_sources WHERE doc = (SELECT id FROM"
                        " docs WHERE _recordid = ?1)",
    [SL__IX_SRC_PAGE] = "SELECT d._recordid, s.doc FROM doc_sources s"
                        " JOIN docs d ON d.id = s.doc"
                        " WHERE s.source = ?1 AND s.doc > ?2"
                        " ORDER BY s.doc LIMIT ?3",
    [SL__IX_SRC_LIST] = "SELECT source FROM doc_sources WHERE doc = (SELECT"
                        " id FROM docs WHERE _recordid = ?1)"
                        " ORDER BY source",
    /* the columns searches read, written with the row (schema.c) */
    [SL__IX_COLS_PUT] = "INSERT OR REPLACE INTO docs_cols(id, _recordid,"
                        " path, mime, size, modified, created, url, host)"
                        " SELECT id, _recordid, path, mime, size, modified,"
                        " created, url, host FROM docs WHERE id = ?1",
    [SL__IX_COLS_DEL] = "DELETE FROM docs_cols WHERE id = ?1",
};

const char *
sl__index_dir(const struct sl_index_set *set)
{
    return set->dir;
}

/* Map SQLite result @src of connection @db (NULL: none) to an SL_E*
 * code with the message "index '<name>': <what>: <sqlite message>". */
static int
db_err(const char *name,
       sqlite3 *db,
       int src,
       const char *what,
       struct sl_err *err)
{
    int code = SL_EIO;

    switch (src & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        code = SL_ENOTREADY;
        break;
    case SQLITE_FULL:
        code = SL_ENOSPC;
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        code = SL_ECORRUPT;
        break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
        code = SL_EACCES;
        break;
    case SQLITE_IOERR:
        /* a write of the journal or WAL index that found the disk full
         * (SQLite says SQLITE_FULL only for some writes) */
        if (db != NULL && (sqlite3_system_errno(db) == ENOSPC ||
                           sqlite3_system_errno(db) == EDQUOT)) {
            code = SL_ENOSPC;
        }
        break;
    default:
        break;
    }
    return sl_err_set(err,
                      code,
                      NULL,
                      "index '%s': %s: %s",
                      name,
                      what,
                      db ? sqlite3_errmsg(db) : sqlite3_errstr(src));
}

int
sl__index_db_err(struct sl__index *ix,
                 int src,
                 const char *what,
                 struct sl_err *err)
{
    return db_err(ix->name, ix->db, src, what, err);
}

int
sl__index_rd_err(struct sl__index *ix,
                 int src,
                 const char *what,
                 struct sl_err *err)
{
    return db_err(ix->name, ix->rd.db, src, what, err);
}

/*
 * Process-wide SQLite settings, before SQLite initialises: no memory
 * statistics, whose global mutex every allocation of every connection
 * takes (two writers on two shards otherwise queue on it).
 */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;

static void
sqlite_setup(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
sl_index_open(const char *dir, struct sl_index_set **out, struct sl_err *err)
{
    struct sl_index_set *set = NULL;
    int rc = 0;

    *out = NULL;
    (void)pthread_once(&sqlite_once, sqlite_setup);
    rc = sl_mkdirs(dir, err);
    if (rc != 0) {
        return rc;
    }
    set = sl_calloc(1, sizeof(*set));
    set->dir = sl_strdup(dir);
    set->shards = SL_INDEX_DEFAULT_SHARDS;
    (void)pthread_mutex_init(&set->mu, NULL);
    (void)pthread_cond_init(&set->cv, NULL);
    atomic_init(&set->merge_stop, 0);
    *out = set;
    return 0;
}

/* Statements the reader prepares: the queries of query.c. */
static int
read_stmt(int which)
{
    return which == SL__IX_GET || which == SL__IX_COUNT ||
           which == SL__IX_RECORDS || which == SL__IX_SRC_LIST ||
           which == SL__IX_SEGMENTS;
}

/* Prepare stmt_sql into @st on @db: every statement, or with @reads only
 * the reader's (the others stay NULL).  Returns a SQLite result code. */
static int
prepare_stmts(sqlite3 *db, sqlite3_stmt **st, int reads)
{
    int src = SQLITE_OK;
    int i = 0;

    for (i = 0; i < SL__IX_NSTMT && src == SQLITE_OK; i++) {
        if (!reads || read_stmt(i)) {
            src = sqlite3_prepare_v3(
                db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st[i], NULL);
        }
    }
    return src;
}

/* Reset the prepared statements of @st (NULL ones skipped). */
static void
reset_stmts(sqlite3_stmt **st)
{
    int i = 0;

    for (i = 0; i < SL__IX_NSTMT; i++) {
        if (st[i] != NULL) {
            (void)sqlite3_reset(st[i]);
            (void)sqlite3_clear_bindings(st[i]);
        }
    }
}

/* Finalize the statements @st of connection *@db and close it, the
 * writer's or the reader's (NULL-safe; all left NULL). */
static void
conn_close(sqlite3 **db, sqlite3_stmt **st)
{
    int i = 0;

    for (i = 0; i < SL__IX_NSTMT; i++) {
        (void)sqlite3_finalize(st[i]);
        st[i] = NULL;
    }
    (void)sqlite3_close(*db);
    *db = NULL;
}

static void
index_free(struct sl__index *ix)
{
    if (ix == NULL) {
        return;
    }
    conn_close(&ix->rd.db, ix->rd.st); /* before the writer's connection */
    conn_close(&ix->db, ix->st);
    sl__index_text_compressor_free(ix->pack);
    (void)pthread_mutex_destroy(&ix->rd.mu);
    (void)pthread_mutex_destroy(&ix->mu);
    sl_free(ix->path);
    sl_free(ix);
}

void
sl__index_free(struct sl__index *ix)
{
    index_free(ix);
}

int
sl_index_set_shards(struct sl_index_set *set, unsigned shards)
{
    if (shards < 1 || shards > SL_INDEX_MAX_SHARDS) {
        return SL_EINVAL;
    }
    set->shards = shards;
    return 0;
}

unsigned
sl__index_shard_of(const char *id, unsigned n)
{
    uint64_t h = 14695981039346656037ull;
    const unsigned char *p = (const unsigned char *)(id ? id : "");

    if (n <= 1) {
        return 0;
    }
    for (; *p != '\0'; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return (unsigned)(h % n);
}

void
sl_index_close(struct sl_index_set *set)
{
    struct sl__index *ix = NULL;

    if (set == NULL) {
        return;
    }
    sl__index_merger_stop(set);
    while (set->head != NULL) {
        ix = set->head;
        set->head = ix->next;
        index_free(ix);
    }
    (void)pthread_cond_destroy(&set->cv);
    (void)pthread_mutex_destroy(&set->mu);
    sl_free(set->dir);
    sl_free(set);
}

/*
 * The shard count of a shard 0 database: its "shards" setting, written
 * when it is created (@fresh); an index from before shards has one.
 */
static int
read_shards(struct sl_index_set *set, struct sl__index *ix, int fresh)
{
    sqlite3_stmt *st = NULL;
    int src = SQLITE_OK;

    ix->nshards = 1;
    if (fresh) {
        char sql[96];

        (void)snprintf(sql,
                       sizeof(sql),
                       "INSERT OR IGNORE INTO settings VALUES('shards', %u)",
                       set->shards);
        src = sqlite3_exec(ix->db, sql, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK) {
        src = sqlite3_prepare_v2(ix->db,
                                 "SELECT value FROM settings"
                                 " WHERE key = 'shards'",
                                 -1,
                                 &st,
                                 NULL);
    }
    if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 v = sqlite3_column_int64(st, 0);

        ix->nshards = v >= 1 && v <= SL_INDEX_MAX_SHARDS ? (unsigned)v : 1;
    }
    (void)sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? SQLITE_OK : src;
}

/*
 * Open (and with @create, create) the database of index @name: pragmas,
 * schema and every prepared statement.  Called with the set's mutex held,
 * so an index is opened once.
 */
static int
index_open(struct sl_index_set *set,
           const char *name,
           unsigned shard,
           int create,
           struct sl__index **out,
           struct sl_err *err)
{
    struct sl__index *ix = sl_calloc(1, sizeof(*ix));
    char *path = shard == 0 ? sl_asprintf("%s/%s.db", set->dir, name)
                            : sl_asprintf("%s/%s~%u.db", set->dir, name, shard);
    struct stat sb;
    int src = SQLITE_OK;
    int fresh = 0;
    int rc = 0;

    (void)snprintf(ix->name, sizeof(ix->name), "%s", name);
    ix->set = set;
    ix->shard = shard;
    (void)pthread_mutex_init(&ix->mu, NULL);
    (void)pthread_mutex_init(&ix->rd.mu, NULL);
    if (!create && stat(path, &sb) != 0) {
        rc = errno == ENOENT
                 ? sl_err_set(err, SL_ENOENT, "index", "no index '%s'", name)
                 : sl_err_set(err,
                              sl_err_from_errno(errno),
                              "index",
                              "index '%s': %s",
                              name,
                              sl_errno_str(errno));
        goto fail;
    }
    src = sqlite3_open_v2(path,
                          &ix->db,
                          SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                              SQLITE_OPEN_NOMUTEX,
                          NULL);
    if (src != SQLITE_OK) {
        rc = sl__index_db_err(ix, src, "open", err);
        goto fail;
    }
    (void)sqlite3_busy_timeout(ix->db, BUSY_TIMEOUT_MS);
    (void)sqlite3_extended_result_codes(ix->db, 1);
    ix->pack = sl__index_text_compressor();
    src = ix->pack != NULL ? sl__index_text_functions(ix->db) : SQLITE_NOMEM;
    src = src == SQLITE_OK ? sl__index_url_functions(ix->db) : src;
    if (src != SQLITE_OK) {
        rc = sl__index_db_err(ix, src, "open", err);
        goto fail;
    }
    rc = sl__index_schema(ix, &fresh, err);
    if (rc != 0) {
        goto fail;
    }
    if (shard == 0) {
        src = read_shards(set, ix, fresh);
    }
    if (src != SQLITE_OK) {
        rc = sl__index_db_err(ix, src, "schema", err);
        goto fail;
    }
    src = prepare_stmts(ix->db, ix->st, 0);
    if (src != SQLITE_OK) {
        rc = sl__index_db_err(ix, src, "prepare", err);
        goto fail;
    }
    ix->path = path;
    atomic_init(&ix->merge_due, 0);
    atomic_init(&ix->writers, 0);
    sl__index_merge_due(ix); /* a merge the last process left, if any */
    *out = ix;
    return 0;

fail:
    index_free(ix);
    sl_free(path);
    return rc;
}

int
sl__index_dropping(const struct sl_index_set *set, const char *name)
{
    const struct sl__index_dropping *d = NULL;

    for (d = set->dropping; d != NULL; d = d->next) {
        if (strcmp(d->name, name) == 0) {
            return 1;
        }
    }
    return 0;
}

struct sl__index *
sl__index_find_open(const struct sl_index_set *set,
                    const char *name,
                    unsigned shard)
{
    struct sl__index *ix = NULL;

    for (ix = set->head; ix != NULL; ix = ix->next) {
        if (ix->shard == shard && strcmp(ix->name, name) == 0) {
            break;
        }
    }
    return ix;
}

/* Open shard @shard of @name and put it on the list.  set->mu held. */
static int
list_open(struct sl_index_set *set,
          const char *name,
          unsigned shard,
          int create,
          struct sl__index **out,
          struct sl_err *err)
{
    int rc = index_open(set, name, shard, create, out, err);

    if (rc == 0) {
        (*out)->next = set->head;
        set->head = *out;
    }
    return rc;
}

/*
 * The open shard @shard of index @name (opened, or with @create created,
 * on first use), counted as a user until sl__index_unref() (sl_index_drop waits
 * for the users of an index before it frees its shards); no lock taken.  Its
 * nshards never changes.  While the index is being dropped a call with
 * @create waits for the drop to end (the write creates the index again),
 * one without is SL_ENOENT (it must not wait: a reader may hold other
 * shards of the index, and the drop waits for those).  Shard 0 tells
 * whether the index exists, so it is opened before any other: a writer
 * that read the shard count before a drop recreates shard 0 and does not
 * leave a lone shard file behind.
 */
static int
find_shard(struct sl_index_set *set,
           const char *name,
           unsigned shard,
           int create,
           struct sl__index **out,
           struct sl_err *err)
{
    struct sl__index *ix = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl_name_check_entity(name, err);
    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&set->mu);
    while (sl__index_dropping(set, name) && create) {
        (void)pthread_cond_wait(&set->cv, &set->mu);
    }
    if (sl__index_dropping(set, name)) {
        rc = sl_err_set(err, SL_ENOENT, "index", "no index '%s'", name);
    }
    if (rc == 0) {
        ix = sl__index_find_open(set, name, shard);
    }
    if (rc == 0 && ix == NULL && shard > 0 &&
        sl__index_find_open(set, name, 0) == NULL) {
        rc = list_open(set, name, 0, create, &ix, err);
        ix = NULL;
    }
    if (rc == 0 && ix == NULL) {
        /* shard 0 is open: the index exists; a missing shard file of
         * it is created empty */
        rc = list_open(set, name, shard, create || shard > 0, &ix, err);
    }
    if (rc == 0) {
        ix->users++;
    }
    (void)pthread_mutex_unlock(&set->mu);
    *out = ix;
    return rc;
}

/* The caller is done with @ix (find_shard counted it as a user). */
void
sl__index_unref(struct sl__index *ix)
{
    struct sl_index_set *set = ix->set;

    (void)pthread_mutex_lock(&set->mu);
    if (--ix->users == 0 && set->dropping != NULL) {
        (void)pthread_cond_broadcast(&set->cv);
    }
    (void)pthread_mutex_unlock(&set->mu);
}

int
sl__index_acquire(struct sl_index_set *set,
                  const char *name,
                  unsigned shard,
                  int create,
                  int try,
                  struct sl__index **out,
                  struct sl_err *err)
{
    struct sl__index *ix = NULL;
    int rc = find_shard(set, name, shard, create, &ix, err);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    if (try) {
        if (pthread_mutex_trylock(&ix->mu) != 0) {
            sl__index_unref(ix);
            return 1;
        }
    } else {
        /* a merge step holding the lock ends the merge (merge.c) */
        (void)atomic_fetch_add(&ix->writers, 1);
        (void)pthread_mutex_lock(&ix->mu);
        (void)atomic_fetch_sub(&ix->writers, 1);
    }
    *out = ix;
    return 0;
}

int
sl__index_nshards(struct sl_index_set *set,
                  const char *name,
                  int create,
                  unsigned *n,
                  struct sl_err *err)
{
    struct sl__index *ix = NULL;
    int rc = find_shard(set, name, 0, create, &ix, err);

    *n = 0;
    if (rc == 0) {
        *n = ix->nshards; /* fixed at open: no lock needed */
        sl__index_unref(ix);
    }
    return rc;
}

void
sl__index_release(struct sl__index *ix)
{
    reset_stmts(ix->st);
    (void)pthread_mutex_unlock(&ix->mu);
    sl__index_unref(ix);
}

/* Open @ix's reader; rd.mu held. */
static int
reader_open(struct sl__index *ix, struct sl_err *err)
{
    struct sl__index_reader *rd = &ix->rd;
    int src = sqlite3_open_v2(
        ix->path, &rd->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);

    if (src == SQLITE_OK) {
        (void)sqlite3_busy_timeout(rd->db, BUSY_TIMEOUT_MS);
        (void)sqlite3_extended_result_codes(rd->db, 1);
        src = sqlite3_exec(rd->db, READER_MMAP_PRAGMA, NULL, NULL, NULL);
    }
    if (src == SQLITE_OK) {
        src = sl__index_text_functions(rd->db);
    }
    if (src == SQLITE_OK) {
        src = sl__index_query_functions(rd->db);
    }
    if (src == SQLITE_OK) {
        src = sl__index_url_functions(rd->db);
    }
    if (src == SQLITE_OK) {
        src = sl__index_rank_functions(rd->db, &rd->ranked);
    }
    if (src == SQLITE_OK) {
        src = prepare_stmts(rd->db, rd->st, 1);
    }
    if (src != SQLITE_OK) {
        int rc = sl__index_rd_err(ix, src, "open for reading", err);

        conn_close(&rd->db, rd->st);
        return rc;
    }
    return 0;
}

int
sl__index_acquire_read(struct sl_index_set *set,
                       const char *name,
                       unsigned shard,
                       struct sl__index **out,
                       struct sl_err *err)
{
    struct sl__index *ix = NULL;
    int src = SQLITE_OK;
    int rc = find_shard(set, name, shard, 0, &ix, err);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&ix->rd.mu);
    if (ix->rd.db == NULL) {
        rc = reader_open(ix, err);
    }
    if (rc == 0) {
        /* deferred: the snapshot is taken by the first read and kept
         * until sl__index_release_read */
        src = sqlite3_exec(ix->rd.db, "BEGIN", NULL, NULL, NULL);
        if (src != SQLITE_OK) {
            rc = sl__index_rd_err(ix, src, "begin", err);
        }
    }
    if (rc != 0) {
        (void)pthread_mutex_unlock(&ix->rd.mu);
        sl__index_unref(ix);
        return rc;
    }
    *out = ix;
    return 0;
}

void
sl__index_release_read(struct sl__index *ix)
{
    reset_stmts(ix->rd.st);
    /* never leave a read transaction open: its snapshot would keep the
     * WAL from restarting, and the next BEGIN would fail */
    if (sqlite3_exec(ix->rd.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK &&
        !sqlite3_get_autocommit(ix->rd.db)) {
        (void)sqlite3_exec(ix->rd.db, "ROLLBACK", NULL, NULL, NULL);
    }
    (void)pthread_mutex_unlock(&ix->rd.mu);
    sl__index_unref(ix);
}

/* Run a statement without result rows (BEGIN, COMMIT, a write). */
static int
step_done(struct sl__index *ix, int which, struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[which];
    int src = sqlite3_step(st);

    (void)sqlite3_reset(st);
    if (src != SQLITE_DONE) {
        return sl__index_db_err(ix, src, stmt_sql[which], err);
    }
    return 0;
}

/* Check that @id is a usable record id: non-empty, bounded, no NUL. */
static int
check_id(const char *id, size_t len, struct sl_err *err)
{
    if (id == NULL || len == 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "_recordid",
                          "a non-empty string _recordid is required");
    }
    if (len > SL_INDEX_ID_MAX || strlen(id) != len) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "_recordid",
                          "_recordid too long (max %u bytes) or contains NUL",
                          SL_INDEX_ID_MAX);
    }
    return 0;
}

/* Run tombstone statement @which for @id (and @version, @at). */
static int
tombstone(struct sl__index *ix,
          int which,
          const char *id,
          uint64_t version,
          int64_t at,
          struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[which];
    int rc = 0;

    if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK ||
        (which == SL__IX_TOMB_PUT &&
         (sqlite3_bind_int64(st, 2, (sqlite3_int64)version) != SQLITE_OK ||
          sqlite3_bind_int64(st, 3, at) != SQLITE_OK))) {
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    rc = step_done(ix, which, err);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

/*
 * Step SL__IX_OLD for @id: *found says whether the document is stored, and
 * then the statement stands on its row (id, title, text, path, author,
 * meta, version) until the caller resets it.
 */
static int
old_row(struct sl__index *ix, const char *id, int *found, struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_OLD];
    int src = 0;

    *found = 0;
    if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK) {
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *found = 1;
        return 0;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st); /* @id is bound SQLITE_STATIC */
    return src == SQLITE_DONE ? 0 : sl__index_db_err(ix, src, "read", err);
}

static void
old_done(struct sl__index *ix)
{
    (void)sqlite3_reset(ix->st[SL__IX_OLD]);
    (void)sqlite3_clear_bindings(ix->st[SL__IX_OLD]);
}

/*
 * Look @id up once for a write: its stored row (SL__IX_OLD, which then
 * stands on the row until old_done) or else its tombstone.  A document and
 * a tombstone of one id never both exist: an upsert removes the tombstone
 * and a delete the document, each in the write's transaction.  *found says
 * whether the document is stored, *tomb (unless NULL) whether a tombstone
 * is, *known is the version of either (0 for none).
 */
static int
lookup(struct sl__index *ix,
       const char *id,
       int *found,
       int *tomb,
       uint64_t *known,
       struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_TOMB_GET];
    int rc = old_row(ix, id, found, err);
    int src = 0;

    if (tomb != NULL) {
        *tomb = 0;
    }
    *known = 0;
    if (rc != 0 || *found) {
        if (*found) {
            *known =
                (uint64_t)sqlite3_column_int64(ix->st[SL__IX_OLD], OLD_VERSION);
        }
        return rc;
    }
    if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK) {
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        if (tomb != NULL) {
            *tomb = 1;
        }
        *known = (uint64_t)sqlite3_column_int64(st, 0);
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return src == SQLITE_ROW || src == SQLITE_DONE
               ? 0
               : sl__index_db_err(ix, src, "version", err);
}

/*
 * Take the terms of stored row @rowid out of the FTS table: an
 * external-content FTS5 table needs the values it indexed then, read from
 * the row (before it changes) and given to FTS5's 'delete' as values: one
 * INSERT ... SELECT would open a statement savepoint, at which FTS5 writes
 * out the terms pending in the transaction, a segment per document
 * changed or deleted.
 */
static int
fts_delete_old(struct sl__index *ix, sqlite3_int64 rowid, struct sl_err *err)
{
    sqlite3_stmt *old = ix->st[SL__IX_FTS_OLD];
    sqlite3_stmt *st = ix->st[SL__IX_FTS_DEL];
    int src = SQLITE_OK;
    int rc = 0;
    int i = 0;

    if (sqlite3_bind_int64(old, 1, rowid) != SQLITE_OK) {
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    src = sqlite3_step(old);
    if (src == SQLITE_ROW) {
        src = sqlite3_bind_int64(st, 1, rowid);
        for (i = 0; i < 4 && src == SQLITE_OK; i++) {
            src = sqlite3_bind_value(st, i + 2, sqlite3_column_value(old, i));
        }
        rc = src == SQLITE_OK ? step_done(ix, SL__IX_FTS_DEL, err)
                              : sl__index_db_err(ix, src, "bind", err);
    } else if (src != SQLITE_DONE) {
        rc = sl__index_db_err(ix, src, "read the old row", err);
    }
    (void)sqlite3_reset(old);
    (void)sqlite3_clear_bindings(old);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

/* Step @which (SL__IX_COLS_PUT or SL__IX_COLS_DEL) for row @rowid. */
static int
cols_step(struct sl__index *ix,
          int which,
          sqlite3_int64 rowid,
          struct sl_err *err)
{
    int rc = 0;

    if (sqlite3_bind_int64(ix->st[which], 1, rowid) != SQLITE_OK) {
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    rc = step_done(ix, which, err);
    (void)sqlite3_clear_bindings(ix->st[which]);
    return rc;
}

/* Index the title, text, path and author of @doc under FTS rowid @rowid. */
static int
fts_add(struct sl__index *ix,
        sqlite3_int64 rowid,
        const json_t *doc,
        struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_FTS_ADD];
    size_t i = 0;
    int rc = 0;

    if (sqlite3_bind_int64(st, 1, rowid) != SQLITE_OK) {
        rc = sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    for (i = 0; i < SL__IX_NFTS && rc == 0; i++) {
        rc = sl__index_bind_field(st, doc, i, err);
    }
    if (rc == 0) {
        rc = sl__index_bind_field(st, doc, SL__IX_F_URL, err);
    }
    if (rc == 0) {
        rc = step_done(ix, SL__IX_FTS_ADD, err);
    }
    (void)sqlite3_clear_bindings(st);
    return rc;
}

/* Does the stored row SL__IX_OLD stands on equal the new values (the
 * text by its SHA-256 @hex)? */
static int
old_equals(struct sl__index *ix,
           const json_t *text,
           const char *hex,
           const char *meta_text,
           uint64_t version)
{
    sqlite3_stmt *old = ix->st[SL__IX_OLD];
    const char *m = (const char *)sqlite3_column_text(old, OLD_META);
    const char *h = (const char *)sqlite3_column_text(old, OLD_SHA256);

    return (uint64_t)sqlite3_column_int64(old, OLD_VERSION) == version &&
           m != NULL && strcmp(m, meta_text) == 0 && h != NULL &&
           strcmp(h, hex) == 0 &&
           sqlite3_column_int(old, OLD_NOTEXT) == !json_is_string(text);
}

/* Bind the text of @doc packed (NULL: none) as UPSERT_TEXT into @packed,
 * which the caller frees after the statement ran. */
static int
bind_packed(struct sl__index *ix,
            const json_t *text,
            struct sl__index_packed *packed,
            struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_UPSERT];
    int src = SQLITE_OK;

    if (!json_is_string(text)) {
        src = sqlite3_bind_null(st, UPSERT_TEXT);
    } else if (sl__index_text_pack(ix->pack,
                                   json_string_value(text),
                                   json_string_length(text),
                                   packed) != 0) {
        return sl_err_set(err,
                          SL_ETOOLARGE,
                          "text",
                          "text too long (max %u bytes)",
                          (unsigned)SL__IX_TEXT_MAX);
    } else {
        src = sqlite3_bind_blob64(
            st, UPSERT_TEXT, packed->data, packed->len, SQLITE_STATIC);
    }
    return src == SQLITE_OK ? 0
                            : sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
}

/* The source of upsert @op (op->source, else the document's _source)
 * holds its document. */
static int
src_add(struct sl__index *ix, const struct sl_index_op *op, struct sl_err *err)
{
    const char *source =
        op->source != NULL
            ? op->source
            : json_string_value(json_object_get(op->doc, "_source"));

    if (source == NULL || source[0] == '\0') {
        return 0;
    }
    return sl__index_src_step(
        ix,
        SL__IX_SRC_ADD,
        json_string_value(json_object_get(op->doc, "_recordid")),
        source,
        NULL,
        err);
}

/*
 * Upsert one document inside the open transaction.  The stored metadata is
 * the document without "text" (compact, sorted keys, so an unchanged
 * document compares equal and nothing is written).  The FTS table is kept
 * in step here, not by triggers (see schema_sql).
 */
static int
write_doc(struct sl__index *ix, struct sl_index_op *op, struct sl_err *err)
{
    const json_t *doc = op->doc;
    sqlite3_stmt *st = ix->st[SL__IX_UPSERT];
    const json_t *jid = json_object_get(doc, "_recordid");
    const json_t *jtext = json_object_get(doc, "text");
    sqlite3_int64 rowid = 0;
    struct sl__index_packed packed = {NULL, 0};
    json_t *meta = NULL;
    char *meta_text = NULL;
    char hex[65];
    size_t i = 0;
    uint64_t known = 0;
    int found = 0;
    int tomb = 0;
    int rc = 0;

    if (!json_is_object(doc)) {
        return sl_err_set(err, SL_EINVAL, NULL, "a document must be an object");
    }
    rc = check_id(json_string_value(jid), json_string_length(jid), err);
    if (rc != 0) {
        return rc;
    }
    rc = lookup(ix, json_string_value(jid), &found, &tomb, &known, err);
    if (rc != 0) {
        goto out;
    }
    if (op->version > 0 && known > op->version) {
        op->skipped = 1; /* a newer version won; the source still holds
                            the document when it is stored */
        rc = found ? src_add(ix, op, err) : 0;
        goto out;
    }
    for (i = 0; i < SL__IX_NFIELDS && rc == 0; i++) {
        rc = sl__index_bind_field(st, doc, i, err);
    }
    if (rc != 0) {
        goto out;
    }
    if (json_is_string(jtext)) {
        sl_sha256_hex(json_string_value(jtext), json_string_length(jtext), hex);
    } else {
        sl_sha256_hex("", 0, hex);
    }
    /* json_copy does not modify its argument; jansson lacks a const one. */
    meta = json_copy((json_t *)doc);
    (void)json_object_del(meta, "text");
    (void)json_object_del(meta, "_version"); /* kept in its column */
    meta_text = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
    if (meta_text == NULL) {
        rc = sl_err_set(err, SL_EINVAL, NULL, "document cannot be encoded");
        goto out;
    }
    if (sqlite3_bind_text(st, 1, json_string_value(jid), -1, SQLITE_STATIC) !=
            SQLITE_OK ||
        sqlite3_bind_text(st, UPSERT_SHA256, hex, -1, SQLITE_TRANSIENT) !=
            SQLITE_OK ||
        sqlite3_bind_text(st, UPSERT_META, meta_text, -1, SQLITE_STATIC) !=
            SQLITE_OK ||
        sqlite3_bind_int64(st, UPSERT_VERSION, (sqlite3_int64)op->version) !=
            SQLITE_OK) {
        rc = sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
        goto out;
    }
    if (found) {
        if (old_equals(ix, jtext, hex, meta_text, op->version)) {
            rc = src_add(ix, op, err);
            goto out; /* stored as it is: no tombstone either */
        }
        rowid = sqlite3_column_int64(ix->st[SL__IX_OLD], 0);
        old_done(ix);
        rc = fts_delete_old(ix, rowid, err);
    }
    if (rc == 0) {
        rc = bind_packed(ix, jtext, &packed, err);
    }
    if (rc == 0) {
        rc = step_done(ix, SL__IX_UPSERT, err);
        rowid = found ? rowid : sqlite3_last_insert_rowid(ix->db);
    }
    if (rc == 0) {
        rc = cols_step(ix, SL__IX_COLS_PUT, rowid, err);
    }
    if (rc == 0) {
        rc = fts_add(ix, rowid, doc, err);
    }
    if (rc == 0 && tomb) {
        rc = tombstone(ix, SL__IX_TOMB_DEL, json_string_value(jid), 0, 0, err);
    }
    if (rc == 0) {
        rc = src_add(ix, op, err);
    }

out:
    old_done(ix);
    (void)sqlite3_clear_bindings(st);
    sl_free(packed.data);
    json_decref(meta);
    sl_free(meta_text);
    return rc;
}

/* Delete one document inside the open transaction; absent is fine. */
static int
delete_doc(struct sl__index *ix, struct sl_index_op *op, struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_DELETE];
    const char *id = op->id;
    uint64_t known = 0;
    int found = 0;
    int rc = 0;

    rc = check_id(id, id ? strlen(id) : 0, err);
    if (rc != 0) {
        return rc;
    }
    rc = lookup(ix, id, &found, NULL, &known, err);
    if (rc == 0 && op->version > 0 && known > op->version) {
        old_done(ix);
        op->skipped = 1;
        return 0;
    }
    if (rc == 0 && op->source != NULL && op->source[0] != '\0') {
        /* a delete from one source: the document stays while another
         * holds it */
        int others = 0;

        rc = sl__index_src_step(ix, SL__IX_SRC_DEL, id, op->source, NULL, err);
        if (rc == 0) {
            rc = sl__index_src_step(ix, SL__IX_SRC_ANY, id, NULL, &others, err);
        }
        if (rc != 0 || others) {
            old_done(ix);
            op->kept = rc == 0;
            return rc;
        }
    }
    if (rc == 0) {
        rc = sl__index_src_step(ix, SL__IX_SRC_DROP, id, NULL, NULL, err);
    }
    if (rc == 0 && found) {
        sqlite3_int64 rowid = sqlite3_column_int64(ix->st[SL__IX_OLD], 0);

        old_done(ix);
        rc = fts_delete_old(ix, rowid, err);
        if (rc == 0 && sqlite3_bind_int64(st, 1, rowid) != SQLITE_OK) {
            rc = sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
        }
        if (rc == 0) {
            rc = step_done(ix, SL__IX_DELETE, err);
        }
        (void)sqlite3_clear_bindings(st);
        if (rc == 0) {
            rc = cols_step(ix, SL__IX_COLS_DEL, rowid, err);
        }
    }
    if (rc == 0 && op->version > 0) {
        rc = tombstone(
            ix, SL__IX_TOMB_PUT, id, op->version, sl_time_ms() / 1000, err);
    }
    return rc;
}

/* The record id of @op (NULL when the document has none). */
static const char *
op_id(const struct sl_index_op *op)
{
    return op->doc != NULL
               ? json_string_value(json_object_get(op->doc, "_recordid"))
               : op->id;
}

/*
 * Check op @i of @n before anything is written, so that a batch with a
 * bad document writes nothing on any shard: the checks write_doc and
 * delete_doc (and sl__index_bind_field) make.
 */
static int
check_op(const struct sl_index_op *op, size_t i, size_t n, struct sl_err *err)
{
    const char *id = op_id(op);
    int rc = 0;

    if (op->doc != NULL && !json_is_object(op->doc)) {
        rc = sl_err_set(err, SL_EINVAL, NULL, "a document must be an object");
    } else if (op->doc != NULL) {
        const json_t *jid = json_object_get(op->doc, "_recordid");

        rc = check_id(json_string_value(jid), json_string_length(jid), err);
    } else {
        rc = check_id(id, id ? strlen(id) : 0, err);
    }
    if (rc == 0 && op->doc != NULL) {
        rc = sl__index_check_fields(op->doc, err);
    }
    if (rc != 0 && err != NULL && n > 1) {
        (void)snprintf(err->field, sizeof(err->field), "ops[%zu]", i);
    }
    return rc;
}

/*
 * The ops of @ops whose shard (@which) is @ix's, in one IMMEDIATE
 * transaction: a reader never sees half of them, a failure leaves nothing
 * of them behind.  @which NULL: all of them.
 */
static int
apply_shard(struct sl__index *ix,
            struct sl_index_op *ops,
            const unsigned *which,
            size_t n,
            struct sl_err *err)
{
    size_t i = 0;
    int rc = 0;

    rc = step_done(ix, SL__IX_BEGIN, err);
    if (rc != 0) {
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (which != NULL && which[i] != ix->shard) {
            continue;
        }
        ops[i].skipped = 0;
        rc = ops[i].doc != NULL ? write_doc(ix, &ops[i], err)
                                : delete_doc(ix, &ops[i], err);
        if (rc != 0 && err != NULL && n > 1) {
            (void)snprintf(err->field, sizeof(err->field), "ops[%zu]", i);
        }
    }
    if (rc == 0 && sl_mono_ms() - ix->pruned_ms > PRUNE_EVERY_MS) {
        sqlite3_stmt *st = ix->st[SL__IX_TOMB_PRUNE];

        ix->pruned_ms = sl_mono_ms();
        (void)sqlite3_bind_int64(
            st, 1, sl_time_ms() / 1000 - SL_INDEX_TOMBSTONE_SECONDS);
        rc = step_done(ix, SL__IX_TOMB_PRUNE, err);
    }
    if (rc == 0) {
        rc = step_done(ix, SL__IX_COMMIT, err);
    }
    if (rc != 0) {
        (void)step_done(ix, SL__IX_ROLLBACK, NULL);
    } else {
        sl__index_merge_due(ix);
    }
    return rc;
}

int
sl__index_apply_locked(struct sl__index *ix,
                       struct sl_index_op *ops,
                       size_t n,
                       struct sl_err *err)
{
    return apply_shard(ix, ops, NULL, n, err);
}

int
sl_index_op_check(const struct sl_index_op *op, struct sl_err *err)
{
    return check_op(op, 0, 1, err);
}

/*
 * All writes go through here.  Each shard's part of the batch is one
 * transaction; the shards are taken in the order they become free (a
 * first pass takes those no other writer holds), so two writers work on
 * two shards at once.  A failure stops at that shard: the shards written
 * before stay written, which a retry of the same (idempotent) batch
 * completes.  Bad input is found before anything is written.  Without
 * @create a missing index makes the call a no-op.
 */
static int
apply(struct sl_index_set *set,
      const char *index,
      struct sl_index_op *ops,
      size_t n,
      int create,
      struct sl_err *err)
{
    struct sl__index *ix = NULL;
    unsigned *which = NULL;
    unsigned char *done = NULL;
    unsigned nshards = 0;
    unsigned left = 0;
    unsigned s = 0;
    size_t i = 0;
    int pass = 0;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        rc = check_op(&ops[i], i, n, err);
    }
    if (rc != 0) {
        return rc;
    }
    rc = sl__index_nshards(set, index, create, &nshards, err);
    if (rc == SL_ENOENT && !create) {
        sl_err_clear(err);
        return 0;
    }
    if (rc != 0 || n == 0) {
        return rc;
    }
    which = sl_malloc(n * sizeof(*which));
    done = sl_calloc(nshards, 1);
    for (s = 0; s < nshards; s++) {
        done[s] = 1;
    }
    for (i = 0; i < n; i++) {
        which[i] = sl__index_shard_of(op_id(&ops[i]), nshards);
        left += done[which[i]];
        done[which[i]] = 0;
    }
    for (pass = 0; pass < 2 && left > 0 && rc == 0; pass++) {
        for (s = 0; s < nshards && left > 0 && rc == 0; s++) {
            if (done[s]) {
                continue;
            }
            rc = sl__index_acquire(set, index, s, 1, pass == 0, &ix, err);
            if (rc == 1) {
                rc = 0; /* busy: the second pass waits for it */
                continue;
            }
            if (rc == 0) {
                rc = apply_shard(ix, ops, nshards > 1 ? which : NULL, n, err);
                sl__index_release(ix);
                done[s] = 1;
                left--;
            }
        }
    }
    sl_free(done);
    sl_free(which);
    return rc;
}

int
sl_index_shards(struct sl_index_set *set,
                const char *index,
                int create,
                unsigned *n,
                struct sl_err *err)
{
    return sl__index_nshards(set, index, create, n, err);
}

unsigned
sl_index_shard_of(const char *id, unsigned n)
{
    return sl__index_shard_of(id, n);
}

int
sl_index_apply_shard(struct sl_index_set *set,
                     const char *index,
                     unsigned shard,
                     struct sl_index_op *ops,
                     size_t n,
                     int try,
                     struct sl_err *err)
{
    struct sl__index *ix = NULL;
    unsigned nshards = 0;
    size_t i = 0;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        rc = check_op(&ops[i], i, n, err);
    }
    if (rc == 0) {
        rc = sl__index_nshards(set, index, 1, &nshards, err);
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (sl__index_shard_of(op_id(&ops[i]), nshards) != shard) {
            rc = sl_err_set(
                err, SL_EINVAL, NULL, "ops[%zu] is not on shard %u", i, shard);
        }
    }
    if (rc == 0 && shard >= nshards) {
        rc = sl_err_set(err, SL_EINVAL, NULL, "no shard %u", shard);
    }
    if (rc != 0) {
        return rc;
    }
    rc = sl__index_acquire(set, index, shard, 1, try, &ix, err);
    if (rc != 0) {
        return rc; /* 1: busy */
    }
    rc = apply_shard(ix, ops, NULL, n, err);
    sl__index_release(ix);
    return rc;
}

int
sl_index_apply(struct sl_index_set *set,
               const char *index,
               struct sl_index_op *ops,
               size_t n,
               struct sl_err *err)
{
    return apply(set, index, ops, n, 1, err);
}

int
sl_index_upsert(struct sl_index_set *set,
                const char *index,
                const json_t *doc,
                struct sl_err *err)
{
    struct sl_index_op op = {doc, NULL, 0, 0, NULL, 0};

    return apply(set, index, &op, 1, 1, err);
}

int
sl_index_delete(struct sl_index_set *set,
                const char *index,
                const char *id,
                struct sl_err *err)
{
    struct sl_index_op op = {NULL, id, 0, 0, NULL, 0};

    return apply(set, index, &op, 1, 0, err);
}
