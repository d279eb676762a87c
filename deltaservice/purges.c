/*
 * Purges under way (docs/deltaservice.md "Purging a source"): a purge
 * forgets a source's entries and then has its documents deleted from the
 * indexes.  The mark, in the meta environment's DB "purges" (source ->
 * u64 start time in ms), is set before the first step and removed after
 * the last, so a purge a crash interrupted is found at the next start and
 * carried out again; every step of it may be repeated.
 */
#include <string.h>

#include "deltaservice/deltaservice_int.h"

int
sl_delta_purge_mark(struct sl_delta *d,
                    const char *source,
                    int pending,
                    struct sl_err *err)
{
    MDB_txn *txn = NULL;
    MDB_val k = {0, NULL};
    MDB_val v = {0, NULL};
    unsigned char stamp[8];
    int rc = sl__delta_check_source(source, err);

    if (rc != 0) {
        return rc;
    }
    k.mv_size = strlen(source);
    k.mv_data = (void *)source;
    rc = mdb_txn_begin(d->meta, NULL, 0, &txn);
    if (rc == 0 && pending) {
        sl_le_put64(stamp, (uint64_t)sl_time_ms());
        v.mv_size = sizeof(stamp);
        v.mv_data = stamp;
        rc = mdb_put(txn, d->meta_purges, &k, &v, 0);
    } else if (rc == 0) {
        rc = mdb_del(txn, d->meta_purges, &k, NULL);
        rc = rc == MDB_NOTFOUND ? 0 : rc;
    }
    if (rc == 0) {
        rc = sl__delta_commit(d, d->meta, txn);
        txn = NULL;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc != 0 ? sl__delta_lmdb_err(d, err, rc, -1, "mark a purge") : 0;
}

int
sl_delta_purge_is_marked(struct sl_delta *d, const char *source)
{
    MDB_txn *txn = NULL;
    MDB_val k = {0, NULL};
    MDB_val v = {0, NULL};
    int rc = 0;

    if (sl_delta_source_check(source, NULL) != 0) {
        return 0;
    }
    k.mv_size = strlen(source);
    k.mv_data = (void *)source;
    rc = mdb_txn_begin(d->meta, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_get(txn, d->meta_purges, &k, &v);
        mdb_txn_abort(txn);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) {
        SL_ERROR("delta service: is a purge of %s marked: %s",
                 source,
                 mdb_strerror(rc));
    }
    return rc == 0;
}

int
sl_delta_purges_pending(struct sl_delta *d,
                        int (*cb)(void *ctx, const char *source),
                        void *ctx,
                        struct sl_err *err)
{
    char name[SL_DELTA_SOURCE_MAX + 1];
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k = {0, NULL};
    MDB_val v = {0, NULL};
    int first = 1;
    int stop = 0;
    int rc = 0;

    /* one source per read transaction: @cb may mark and unmark */
    for (;;) {
        rc = mdb_txn_begin(d->meta, NULL, MDB_RDONLY, &txn);
        if (rc == 0) {
            rc = mdb_cursor_open(txn, d->meta_purges, &cur);
        }
        if (rc == 0 && first) {
            rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
        } else if (rc == 0) {
            MDB_val after = {strlen(name), name};

            k = after;
            rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
            if (rc == 0 && k.mv_size == after.mv_size &&
                memcmp(k.mv_data, name, k.mv_size) == 0) {
                rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
            }
        }
        if (rc == 0 && k.mv_size > SL_DELTA_SOURCE_MAX) {
            rc = MDB_CORRUPTED;
        }
        if (rc == 0) {
            memcpy(name, k.mv_data, k.mv_size);
            name[k.mv_size] = '\0';
            first = 0;
        }
        if (cur != NULL) {
            mdb_cursor_close(cur);
            cur = NULL;
        }
        if (txn != NULL) {
            mdb_txn_abort(txn);
            txn = NULL;
        }
        if (rc != 0) {
            break;
        }
        stop = cb(ctx, name);
        if (stop != 0) {
            return stop;
        }
    }
    return rc == MDB_NOTFOUND
               ? 0
               : sl__delta_lmdb_err(d, err, rc, -1, "list the purges");
}
