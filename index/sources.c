/*
 * The sources that hold each document (docs/index.md "Sources"): the
 * statements on the `doc_sources` table, and the purge of one source.  The
 * upsert and delete paths of index.c keep the table in step within their
 * transaction.
 */
#include <string.h>

#include "index/index.h"
#include "index/index_int.h"

#define PURGE_PAGE 256u /* documents per purge transaction */

int
sl__index_src_step(struct sl__index *ix,
                   int which,
                   const char *id,
                   const char *source,
                   int *row,
                   struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[which];
    int src = SQLITE_OK;

    if (row != NULL) {
        *row = 0;
    }
    if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK ||
        (source != NULL &&
         sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC) != SQLITE_OK)) {
        (void)sqlite3_clear_bindings(st);
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    src = sqlite3_step(st);
    if (src == SQLITE_ROW && row != NULL) {
        *row = 1;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return src == SQLITE_ROW || src == SQLITE_DONE
               ? 0
               : sl__index_db_err(ix, src, "sources", err);
}

/* The next page of ids @source holds in @ix after document row *@after,
 * as a new JSON array of strings in *@ids; *@after becomes the page's
 * last row. */
static int
purge_page(struct sl__index *ix,
           const char *source,
           sqlite3_int64 *after,
           json_t **ids,
           struct sl_err *err)
{
    sqlite3_stmt *st = ix->st[SL__IX_SRC_PAGE];
    int src = SQLITE_OK;

    *ids = json_array();
    if (sqlite3_bind_text(st, 1, source, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(st, 2, *after) != SQLITE_OK ||
        sqlite3_bind_int(st, 3, (int)PURGE_PAGE) != SQLITE_OK) {
        (void)sqlite3_clear_bindings(st);
        return sl__index_db_err(ix, SQLITE_ERROR, "bind", err);
    }
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        (void)json_array_append_new(
            *ids, json_string((const char *)sqlite3_column_text(st, 0)));
        *after = sqlite3_column_int64(st, 1);
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return src == SQLITE_DONE ? 0 : sl__index_db_err(ix, src, "sources", err);
}

/* Purge @source from shard @s, one page per transaction. */
static int
purge_shard(struct sl_index_set *set,
            const char *index,
            unsigned s,
            const char *source,
            uint64_t version,
            uint64_t counts[2],
            struct sl_err *err)
{
    struct sl_index_op ops[PURGE_PAGE];
    sqlite3_int64 after = 0;
    int rc = 0;

    for (;;) {
        struct sl__index *ix = NULL;
        json_t *ids = NULL;
        size_t n = 0;
        size_t i = 0;

        rc = sl__index_acquire(set, index, s, 0, 0, &ix, err);
        if (rc != 0) {
            break;
        }
        rc = purge_page(ix, source, &after, &ids, err);
        n = json_array_size(ids);
        for (i = 0; i < n && rc == 0; i++) {
            memset(&ops[i], 0, sizeof(ops[i]));
            ops[i].id = json_string_value(json_array_get(ids, i));
            ops[i].version = version;
            ops[i].source = source;
        }
        if (rc == 0 && n > 0) {
            rc = sl__index_apply_locked(ix, ops, n, err);
        }
        sl__index_release(ix);
        for (i = 0; i < n && rc == 0; i++) {
            counts[ops[i].kept ? 1 : 0] += ops[i].skipped ? 0 : 1;
        }
        json_decref(ids);
        if (rc != 0 || n < PURGE_PAGE) {
            break;
        }
    }
    return rc;
}

int
sl_index_purge_source(struct sl_index_set *set,
                      const char *index,
                      const char *source,
                      uint64_t version,
                      uint64_t *deleted,
                      uint64_t *kept,
                      struct sl_err *err)
{
    uint64_t counts[2] = {0, 0};
    unsigned n = 0;
    unsigned s = 0;
    int rc = 0;

    if (source == NULL || source[0] == '\0') {
        return sl_err_set(err, SL_EINVAL, "source", "a source is required");
    }
    rc = sl__index_nshards(set, index, 0, &n, err);
    if (rc == SL_ENOENT) {
        sl_err_clear(err);
        n = 0;
        rc = 0;
    }
    for (s = 0; s < n && rc == 0; s++) {
        rc = purge_shard(set, index, s, source, version, counts, err);
    }
    if (rc == SL_ENOENT) { /* the index was deleted meanwhile: all gone */
        sl_err_clear(err);
        rc = 0;
    }
    if (deleted != NULL) {
        *deleted = counts[0];
    }
    if (kept != NULL) {
        *kept = counts[1];
    }
    return rc;
}
