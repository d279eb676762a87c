/*
 * Next checks of the entries of a continuous crawl (docs/deltaservice.md
 * "Next checks"): per record, when to check it again and the interval,
 * and per shard an index by that time, so the records due now are found
 * by one seek per shard and a read of exactly those.
 *
 * DB "recheck" of the record's shard (sl_delta_shard_of its id):
 *   key the primary key of the record (as "entries")
 *   value u64 next check (ms), u64 interval (ms), u64 the interval before
 *   the run that set it, u64 that run's sequence; little-endian.  A
 *   second check of a record in the same run (a retried task) starts
 *   again from the interval before the run: a run moves an interval one
 *   step at most.
 * DB "due" of the same shard, the index by time:
 *   key source '\0' u64 next check (big-endian, so keys sort by time)
 *       SHA-256(primary key)[0..16)
 *   value the record id
 * Both are written in one transaction; a record's "due" key is found from
 * its "recheck" value, so the two never disagree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "deltaservice/deltaservice_int.h"

#define DUE_KEY_MAX (SL_DELTA_SOURCE_MAX + 1 + 8 + SL__DELTA_DIGEST)
#define RECHECK_VAL 32
#define PK_MAX      2048 /* primary keys: d->maxkey, LMDB's key limit */

/* The "due" key of primary key @pk (@plen) at @next; returns its length. */
static size_t
due_key(const char *source,
        size_t slen,
        const unsigned char *pk,
        size_t plen,
        uint64_t next,
        unsigned char *out)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];

    memcpy(out, source, slen);
    out[slen] = '\0';
    sl_be_put64(out + slen + 1, next);
    (void)SHA256(pk, plen, digest);
    memcpy(out + slen + 1 + 8, digest, SL__DELTA_DIGEST);
    return slen + 1 + 8 + SL__DELTA_DIGEST;
}

int
sl__delta_recheck_drop(const struct sl_delta *d,
                       const struct sl__delta_shard *s,
                       MDB_txn *txn,
                       const char *source,
                       const unsigned char *pk,
                       size_t plen)
{
    unsigned char dk[DUE_KEY_MAX];
    MDB_val k = {plen, (void *)pk};
    MDB_val v;
    int rc = mdb_get(txn, s->recheck, &k, &v);

    (void)d;
    if (rc == MDB_NOTFOUND) {
        return 0;
    }
    if (rc == 0 && v.mv_size < 16) {
        rc = MDB_CORRUPTED;
    }
    if (rc == 0) {
        MDB_val dkv;

        dkv.mv_data = dk;
        dkv.mv_size = due_key(
            source, strlen(source), pk, plen, sl_le_get64(v.mv_data), dk);
        rc = mdb_del(txn, s->due, &dkv, NULL);
        rc = rc == MDB_NOTFOUND ? 0 : rc;
    }
    if (rc == 0) {
        rc = mdb_del(txn, s->recheck, &k, NULL);
    }
    return rc;
}

/* The next interval after @seen, from the stored @interval (0: none). */
static uint64_t
next_interval(enum sl_delta_seen seen,
              uint64_t interval,
              uint64_t min_ms,
              uint64_t max_ms)
{
    uint64_t next = 0;

    if (seen == SL_DELTA_SEEN_NEW || interval == 0) {
        next = min_ms;
    } else if (seen == SL_DELTA_SEEN_CHANGED) {
        next = interval / 2;
    } else {
        next = interval > max_ms / 2 ? max_ms : interval * 2;
    }
    /* within this call's bounds, also when the job changed them */
    return next < min_ms ? min_ms : next > max_ms ? max_ms : next;
}

/* The interval a check in run @seq starts from: the stored one, or when
 * the same run set it already, the one before that run. */
static uint64_t
base_interval(const MDB_val *v, uint64_t seq)
{
    const unsigned char *p = v->mv_data;

    if (v->mv_size == RECHECK_VAL && seq != 0 && sl_le_get64(p + 24) == seq) {
        return sl_le_get64(p + 16);
    }
    return v->mv_size >= 16 ? sl_le_get64(p + 8) : 0;
}

/* Set the next check of @it in shard @s's transaction @txn. */
static int
set_one(const struct sl_delta *d,
        const struct sl__delta_shard *s,
        MDB_txn *txn,
        const char *source,
        uint64_t seq,
        struct sl_delta_recheck *it,
        uint64_t now_ms,
        uint64_t min_ms,
        uint64_t max_ms)
{
    unsigned char pk[PK_MAX];
    unsigned char dk[DUE_KEY_MAX];
    unsigned char val[RECHECK_VAL];
    size_t slen = strlen(source);
    size_t idlen = strlen(it->id);
    size_t plen = sl__delta_key_len(d, slen, idlen);
    MDB_val k = {plen, pk};
    MDB_val v;
    uint64_t base = 0;
    uint64_t interval = 0;
    int rc = 0;

    if (plen > sizeof(pk)) {
        return MDB_BAD_VALSIZE;
    }
    (void)sl__delta_key(d, source, slen, it->id, idlen, pk);
    rc = mdb_get(txn, s->recheck, &k, &v);
    if (rc == 0) {
        base = base_interval(&v, seq);
    }
    rc = sl__delta_recheck_drop(d, s, txn, source, pk, plen);
    if (rc != 0) {
        return rc;
    }
    interval = next_interval(it->seen, base, min_ms, max_ms);
    it->next_ms =
        now_ms > UINT64_MAX - interval ? UINT64_MAX : now_ms + interval;
    sl_le_put64(val, it->next_ms);
    sl_le_put64(val + 8, interval);
    sl_le_put64(val + 16, base);
    sl_le_put64(val + 24, seq);
    v.mv_data = val;
    v.mv_size = sizeof(val);
    rc = mdb_put(txn, s->recheck, &k, &v, 0);
    if (rc == 0) {
        MDB_val dkv;
        MDB_val idv = {idlen, (void *)it->id};

        dkv.mv_data = dk;
        dkv.mv_size = due_key(source, slen, pk, plen, it->next_ms, dk);
        rc = mdb_put(txn, s->due, &dkv, &idv, 0);
    }
    return rc;
}

/* The items of @all in shard @shard, set in one transaction. */
static int
set_shard(struct sl_delta *d,
          unsigned shard,
          const char *source,
          uint64_t seq,
          struct sl_delta_recheck *all,
          const unsigned *shard_of,
          size_t n,
          uint64_t now_ms,
          uint64_t min_ms,
          uint64_t max_ms)
{
    const struct sl__delta_shard *s = &d->shards[shard];
    MDB_txn *txn = NULL;
    size_t i = 0;
    int rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        struct sl_delta_recheck *it = &all[i];

        if (it->result != 0 || shard_of[i] != shard) {
            continue;
        }
        if (txn == NULL) {
            rc = mdb_txn_begin(s->env, NULL, 0, &txn);
        }
        if (rc == 0) {
            rc = set_one(d, s, txn, source, seq, it, now_ms, min_ms, max_ms);
        }
    }
    if (rc == 0 && txn != NULL) {
        return sl__delta_commit(d, s->env, txn);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

int
sl_delta_recheck_set(struct sl_delta *d,
                     const char *source,
                     uint64_t seq,
                     struct sl_delta_recheck *items,
                     size_t n,
                     uint64_t now_ms,
                     uint64_t min_ms,
                     uint64_t max_ms,
                     struct sl_err *err)
{
    unsigned *shard_of = NULL;
    unsigned shard = 0;
    size_t i = 0;
    int rc = sl__delta_check_source(source, err);

    if (rc != 0) {
        return rc;
    }
    if (min_ms == 0 || max_ms < min_ms) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "interval",
                          "recheck intervals need 0 < min <= max");
    }
    shard_of = sl_calloc(n > 0 ? n : 1, sizeof(*shard_of));
    for (i = 0; i < n; i++) {
        size_t len = items[i].id != NULL ? strlen(items[i].id) : 0;

        items[i].next_ms = 0;
        items[i].result = len == 0 || len > SL_DELTA_ID_MAX ? SL_EINVAL : 0;
        shard_of[i] =
            items[i].result == 0 ? sl_delta_shard_of(d, items[i].id) : 0;
    }
    for (shard = 0; rc == 0 && shard < d->nshards; shard++) {
        rc = set_shard(
            d, shard, source, seq, items, shard_of, n, now_ms, min_ms, max_ms);
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)shard, "recheck");
        }
    }
    sl_free(shard_of);
    return rc;
}

/* The due records of @source in shard @shard, while *n < @max; returns
 * an LMDB code; a callback's non-zero value stops it in *@stop. */
static int
due_shard(struct sl_delta *d,
          unsigned shard,
          const char *source,
          uint64_t now_ms,
          size_t max,
          int (*cb)(void *ctx, const char *id, uint64_t due_ms),
          void *ctx,
          char *id, /* SL_DELTA_ID_MAX + 1 bytes */
          size_t *n,
          int *stop)
{
    const struct sl__delta_shard *s = &d->shards[shard];
    unsigned char from[DUE_KEY_MAX];
    size_t slen = strlen(source);
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k = {slen + 1, from};
    MDB_val v;
    int rc = 0;

    memcpy(from, source, slen);
    from[slen] = '\0';
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, s->due, &cur);
    }
    if (rc == 0) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    }
    while (rc == 0 && *n < max) {
        const unsigned char *kp = k.mv_data;
        uint64_t due = 0;

        if (k.mv_size != slen + 1 + 8 + SL__DELTA_DIGEST ||
            memcmp(kp, from, slen + 1) != 0) {
            break; /* past the source */
        }
        due = sl_be_get64(kp + slen + 1);
        if (due > now_ms) {
            break; /* the rest is later */
        }
        if (v.mv_size == 0 || v.mv_size > SL_DELTA_ID_MAX) {
            rc = MDB_CORRUPTED;
            break;
        }
        memcpy(id, v.mv_data, v.mv_size);
        id[v.mv_size] = '\0';
        (*n)++;
        *stop = cb(ctx, id, due);
        if (*stop != 0) {
            break;
        }
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
sl_delta_recheck_due(struct sl_delta *d,
                     const char *source,
                     uint64_t now_ms,
                     size_t max,
                     int (*cb)(void *ctx, const char *id, uint64_t due_ms),
                     void *ctx,
                     size_t *found,
                     struct sl_err *err)
{
    unsigned shard = 0;
    char *id = NULL;
    size_t n = 0;
    int stop = 0;
    int rc = sl__delta_check_source(source, err);

    *found = 0;
    if (rc != 0) {
        return rc;
    }
    id = sl_malloc(SL_DELTA_ID_MAX + 1);
    for (shard = 0; rc == 0 && !stop && shard < d->nshards && n < max;
         shard++) {
        rc = due_shard(d, shard, source, now_ms, max, cb, ctx, id, &n, &stop);
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)shard, "due scan");
        }
    }
    sl_free(id);
    *found = n;
    return rc != 0 ? rc : stop;
}

int
sl_delta_recheck_get(struct sl_delta *d,
                     const char *source,
                     const char *id,
                     uint64_t *next_ms,
                     uint64_t *interval_ms,
                     struct sl_err *err)
{
    unsigned char pk[PK_MAX];
    const struct sl__delta_shard *s = NULL;
    size_t slen = 0;
    MDB_txn *txn = NULL;
    MDB_val k;
    MDB_val v;
    int rc = sl__delta_check_source(source, err);

    *next_ms = 0;
    *interval_ms = 0;
    if (rc != 0) {
        return rc;
    }
    if (id == NULL || id[0] == '\0' || strlen(id) > SL_DELTA_ID_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "id",
                          "a record id of 1 to %u bytes",
                          (unsigned)SL_DELTA_ID_MAX);
    }
    s = &d->shards[sl_delta_shard_of(d, id)];
    slen = strlen(source);
    k.mv_size = sl__delta_key_len(d, slen, strlen(id));
    k.mv_data = pk;
    if (k.mv_size > sizeof(pk)) {
        return sl_err_set(
            err, SL_EINVAL, "id", "a key longer than %d bytes", PK_MAX);
    }
    (void)sl__delta_key(d, source, slen, id, strlen(id), pk);
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_get(txn, s->recheck, &k, &v);
    }
    if (rc == 0 && v.mv_size >= 16) {
        *next_ms = sl_le_get64(v.mv_data);
        *interval_ms = sl_le_get64((const unsigned char *)v.mv_data + 8);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (rc == MDB_NOTFOUND) {
        return SL_ENOENT;
    }
    return rc == 0 ? 0
                   : sl__delta_lmdb_err(
                         d, err, rc, (int)sl_delta_shard_of(d, id), "recheck");
}
