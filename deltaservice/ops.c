/*
 * Batches of the delta service: check, mark updated, the was-pushed test
 * and the visit of links.
 *
 * A batch is grouped by shard and its keys sorted (sorted puts are 10-30x
 * faster in LMDB), then each shard's group runs in one write transaction
 * (for_each_shard, shared by every batch operation; an operation only says
 * what one item does inside it, struct op).
 * An UPTODATE compound marks its elements visited through the compound
 * index in the same transaction; elements that are compounds themselves
 * live in their own shard (keyed by their own id) and are marked after the
 * batch, one transaction each.
 */
#include <stdlib.h>
#include <string.h>

#include "deltaservice/deltaservice_int.h"

struct item {
    size_t rec;               /* index into the caller's records or links */
    unsigned shard;           /* shard of compound id or id */
    const unsigned char *key; /* primary key, in batch.keys */
    size_t klen;
    int is_long; /* the key is hashed (SL__DELTA_F_LONGID) */
};

struct batch {
    struct item *items; /* elements taking part (sorted) */
    size_t n;
    unsigned char *keys;    /* all primary keys */
    size_t koff;            /* bytes of keys used */
    unsigned char *scratch; /* one value being written */
    size_t scap;
    unsigned char *kbuf; /* one key being built (d->maxkey) */
    char **nested;       /* compounds whose elements still need marking */
    size_t nnested;
    size_t ncap;
};

/* ------------------------------------------------------------------------
 * Batch preparation
 * --------------------------------------------------------------------- */

/*
 * Check one record; returns 0 when it takes part in the batch, else the
 * result to give it (SL_DELTA_NOHASH or a negative code).
 */
static int
rec_verdict(const struct sl_delta_rec *r)
{
    size_t len = r->id != NULL ? strlen(r->id) : 0;

    if (len == 0) {
        return SL_EINVAL;
    }
    if (len > SL_DELTA_ID_MAX) {
        return SL_ETOOLARGE;
    }
    if (r->compound_id != NULL && strlen(r->compound_id) > SL_DELTA_ID_MAX) {
        return SL_ETOOLARGE;
    }
    if (r->hash == NULL || r->hash[0] == '\0') {
        return SL_DELTA_NOHASH;
    }
    if (strlen(r->hash) > SL_DELTA_HASH_MAX) {
        return SL_ETOOLARGE;
    }
    return 0;
}

static const char *
rec_cid(const struct sl_delta_rec *r)
{
    return r->compound_id != NULL && r->compound_id[0] != '\0' ? r->compound_id
                                                               : NULL;
}

/* Order of LMDB's default comparison within a shard; ties keep input
 * order, so a later duplicate of an id is applied last. */
static int
cmp_item(const void *a, const void *b)
{
    const struct item *x = a;
    const struct item *y = b;
    size_t m = x->klen < y->klen ? x->klen : y->klen;
    int c = 0;

    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    c = memcmp(x->key, y->key, m);
    if (c != 0) {
        return c;
    }
    if (x->klen != y->klen) {
        return x->klen < y->klen ? -1 : 1;
    }
    return x->rec < y->rec ? -1 : (x->rec > y->rec ? 1 : 0);
}

static void
batch_free(struct batch *b)
{
    size_t i = 0;

    for (i = 0; i < b->nnested; i++) {
        sl_free(b->nested[i]);
    }
    sl_free(b->nested);
    sl_free(b->items);
    sl_free(b->keys);
    sl_free(b->scratch);
    sl_free(b->kbuf);
    memset(b, 0, sizeof(*b));
}

/*
 * A batch element as batch_prepare sees it (the take argument): gives
 * element i of arr its verdict (stored in the element, 0: it takes part in
 * the batch) and sets its id and the id that picks its shard.
 */
static int
rec_take(void *arr, size_t i, const char **id, const char **shard_id)
{
    struct sl_delta_rec *r = (struct sl_delta_rec *)arr + i;
    const char *cid = rec_cid(r);

    r->result = rec_verdict(r);
    *id = r->id;
    *shard_id = cid != NULL ? cid : r->id;
    return r->result;
}

/* Add element rec: key of (source, id), shard of shard_id. */
static void
batch_add(const struct sl_delta *d,
          struct batch *b,
          const char *source,
          size_t slen,
          size_t rec,
          const char *id,
          const char *shard_id)
{
    struct item *it = &b->items[b->n++];
    size_t idlen = strlen(id);

    it->rec = rec;
    it->shard = sl_delta_shard_of(d, shard_id);
    it->key = b->keys + b->koff;
    it->klen = sl__delta_key_len(d, slen, idlen);
    it->is_long = sl__delta_key(d, source, slen, id, idlen, b->keys + b->koff);
    b->koff += it->klen;
}

/*
 * Give every element its verdict and build the sorted items of those that
 * take part.  Two passes so the key block is allocated once with its exact
 * size.
 */
static void
batch_prepare(
    const struct sl_delta *d,
    const char *source,
    void *arr,
    size_t n,
    int (*take)(void *arr, size_t i, const char **id, const char **shard_id),
    struct batch *b)
{
    size_t slen = strlen(source);
    size_t total = 0;
    size_t count = 0;
    size_t i = 0;
    const char *id = NULL;
    const char *shard_id = NULL;

    memset(b, 0, sizeof(*b));
    for (i = 0; i < n; i++) {
        if (take(arr, i, &id, &shard_id) == 0) {
            total += sl__delta_key_len(d, slen, strlen(id));
            count++;
        }
    }
    b->kbuf = sl_malloc(d->maxkey);
    if (count == 0) {
        return;
    }
    b->items = sl_malloc(count * sizeof(*b->items));
    b->keys = sl_malloc(total);
    for (i = 0; i < n; i++) {
        if (take(arr, i, &id, &shard_id) == 0) {
            batch_add(d, b, source, slen, i, id, shard_id);
        }
    }
    qsort(b->items, b->n, sizeof(*b->items), cmp_item);
}

static unsigned char *
scratch(struct batch *b, size_t need)
{
    if (need > b->scap) {
        b->scratch = sl_realloc(b->scratch, need);
        b->scap = need;
    }
    return b->scratch;
}

struct call;

/*
 * A batch operation: what one item does inside its shard's write
 * transaction.  one() gets a cursor on the database the operation works on
 * and sets *dirty when it wrote; returns an LMDB code.
 */
struct op {
    int (*one)(struct sl_delta *d,
               MDB_txn *txn,
               MDB_cursor *cur,
               const struct call *c,
               const struct item *it,
               struct batch *b,
               int *dirty);
    int visited;      /* 1: cursor on "visited", else on "entries" */
    const char *what; /* names the operation in error messages */
    int rdonly;       /* 1: a read transaction (the item never writes) */
};

/* One call of a batch operation: its arguments. */
struct call {
    const struct op *op;
    const char *source;
    uint64_t seq;
    struct sl_delta_rec *recs;   /* record operations */
    struct sl_delta_link *links; /* visit */
    uint64_t owner;              /* visit */
};

/*
 * Run the shard group [from, to) of the batch in one write transaction,
 * committed (and synced in fsync mode) when an item wrote, else aborted.
 */
static int
shard_txn(struct sl_delta *d,
          const struct call *c,
          struct batch *b,
          size_t from,
          size_t to,
          struct sl_err *err)
{
    unsigned shard = b->items[from].shard;
    const struct sl__delta_shard *s = &d->shards[shard];
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    int dirty = 0;
    int rc = 0;
    size_t i = 0;

    rc = mdb_txn_begin(s->env, NULL, c->op->rdonly ? MDB_RDONLY : 0, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(
            txn, c->op->visited ? s->visited : s->entries, &cur);
    }
    for (i = from; rc == 0 && i < to; i++) {
        rc = c->op->one(d, txn, cur, c, &b->items[i], b, &dirty);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (rc == 0 && dirty) {
        rc = sl__delta_commit(d, s->env, txn);
    } else if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, (int)shard, c->op->what);
    }
    return 0;
}

/*
 * Run every shard group of the batch, one transaction each, in shard
 * order.  On failure *failed (when not NULL) is the first item whose group
 * was not committed: the groups before it were.
 */
static int
for_each_shard(struct sl_delta *d,
               const struct call *c,
               struct batch *b,
               size_t *failed,
               struct sl_err *err)
{
    size_t i = 0;
    size_t j = 0;
    int rc = 0;

    for (i = 0; i < b->n; i = j) {
        for (j = i; j < b->n && b->items[j].shard == b->items[i].shard; j++) {
        }
        rc = shard_txn(d, c, b, i, j, err);
        if (rc != 0) {
            if (failed != NULL) {
                *failed = i;
            }
            return rc;
        }
    }
    return 0;
}

static int
check_args(const char *source, uint64_t seq, struct sl_err *err)
{
    int rc = sl__delta_check_source(source, err);

    if (rc == 0 && seq == 0) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        "seq",
                        "run sequence 0 is invalid (sl_delta_run_begin "
                        "gives 1 and up)");
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Compound elements
 * --------------------------------------------------------------------- */

static void
nested_push(struct batch *b, const char *id, size_t len)
{
    if (b->nnested == b->ncap) {
        b->ncap = b->ncap != 0 ? 2 * b->ncap : 16;
        b->nested = sl_realloc(b->nested, b->ncap * sizeof(*b->nested));
    }
    b->nested[b->nnested++] = sl_strndup(id, len);
}

/*
 * Mark the element with primary key @p key visited in seq if it was not.
 * A compound among the elements is queued (before the put, while eid is
 * still valid) so its own elements follow in its own shard.
 */
static int
visit_element(MDB_txn *txn,
              const struct sl__delta_shard *s,
              MDB_val *key,
              const char *eid,
              size_t eidlen,
              uint64_t seq,
              struct batch *b,
              int *dirty)
{
    struct sl__delta_val v;
    MDB_val val;
    unsigned char *p = NULL;
    int rc = 0;

    rc = mdb_get(txn, s->entries, key, &val);
    if (rc == MDB_NOTFOUND) {
        return 0; /* a stale index entry: harmless */
    }
    if (rc != 0) {
        return rc;
    }
    if (sl__delta_val_decode(val.mv_data, val.mv_size, &v) != 0) {
        return MDB_CORRUPTED;
    }
    if (v.visited >= seq) {
        return 0;
    }
    if (v.flags & SL__DELTA_F_COMPOUND) {
        nested_push(b, eid, eidlen);
    }
    p = scratch(b, val.mv_size);
    memcpy(p, val.mv_data, val.mv_size);
    sl__delta_val_set_visited(p, seq);
    val.mv_data = p;
    *dirty = 1;
    return mdb_put(txn, s->entries, key, &val, 0);
}

/*
 * Walk the compound index of cid in shard s and mark every element
 * visited.  Returns an LMDB code.
 */
static int
mark_elements(struct sl_delta *d,
              MDB_txn *txn,
              unsigned shard,
              const char *source,
              const char *cid,
              size_t cidlen,
              uint64_t seq,
              struct batch *b,
              int *dirty)
{
    const struct sl__delta_shard *s = &d->shards[shard];
    size_t slen = strlen(source);
    unsigned char prefix[SL_DELTA_SOURCE_MAX + 1 + SL__DELTA_DIGEST];
    size_t plen =
        sl__delta_elem_key(source, slen, cid, cidlen, NULL, 0, prefix);
    MDB_cursor *cur = NULL;
    MDB_val k = {plen, prefix};
    MDB_val v;
    MDB_cursor_op op = MDB_SET_RANGE;
    int rc = 0;

    rc = mdb_cursor_open(txn, s->elements, &cur);
    while (rc == 0) {
        MDB_val pk;
        const char *eid = NULL;
        size_t eidlen = 0;

        rc = mdb_cursor_get(cur, &k, &v, op);
        op = MDB_NEXT;
        if (rc != 0 || k.mv_size < plen || memcmp(k.mv_data, prefix, plen)) {
            break;
        }
        eid = v.mv_data;
        eidlen = v.mv_size;
        pk.mv_data = b->kbuf;
        pk.mv_size = sl__delta_key_len(d, slen, eidlen);
        (void)sl__delta_key(d, source, slen, eid, eidlen, b->kbuf);
        rc = visit_element(txn, s, &pk, eid, eidlen, seq, b, dirty);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/*
 * Mark the elements of nested compounds queued by a batch: each lives in
 * the shard of its own id, so one transaction per nested compound.
 */
static int
mark_nested(struct sl_delta *d,
            const char *source,
            uint64_t seq,
            struct batch *b,
            struct sl_err *err)
{
    int rc = 0;

    while (b->nnested > 0) {
        char *cid = b->nested[--b->nnested];
        unsigned shard = sl_delta_shard_of(d, cid);
        MDB_txn *txn = NULL;
        int dirty = 0;

        rc = mdb_txn_begin(d->shards[shard].env, NULL, 0, &txn);
        if (rc == 0) {
            rc = mark_elements(
                d, txn, shard, source, cid, strlen(cid), seq, b, &dirty);
        }
        sl_free(cid);
        if (rc == 0 && dirty) {
            rc = sl__delta_commit(d, d->shards[shard].env, txn);
        } else if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        if (rc != 0) {
            return sl__delta_lmdb_err(
                d, err, rc, (int)shard, "mark compound elements");
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Check
 * --------------------------------------------------------------------- */

/*
 * Check one record inside the shard's write transaction.  The cursor on
 * the entries saves the second tree search when marking visited.
 */
static int
check_one(struct sl_delta *d,
          MDB_txn *txn,
          MDB_cursor *cur,
          const struct call *c,
          const struct item *it,
          struct batch *b,
          int *dirty)
{
    struct sl_delta_rec *r = &c->recs[it->rec];
    uint64_t seq = c->seq;
    MDB_val k = {it->klen, (void *)it->key};
    MDB_val v;
    struct sl__delta_val old;
    size_t hlen = strlen(r->hash);
    unsigned char *p = NULL;
    int compound = 0;
    int rc = 0;

    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    if (rc == MDB_NOTFOUND) {
        r->result = SL_DELTA_NEW;
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    if (sl__delta_val_decode(v.mv_data, v.mv_size, &old) != 0) {
        return MDB_CORRUPTED;
    }
    if (old.hash_len != hlen || memcmp(old.hash, r->hash, hlen) != 0) {
        r->result = SL_DELTA_CHANGED;
        return 0;
    }
    r->result = SL_DELTA_UPTODATE;
    if (old.visited >= seq) {
        return 0; /* already visited in this run: elements done too */
    }
    compound = r->is_compound || (old.flags & SL__DELTA_F_COMPOUND);
    p = scratch(b, v.mv_size);
    memcpy(p, v.mv_data, v.mv_size);
    sl__delta_val_set_visited(p, seq);
    v.mv_data = p;
    *dirty = 1;
    rc = mdb_cursor_put(cur, &k, &v, MDB_CURRENT); /* same size: in place */
    if (rc == 0 && compound) {
        rc = mark_elements(
            d, txn, it->shard, c->source, r->id, strlen(r->id), seq, b, dirty);
    }
    return rc;
}

static const struct op check_op = {check_one, 0, "check", 0};

int
sl_delta_check(struct sl_delta *d,
               const char *source,
               uint64_t seq,
               struct sl_delta_rec *recs,
               size_t n,
               struct sl_err *err)
{
    struct call c = {&check_op, source, seq, recs, NULL, 0};
    struct batch b;
    int rc = 0;

    rc = check_args(source, seq, err);
    if (rc != 0) {
        return rc;
    }
    batch_prepare(d, source, recs, n, rec_take, &b);
    rc = for_each_shard(d, &c, &b, NULL, err);
    if (rc == 0) {
        rc = mark_nested(d, source, seq, &b, err);
    }
    batch_free(&b);
    return rc;
}

/* ------------------------------------------------------------------------
 * Mark updated
 * --------------------------------------------------------------------- */

/*
 * Drop the compound-index entry of an old value when the record's compound
 * changed; *keep_link says the existing index entry is still right.
 */
static int
unlink_old(MDB_txn *txn,
           const struct sl__delta_shard *s,
           const char *source,
           const struct sl_delta_rec *r,
           const struct sl__delta_val *old,
           int *keep_link)
{
    const char *cid = rec_cid(r);
    unsigned char key[SL_DELTA_SOURCE_MAX + 1 + 2 * SL__DELTA_DIGEST];
    MDB_val k;
    int rc = 0;

    *keep_link = 0;
    if (!(old->flags & SL__DELTA_F_ELEMENT)) {
        return 0;
    }
    if (cid != NULL && strlen(cid) == old->cid_len &&
        memcmp(cid, old->cid, old->cid_len) == 0) {
        *keep_link = 1;
        return 0;
    }
    k.mv_data = key;
    k.mv_size = sl__delta_elem_key(source,
                                   strlen(source),
                                   old->cid,
                                   old->cid_len,
                                   r->id,
                                   strlen(r->id),
                                   key);
    rc = mdb_del(txn, s->elements, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Store one record inside the shard's write transaction. */
static int
mark_one(struct sl_delta *d,
         MDB_txn *txn,
         MDB_cursor *cur,
         const struct call *c,
         const struct item *it,
         struct batch *b,
         int *dirty)
{
    const struct sl__delta_shard *s = &d->shards[it->shard];
    struct sl_delta_rec *r = &c->recs[it->rec];
    const char *source = c->source;
    uint64_t seq = c->seq;
    const char *cid = rec_cid(r);
    unsigned char ekey[SL_DELTA_SOURCE_MAX + 1 + 2 * SL__DELTA_DIGEST];
    struct sl__delta_val nv;
    struct sl__delta_val old;
    MDB_val k = {it->klen, (void *)it->key};
    MDB_val v;
    int keep_link = 0;
    int rc = 0;

    (void)cur; /* entries and the compound index: plain gets and puts */
    *dirty = 1;
    memset(&nv, 0, sizeof(nv));
    nv.flags = (r->is_compound ? SL__DELTA_F_COMPOUND : 0) |
               (cid != NULL ? SL__DELTA_F_ELEMENT : 0) |
               (it->is_long ? SL__DELTA_F_LONGID : 0);
    nv.visited = seq;
    nv.hash = r->hash;
    nv.hash_len = strlen(r->hash);
    nv.cid = cid;
    nv.cid_len = cid != NULL ? strlen(cid) : 0;
    nv.id = r->id;
    nv.id_len = strlen(r->id);
    rc = mdb_get(txn, s->entries, &k, &v);
    if (rc == 0) {
        if (sl__delta_val_decode(v.mv_data, v.mv_size, &old) != 0) {
            return MDB_CORRUPTED;
        }
        nv.visited = old.visited > seq ? old.visited : seq;
        rc = unlink_old(txn, s, source, r, &old, &keep_link);
    } else if (rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (rc != 0) {
        return rc;
    }
    v.mv_size = sl__delta_val_size(&nv);
    v.mv_data = scratch(b, v.mv_size);
    sl__delta_val_encode(&nv, v.mv_data);
    rc = mdb_put(txn, s->entries, &k, &v, 0);
    if (rc == 0 && cid != NULL && !keep_link) {
        k.mv_data = ekey;
        k.mv_size = sl__delta_elem_key(
            source, strlen(source), cid, nv.cid_len, r->id, nv.id_len, ekey);
        v.mv_data = (void *)r->id;
        v.mv_size = nv.id_len;
        rc = mdb_put(txn, s->elements, &k, &v, 0);
    }
    return rc;
}

static const struct op mark_op = {mark_one, 0, "mark updated", 0};

int
sl_delta_mark_updated(struct sl_delta *d,
                      const char *source,
                      uint64_t seq,
                      struct sl_delta_rec *recs,
                      size_t n,
                      struct sl_err *err)
{
    struct call c = {&mark_op, source, seq, recs, NULL, 0};
    struct batch b;
    int rc = 0;

    rc = check_args(source, seq, err);
    if (rc != 0) {
        return rc;
    }
    batch_prepare(d, source, recs, n, rec_take, &b);
    rc = for_each_shard(d, &c, &b, NULL, err);
    batch_free(&b);
    return rc;
}

/* ------------------------------------------------------------------------
 * Was pushed in run
 * --------------------------------------------------------------------- */

int
sl_delta_was_pushed_in_run(struct sl_delta *d,
                           const char *source,
                           uint64_t seq,
                           const struct sl_delta_rec *rec,
                           int *pushed,
                           int *known,
                           struct sl_err *err)
{
    const char *cid = rec_cid(rec);
    size_t slen = 0;
    size_t idlen = 0;
    unsigned shard = 0;
    unsigned char *key = NULL;
    struct sl__delta_val v;
    MDB_txn *txn = NULL;
    MDB_val k;
    MDB_val val;
    int verdict = rec_verdict(rec);
    int rc = 0;

    *pushed = 0;
    if (known != NULL) {
        *known = 0;
    }
    rc = check_args(source, seq, err);
    if (rc != 0 || verdict == SL_DELTA_NOHASH) {
        return rc;
    }
    if (verdict != 0) {
        return sl_err_set(
            err, verdict, "_recordid", "bad record id or delta hash");
    }
    slen = strlen(source);
    idlen = strlen(rec->id);
    shard = sl_delta_shard_of(d, cid != NULL ? cid : rec->id);
    key = sl_malloc(d->maxkey);
    k.mv_data = key;
    k.mv_size = sl__delta_key_len(d, slen, idlen);
    (void)sl__delta_key(d, source, slen, rec->id, idlen, key);
    rc = mdb_txn_begin(d->shards[shard].env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_get(txn, d->shards[shard].entries, &k, &val);
    }
    if (rc == 0) {
        if (sl__delta_val_decode(val.mv_data, val.mv_size, &v) != 0) {
            rc = MDB_CORRUPTED;
        } else {
            *pushed = v.visited == seq && v.hash_len == strlen(rec->hash) &&
                      memcmp(v.hash, rec->hash, v.hash_len) == 0;
            if (known != NULL) {
                *known = 1;
            }
        }
    } else if (rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    sl_free(key);
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, (int)shard, "was pushed");
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Visited links: a test-and-set per URL in the "visited" database of the
 * URL's shard, inside that shard's write transaction, so concurrent
 * callers (which serialise on the shard's writer lock) see each URL first
 * exactly once per run.
 * --------------------------------------------------------------------- */

static int
link_verdict(const struct sl_delta_link *l)
{
    size_t len = l->url != NULL ? strlen(l->url) : 0;

    if (len == 0) {
        return SL_EINVAL;
    }
    return len > SL_DELTA_ID_MAX ? SL_ETOOLARGE : 0;
}

static int
link_take(void *arr, size_t i, const char **id, const char **shard_id)
{
    struct sl_delta_link *l = (struct sl_delta_link *)arr + i;

    l->first = 0;
    l->result = link_verdict(l);
    *id = l->url;
    *shard_id = l->url;
    return l->result;
}

/* The run sequence and owner of a stored visit value (8 bytes: no
 * owner).  0 or MDB_CORRUPTED. */
static int
visit_val(const MDB_val *v, uint64_t *seq, uint64_t *owner)
{
    if (v->mv_size != 8 && v->mv_size != 16) {
        return MDB_CORRUPTED;
    }
    *seq = sl_le_get64(v->mv_data);
    *owner = v->mv_size == 16
                 ? sl_le_get64((const unsigned char *)v->mv_data + 8)
                 : 0;
    return 0;
}

/*
 * Visit one link: first when no run, or an older run than this one, has
 * visited it, or this run did for the same owner (a retry of the task
 * that marked it: its work was lost with it); its value becomes this run
 * and owner.  A later run's mark stays (sequences never go backwards).
 * Values are the sequence and the owner, 8 bytes little-endian each; an
 * 8-byte value (no owner) has owner 0.
 */
static int
visit_one(struct sl_delta *d,
          MDB_txn *txn,
          MDB_cursor *cur,
          const struct call *c,
          const struct item *it,
          struct batch *b,
          int *dirty)
{
    struct sl_delta_link *l = &c->links[it->rec];
    unsigned char buf[16];
    MDB_val k = {it->klen, (void *)it->key};
    MDB_val v;
    unsigned flags = 0;
    int rc = 0;

    (void)d;
    (void)txn;
    (void)b;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    if (rc == 0) {
        uint64_t seq = 0;
        uint64_t owner = 0;

        if (visit_val(&v, &seq, &owner) != 0) {
            return MDB_CORRUPTED;
        }
        if (seq > c->seq ||
            (seq == c->seq && (c->owner == 0 || owner != c->owner))) {
            l->first = 0;
            return 0;
        }
        if (seq == c->seq) {
            l->first = 1; /* the same owner again: nothing to write */
            return 0;
        }
        flags = v.mv_size == sizeof(buf) ? MDB_CURRENT : 0;
    } else if (rc != MDB_NOTFOUND) {
        return rc;
    }
    sl_le_put64(buf, c->seq);
    sl_le_put64(buf + 8, c->owner);
    v.mv_size = sizeof(buf);
    v.mv_data = buf;
    *dirty = 1;
    rc = mdb_cursor_put(cur, &k, &v, flags);
    l->first = rc == 0;
    return rc;
}

static const struct op visit_op = {visit_one, 1, "visit links", 0};

/* Whether a visit of one link in run c->seq by c->owner would be first:
 * not when a later run or this one (by another owner, or by any with
 * owner 0) has visited it. */
static int
visited_test_one(struct sl_delta *d,
                 MDB_txn *txn,
                 MDB_cursor *cur,
                 const struct call *c,
                 const struct item *it,
                 struct batch *b,
                 int *dirty)
{
    struct sl_delta_link *l = &c->links[it->rec];
    MDB_val k = {it->klen, (void *)it->key};
    MDB_val v;
    uint64_t seq = 0;
    uint64_t owner = 0;
    int rc = 0;

    (void)d;
    (void)txn;
    (void)b;
    (void)dirty;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    if (rc == MDB_NOTFOUND) {
        l->first = 1;
        return 0;
    }
    if (rc == 0) {
        rc = visit_val(&v, &seq, &owner);
    }
    l->first =
        rc == 0 &&
        (seq < c->seq || (seq == c->seq && c->owner != 0 && owner == c->owner));
    return rc;
}

static const struct op visited_test_op = {
    visited_test_one, 1, "test visited links", 1};

/* A batch of links through @op (visit or test) in run @seq; see
 * sl_delta_visit for the answers after an error. */
static int
links_batch(struct sl_delta *d,
            const struct op *op,
            const char *source,
            uint64_t seq,
            uint64_t owner,
            struct sl_delta_link *links,
            size_t n,
            struct sl_err *err)
{
    struct call c = {op, source, seq, NULL, links, owner};
    struct batch b;
    size_t failed = 0;
    size_t i = 0;
    int rc = 0;

    rc = check_args(source, seq, err);
    if (rc != 0) {
        return rc;
    }
    batch_prepare(d, source, links, n, link_take, &b);
    rc = for_each_shard(d, &c, &b, &failed, err);
    /* Shards from the failed one on wrote nothing: their links say so, the
     * others keep their (committed) answer. */
    for (i = failed; rc != 0 && i < b.n; i++) {
        links[b.items[i].rec].first = 0;
        links[b.items[i].rec].result = rc;
    }
    batch_free(&b);
    return rc;
}

int
sl_delta_visited_test(struct sl_delta *d,
                      const char *source,
                      uint64_t seq,
                      uint64_t owner,
                      struct sl_delta_link *links,
                      size_t n,
                      struct sl_err *err)
{
    return links_batch(d, &visited_test_op, source, seq, owner, links, n, err);
}

int
sl_delta_visit(struct sl_delta *d,
               const char *source,
               uint64_t seq,
               uint64_t owner,
               struct sl_delta_link *links,
               size_t n,
               struct sl_err *err)
{
    return links_batch(d, &visit_op, source, seq, owner, links, n, err);
}
