/*
 * Private to index/: one open index (a SQLite connection, its mutex and its
 * prepared statements) and the helpers shared by the write side (index.c)
 * and the read side (query.c).
 */
#ifndef SL_INDEX_INT_H_INCLUDED
#define SL_INDEX_INT_H_INCLUDED

#include <pthread.h>

#include <sqlite3.h>

#include "index/index.h"

/* Prepared statements of one index, created at open and reused. */
enum {
    SL__IX_BEGIN,
    SL__IX_COMMIT,
    SL__IX_ROLLBACK,
    SL__IX_UPSERT,
    SL__IX_DELETE,
    SL__IX_GET,
    SL__IX_COUNT,
    SL__IX_SEARCH,
    SL__IX_TOTAL,
    SL__IX_RECORDS,
    SL__IX_VERSIONS,
    SL__IX_TOMB_PUT,
    SL__IX_TOMB_DEL,
    SL__IX_TOMB_PRUNE,
    SL__IX_OLD,
    SL__IX_FTS_ADD,
    SL__IX_FTS_DEL,
    SL__IX_NSTMT
};

struct sl__index {
    char name[SL_NAME_MAX + 1];
    sqlite3 *db;
    pthread_mutex_t mu; /* guards db and every statement */
    sqlite3_stmt *st[SL__IX_NSTMT];
    int64_t pruned_ms;      /* last tombstone pruning (sl_mono_ms) */
    struct sl__index *next; /* list of the set */
};

/**
 * Find (or open) index @p name and lock its mutex.  With @p create the
 * database is created when missing; without it a missing one is SL_ENOENT.
 * Release with sl__index_release.
 */
int sl__index_acquire(struct sl_index_set *set,
                      const char *name,
                      int create,
                      struct sl__index **out,
                      struct sl_err *err);
/** Reset the statements used and unlock @p ix. */
void sl__index_release(struct sl__index *ix);
/** Map a SQLite result code of @p ix to an SL_E* code with its message. */
int sl__index_db_err(struct sl__index *ix,
                     int src,
                     const char *what,
                     struct sl_err *err);
/** Directory of the set (borrowed). */
const char *sl__index_dir(const struct sl_index_set *set);

#endif /* SL_INDEX_INT_H_INCLUDED */
