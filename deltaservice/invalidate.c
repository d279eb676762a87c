/*
 * Invalidation of delta entries (docs/deltaservice.md "Re-indexing a
 * source"): what clearing a source over REST does.  An invalidated entry
 * keeps its key, flags, visited sequence and compound link, and loses its
 * hash (length 0).  No record has an empty hash (a record without one is
 * never looked up nor stored), so the next check of the record finds it
 * CHANGED and the record is pushed again, while an entry the next run
 * does not visit is obsolete for its delta-delete as before: what was
 * indexed is never forgotten.
 *
 * Entries are rewritten in bounded write transactions (INVALIDATE_TXN_MAX
 * entries looked at per transaction), resuming after the last key of the
 * previous one; an interrupted call leaves some entries invalidated and
 * the others as they were, and calling it again completes it.
 */
#include <string.h>

#include "deltaservice/deltaservice_int.h"

#define INVALIDATE_TXN_MAX 10000 /* entries looked at per transaction */

/* The position of an invalidation in one shard: the last key done. */
struct pos {
    const unsigned char *prefix; /* "source\0", or "" for every source */
    size_t plen;
    unsigned char *last; /* d->maxkey bytes */
    size_t lastlen;      /* 0: start at the prefix */
    unsigned char *buf;  /* one value being rewritten */
    size_t bcap;
};

static int
in_range(const struct pos *p, const MDB_val *k)
{
    return k->mv_size >= p->plen && memcmp(k->mv_data, p->prefix, p->plen) == 0;
}

/* Put the cursor on the first key of the range after p->last. */
static int
seek(MDB_cursor *cur, const struct pos *p, MDB_val *k, MDB_val *v)
{
    int rc = 0;

    if (p->lastlen == 0 && p->plen == 0) {
        return mdb_cursor_get(cur, k, v, MDB_FIRST); /* no empty keys */
    }
    k->mv_data = p->lastlen > 0 ? p->last : (unsigned char *)p->prefix;
    k->mv_size = p->lastlen > 0 ? p->lastlen : p->plen;
    rc = mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
    if (rc == 0 && p->lastlen > 0 && k->mv_size == p->lastlen &&
        memcmp(k->mv_data, p->last, p->lastlen) == 0) {
        rc = mdb_cursor_get(cur, k, v, MDB_NEXT);
    }
    return rc;
}

/*
 * Empty the hash of the entry under the cursor (key @k, value @v) unless
 * it is empty already; the key is in p->last.  The value shrinks, so
 * MDB_CURRENT replaces it (the cursor stays on it).
 */
static int
invalidate_one(MDB_cursor *cur, struct pos *p, MDB_val *v, int *dirty)
{
    struct sl__delta_val val;
    MDB_val k = {p->lastlen, p->last};
    MDB_val nv;
    size_t need = 0;

    if (sl__delta_val_decode(v->mv_data, v->mv_size, &val) != 0) {
        return MDB_CORRUPTED;
    }
    if (val.hash_len == 0) {
        return 0;
    }
    val.hash = "";
    val.hash_len = 0;
    need = sl__delta_val_size(&val);
    if (need > p->bcap) {
        p->buf = sl_realloc(p->buf, need);
        p->bcap = need;
    }
    sl__delta_val_encode(&val, p->buf); /* reads the page, writes buf */
    nv.mv_size = need;
    nv.mv_data = p->buf;
    *dirty = 1;
    return mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
}

/*
 * Invalidate up to INVALIDATE_TXN_MAX entries of the range of shard @s
 * after p->last in one write transaction (committed when it wrote);
 * *more says whether entries may remain.  Returns an LMDB code.
 */
static int
invalidate_some(struct sl_delta *d,
                const struct sl__delta_shard *s,
                struct pos *p,
                int *more)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k;
    MDB_val v;
    int dirty = 0;
    int n = 0;
    int rc = 0;

    *more = 0;
    rc = mdb_txn_begin(s->env, NULL, 0, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, s->entries, &cur);
    }
    if (rc == 0) {
        rc = seek(cur, p, &k, &v);
    }
    while (rc == 0 && in_range(p, &k)) {
        if (n++ == INVALIDATE_TXN_MAX) {
            *more = 1;
            break;
        }
        memcpy(p->last, k.mv_data, k.mv_size);
        p->lastlen = k.mv_size;
        rc = invalidate_one(cur, p, &v, &dirty);
        if (rc == 0) {
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        }
    }
    if (rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (rc == 0 && dirty) {
        rc = sl__delta_commit(d, s->env, txn);
    } else if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

int
sl_delta_invalidate(struct sl_delta *d, const char *source, struct sl_err *err)
{
    unsigned char prefix[SL_DELTA_SOURCE_MAX + 1];
    struct pos p;
    unsigned i = 0;
    int more = 0;
    int rc = 0;

    if (source != NULL) {
        rc = sl__delta_check_source(source, err);
        if (rc != 0) {
            return rc;
        }
    }
    memset(&p, 0, sizeof(p));
    p.plen = source != NULL ? strlen(source) + 1 : 0;
    if (source != NULL) {
        memcpy(prefix, source, p.plen); /* with its NUL */
    }
    p.prefix = prefix;
    p.last = sl_malloc(d->maxkey);
    for (i = 0; i < d->nshards && rc == 0; i++) {
        p.lastlen = 0;
        for (more = 1; rc == 0 && more;) {
            rc = invalidate_some(d, &d->shards[i], &p, &more);
        }
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)i, "invalidate");
        }
    }
    sl_free(p.buf);
    sl_free(p.last);
    return rc;
}

/* Invalidated entries of the range of @p in shard @s (a read
 * transaction).  Returns an LMDB code. */
static int
count_shard(const struct sl__delta_shard *s, struct pos *p, uint64_t *n)
{
    struct sl__delta_val val;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k;
    MDB_val v;
    int rc = 0;

    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, s->entries, &cur);
    }
    if (rc == 0) {
        rc = seek(cur, p, &k, &v);
    }
    while (rc == 0 && in_range(p, &k)) {
        if (sl__delta_val_decode(v.mv_data, v.mv_size, &val) != 0) {
            rc = MDB_CORRUPTED;
            break;
        }
        *n += val.hash_len == 0;
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

int
sl_delta_invalidated_count(struct sl_delta *d,
                           const char *source,
                           uint64_t *total,
                           struct sl_err *err)
{
    unsigned char prefix[SL_DELTA_SOURCE_MAX + 1];
    struct pos p;
    unsigned i = 0;
    int rc = sl__delta_check_source(source, err);

    *total = 0;
    if (rc != 0) {
        return rc;
    }
    memset(&p, 0, sizeof(p));
    p.plen = strlen(source) + 1;
    memcpy(prefix, source, p.plen);
    p.prefix = prefix;
    for (i = 0; i < d->nshards && rc == 0; i++) {
        rc = count_shard(&d->shards[i], &p, total);
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)i, "count invalidated");
        }
    }
    return rc;
}
