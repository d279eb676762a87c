/*
 * Scans of the delta service: the obsolete scan of delta-delete, clear,
 * count and the source list, of the delta entries and of the visited links
 * alike (struct kind says which databases a call works on).
 *
 * The obsolete scan never holds a transaction while its callback runs: a
 * read transaction collects a bounded batch of unvisited entries, the
 * callback sends the deletes, and a write transaction removes those
 * entries that are still unvisited (re-checked inside it, so a record
 * visited meanwhile stays).  A crash between callback and removal leaves
 * the entries, and the next run's scan reports them again.
 */
#include <stdio.h>
#include <string.h>

#include "deltaservice/deltaservice_int.h"

#define CLEAR_TXN_MAX 10000 /* deletes per transaction in clear */

struct found {
    size_t key; /* offset of the primary key in the arena */
    size_t klen;
    size_t id;  /* offset of the NUL-terminated id */
    size_t cid; /* offset of the compound id, or SIZE_MAX */
    int is_compound;
};

struct collect {
    struct found *f; /* batch entries */
    size_t n;
    size_t cap;
    char *arena; /* keys and strings of the batch */
    size_t alen;
    size_t acap;
    unsigned char *last; /* key of the last collected entry */
    size_t lastlen;
    const char *under; /* only this id and the ids under it; NULL: all */
    size_t ulen;
    size_t slen; /* of the source */
};

/* Is @id (@n bytes) c->under, or under it (followed by '/' or, for the
 * entries of an archive, '!')? */
static int
under_id(const struct collect *c, const char *id, size_t n)
{
    return c->under == NULL ||
           (n >= c->ulen && memcmp(id, c->under, c->ulen) == 0 &&
            (n == c->ulen || id[c->ulen] == '/' ||
             (n > c->ulen + 1 && id[c->ulen] == '!' &&
              id[c->ulen + 1] == '/')));
}

static size_t
arena_add(struct collect *c, const void *p, size_t n, int nul)
{
    size_t off = c->alen;
    size_t need = c->alen + n + (nul ? 1 : 0);

    if (need > c->acap) {
        c->acap = need > 2 * c->acap ? need : 2 * c->acap;
        c->arena = sl_realloc(c->arena, c->acap);
    }
    memcpy(c->arena + off, p, n);
    c->alen += n;
    if (nul) {
        c->arena[c->alen++] = '\0';
    }
    return off;
}

static int
has_prefix(const MDB_val *k, const void *prefix, size_t plen)
{
    return k->mv_size >= plen && memcmp(k->mv_data, prefix, plen) == 0;
}

/* Is the entry of key @k and value @v one that c->under takes? */
static int
is_under(const struct collect *c,
         const MDB_val *k,
         const struct sl__delta_val *v)
{
    if (c->under == NULL) {
        return 1;
    }
    if (v->flags & SL__DELTA_F_LONGID) {
        return under_id(c, v->id, v->id_len);
    }
    return under_id(
        c, (const char *)k->mv_data + c->slen + 1, k->mv_size - c->slen - 1);
}

/* Copy one obsolete entry (key and value borrowed from LMDB) into c. */
static void
collect_add(struct collect *c,
            size_t slen,
            const MDB_val *k,
            const struct sl__delta_val *v)
{
    struct found *f = NULL;

    if (c->n == c->cap) {
        c->cap = c->cap != 0 ? 2 * c->cap : 64;
        c->f = sl_realloc(c->f, c->cap * sizeof(*c->f));
    }
    f = &c->f[c->n++];
    f->key = arena_add(c, k->mv_data, k->mv_size, 0);
    f->klen = k->mv_size;
    if (v->flags & SL__DELTA_F_LONGID) {
        f->id = arena_add(c, v->id, v->id_len, 1);
    } else {
        f->id = arena_add(
            c, (const char *)k->mv_data + slen + 1, k->mv_size - slen - 1, 1);
    }
    f->cid = v->cid != NULL ? arena_add(c, v->cid, v->cid_len, 1) : SIZE_MAX;
    f->is_compound = (v->flags & SL__DELTA_F_COMPOUND) != 0;
}

/*
 * Collect up to max unvisited entries of the source after c->last (from
 * the start when c->lastlen is 0).  *more is 0 when the range ended.
 */
static int
collect_batch(struct sl_delta *d,
              unsigned shard,
              const unsigned char *prefix,
              size_t plen,
              uint64_t seq,
              size_t max,
              struct collect *c,
              int *more)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k;
    MDB_val v;
    int rc = 0;

    c->n = 0;
    c->alen = 0;
    *more = 0;
    rc = mdb_txn_begin(d->shards[shard].env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, d->shards[shard].entries, &cur);
    }
    if (rc != 0) {
        goto out;
    }
    k.mv_data = c->lastlen > 0 ? c->last : (unsigned char *)prefix;
    k.mv_size = c->lastlen > 0 ? c->lastlen : plen;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && c->lastlen > 0 && k.mv_size == c->lastlen &&
        memcmp(k.mv_data, c->last, c->lastlen) == 0) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT); /* survived: skip */
    }
    while (rc == 0 && has_prefix(&k, prefix, plen)) {
        struct sl__delta_val val;

        if (sl__delta_val_decode(v.mv_data, v.mv_size, &val) != 0) {
            rc = MDB_CORRUPTED;
            goto out;
        }
        if (val.visited < seq && is_under(c, &k, &val)) {
            if (c->n == max) {
                *more = 1;
                break;
            }
            collect_add(c, c->slen, &k, &val);
        }
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    if (rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (rc == 0 && c->n > 0) {
        const struct found *f = &c->f[c->n - 1];

        memcpy(c->last, c->arena + f->key, f->klen);
        c->lastlen = f->klen;
    }

out:
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

/* Remove the collected entries that are still unvisited; one txn. */
static int
remove_batch(struct sl_delta *d,
             unsigned shard,
             const char *source,
             uint64_t seq,
             const struct collect *c,
             uint64_t *removed)
{
    const struct sl__delta_shard *s = &d->shards[shard];
    unsigned char ekey[SL_DELTA_SOURCE_MAX + 1 + 2 * SL__DELTA_DIGEST];
    MDB_txn *txn = NULL;
    size_t slen = strlen(source);
    size_t i = 0;
    int rc = 0;

    rc = mdb_txn_begin(s->env, NULL, 0, &txn);
    for (i = 0; rc == 0 && i < c->n; i++) {
        const struct found *f = &c->f[i];
        MDB_val k = {f->klen, c->arena + f->key};
        MDB_val v;
        struct sl__delta_val val;

        rc = mdb_get(txn, s->entries, &k, &v);
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            continue;
        }
        if (rc == 0 && sl__delta_val_decode(v.mv_data, v.mv_size, &val)) {
            rc = MDB_CORRUPTED;
        }
        if (rc != 0 || val.visited >= seq) {
            continue; /* visited meanwhile: keep it */
        }
        if (val.flags & SL__DELTA_F_ELEMENT) {
            MDB_val ek;
            const char *id = c->arena + f->id;

            ek.mv_data = ekey;
            ek.mv_size = sl__delta_elem_key(
                source, slen, val.cid, val.cid_len, id, strlen(id), ekey);
            rc = mdb_del(txn, s->elements, &ek, NULL);
            rc = rc == MDB_NOTFOUND ? 0 : rc;
        }
        if (rc == 0) { /* an element has none, unless it was not one */
            rc =
                sl__delta_recheck_drop(d, s, txn, source, k.mv_data, k.mv_size);
        }
        if (rc == 0) {
            rc = mdb_del(txn, s->entries, &k, NULL);
        }
        if (rc == 0) {
            (*removed)++;
        }
    }
    if (rc == 0) {
        rc = sl__delta_commit(d, s->env, txn);
    } else if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

static int
source_prefix(const char *source, unsigned char *out)
{
    size_t slen = strlen(source);

    memcpy(out, source, slen);
    out[slen] = '\0';
    return (int)(slen + 1);
}

/* The obsolete scan of the entries of @source (with @under: of that id
 * and the ids under it only). */
static int
scan(struct sl_delta *d,
     const char *source,
     const char *under,
     uint64_t seq,
     unsigned shard,
     size_t batch,
     sl_delta_obsolete_cb cb,
     void *ctx,
     uint64_t *removed,
     struct sl_err *err)
{
    unsigned char *prefix = NULL;
    struct sl_delta_obsolete *out = NULL;
    struct collect c;
    uint64_t nremoved = 0;
    size_t plen = 0;
    size_t i = 0;
    int more = 1;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    rc = sl__delta_check_source(source, err);
    if (rc == 0 && (seq == 0 || shard >= d->nshards)) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        seq == 0 ? "seq" : "shard",
                        "bad run sequence %llu or shard %u (of %u)",
                        (unsigned long long)seq,
                        shard,
                        d->nshards);
    }
    if (rc != 0) {
        return rc;
    }
    batch = batch != 0 ? batch : SL_DELTA_SCAN_BATCH;
    prefix = sl_malloc(d->maxkey);
    plen = (size_t)source_prefix(source, prefix);
    c.slen = plen - 1;
    if (under != NULL) {
        /* the keys of long ids hold a part of the id and its 32-byte
         * SHA-256 */
        size_t room = d->maxkey - plen - 32;

        c.under = under;
        c.ulen = strlen(under);
        memcpy(prefix + plen, under, c.ulen < room ? c.ulen : room);
        plen += c.ulen < room ? c.ulen : room;
    }
    c.last = sl_malloc(d->maxkey);
    out = sl_malloc(batch * sizeof(*out));
    while (more) {
        rc = collect_batch(d, shard, prefix, plen, seq, batch, &c, &more);
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)shard, "obsolete scan");
            goto out;
        }
        if (c.n == 0) {
            break;
        }
        for (i = 0; i < c.n; i++) {
            out[i].id = c.arena + c.f[i].id;
            out[i].compound_id =
                c.f[i].cid != SIZE_MAX ? c.arena + c.f[i].cid : NULL;
            out[i].is_compound = c.f[i].is_compound;
        }
        rc = cb(ctx, out, c.n);
        if (rc != 0) {
            goto out;
        }
        rc = remove_batch(d, shard, source, seq, &c, &nremoved);
        if (rc != 0) {
            rc = sl__delta_lmdb_err(d, err, rc, (int)shard, "remove");
            goto out;
        }
    }

out:
    if (removed != NULL) {
        *removed = nremoved;
    }
    sl_free(out);
    sl_free(prefix);
    sl_free(c.last);
    sl_free(c.arena);
    sl_free(c.f);
    return rc;
}

int
sl_delta_obsolete_scan(struct sl_delta *d,
                       const char *source,
                       uint64_t seq,
                       unsigned shard,
                       size_t batch,
                       sl_delta_obsolete_cb cb,
                       void *ctx,
                       uint64_t *removed,
                       struct sl_err *err)
{
    return scan(d, source, NULL, seq, shard, batch, cb, ctx, removed, err);
}

int
sl_delta_gone_scan(struct sl_delta *d,
                   const char *source,
                   const char *id,
                   uint64_t seq,
                   unsigned shard,
                   sl_delta_obsolete_cb cb,
                   void *ctx,
                   uint64_t *removed,
                   struct sl_err *err)
{
    if (id == NULL || id[0] == '\0' || strlen(id) > SL_DELTA_ID_MAX) {
        return sl_err_set(err, SL_EINVAL, "id", "a gone scan needs an id");
    }
    return scan(d, source, id, seq, shard, 0, cb, ctx, removed, err);
}

/* ------------------------------------------------------------------------
 * Clear, count, sources.  The same code serves the delta entries and the
 * visited links: both are keyed source '\0' ..., in every shard.
 * --------------------------------------------------------------------- */

/*
 * What a maintenance call works on: the database that is counted and
 * listed, and for clearing also the database kept next to it (the
 * compound index of the entries).
 */
struct kind {
    int visited;      /* 1: "visited", else "entries" (and "elements") */
    const char *what; /* for error messages: "" or " visited links" */
};

static const struct kind entries_kind = {0, ""};
static const struct kind visited_kind = {1, " visited links"};

/* The databases of shard s that k clears; the first is counted. */
static size_t
kind_dbis(const struct kind *k, const struct sl__delta_shard *s, MDB_dbi *out)
{
    if (k->visited) {
        out[0] = s->visited;
        return 1;
    }
    out[0] = s->entries;
    out[1] = s->elements;
    out[2] = s->due; /* before recheck: a due key is found from it */
    out[3] = s->recheck;
    return 4;
}

static MDB_dbi
kind_dbi(const struct kind *k, const struct sl__delta_shard *s)
{
    MDB_dbi dbis[4];

    (void)kind_dbis(k, s, dbis);
    return dbis[0];
}

/* sl__delta_lmdb_err with the kind in the message ("clear visited links"). */
static int
kind_err(struct sl_delta *d,
         const struct kind *k,
         struct sl_err *err,
         int rc,
         unsigned shard,
         const char *what)
{
    char msg[64];

    (void)snprintf(msg, sizeof(msg), "%s%s", what, k->what);
    return sl__delta_lmdb_err(d, err, rc, (int)shard, msg);
}

/*
 * Delete up to CLEAR_TXN_MAX keys with the prefix from dbi in one write
 * transaction; *more says whether keys may remain.
 */
static int
clear_some(struct sl_delta *d,
           MDB_env *env,
           MDB_dbi dbi,
           const unsigned char *prefix,
           size_t plen,
           int *more)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    int n = 0;
    int rc = 0;

    *more = 0;
    rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, dbi, &cur);
    }
    while (rc == 0) {
        MDB_val k = {plen, (void *)prefix};
        MDB_val v;

        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc != 0 || !has_prefix(&k, prefix, plen)) {
            break;
        }
        if (n == CLEAR_TXN_MAX) {
            *more = 1;
            break;
        }
        rc = mdb_cursor_del(cur, 0);
        n++;
    }
    if (rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (rc == 0 && n > 0) {
        rc = sl__delta_commit(d, env, txn);
    } else if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

/* Remove the keys of source (bounded transactions) from k's databases. */
static int
clear_source(struct sl_delta *d,
             const struct kind *k,
             const char *source,
             struct sl_err *err)
{
    unsigned char prefix[SL_DELTA_SOURCE_MAX + 1];
    MDB_dbi dbis[4];
    size_t ndbs = 0;
    size_t plen = 0;
    size_t j = 0;
    unsigned i = 0;
    int more = 1;
    int rc = 0;

    plen = (size_t)source_prefix(source, prefix);
    for (i = 0; i < d->nshards; i++) {
        const struct sl__delta_shard *s = &d->shards[i];

        ndbs = kind_dbis(k, s, dbis);
        for (j = 0; j < ndbs; j++) {
            for (more = 1; rc == 0 && more;) {
                rc = clear_some(d, s->env, dbis[j], prefix, plen, &more);
            }
        }
        if (rc != 0) {
            return kind_err(d, k, err, rc, i, "clear");
        }
    }
    return 0;
}

/* Empty k's databases of every shard (mdb_drop, one transaction each). */
static int
clear_all(struct sl_delta *d, const struct kind *k, struct sl_err *err)
{
    MDB_dbi dbis[4];
    size_t ndbs = 0;
    size_t j = 0;
    unsigned i = 0;
    int rc = 0;

    for (i = 0; i < d->nshards; i++) {
        const struct sl__delta_shard *s = &d->shards[i];
        MDB_txn *txn = NULL;

        ndbs = kind_dbis(k, s, dbis);
        rc = mdb_txn_begin(s->env, NULL, 0, &txn);
        for (j = 0; rc == 0 && j < ndbs; j++) {
            rc = mdb_drop(txn, dbis[j], 0);
        }
        if (rc == 0) {
            rc = sl__delta_commit(d, s->env, txn);
        } else if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        if (rc != 0) {
            return kind_err(d, k, err, rc, i, "clear all");
        }
    }
    return 0;
}

int
sl_delta_clear(struct sl_delta *d, const char *source, struct sl_err *err)
{
    int rc = sl__delta_check_source(source, err);

    return rc != 0 ? rc : clear_source(d, &entries_kind, source, err);
}

int
sl_delta_forget(struct sl_delta *d, const char *source, struct sl_err *err)
{
    int rc = sl__delta_check_source(source, err);

    return rc != 0 ? rc : clear_source(d, &entries_kind, source, err);
}

int
sl_delta_clear_all(struct sl_delta *d, struct sl_err *err)
{
    return clear_all(d, &entries_kind, err);
}

int
sl_delta_visited_clear(struct sl_delta *d,
                       const char *source,
                       struct sl_err *err)
{
    int rc = 0;

    if (source == NULL) {
        return clear_all(d, &visited_kind, err);
    }
    rc = sl__delta_check_source(source, err);
    return rc != 0 ? rc : clear_source(d, &visited_kind, source, err);
}

/* Number of keys with the prefix in dbi of one shard (a read
 * transaction). */
static int
count_shard(const struct sl__delta_shard *s,
            MDB_dbi dbi,
            const unsigned char *prefix,
            size_t plen,
            uint64_t *n)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k = {plen, (void *)prefix};
    MDB_val v;
    int rc = 0;

    *n = 0;
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, dbi, &cur);
    }
    if (rc == 0) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    }
    while (rc == 0 && has_prefix(&k, prefix, plen)) {
        (*n)++;
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

static int
count_source(struct sl_delta *d,
             const struct kind *k,
             const char *source,
             uint64_t *total,
             uint64_t *per_shard,
             struct sl_err *err)
{
    unsigned char prefix[SL_DELTA_SOURCE_MAX + 1];
    uint64_t sum = 0;
    size_t plen = 0;
    unsigned i = 0;
    int rc = 0;

    rc = sl__delta_check_source(source, err);
    if (rc != 0) {
        return rc;
    }
    plen = (size_t)source_prefix(source, prefix);
    for (i = 0; i < d->nshards; i++) {
        uint64_t n = 0;

        const struct sl__delta_shard *s = &d->shards[i];

        rc = count_shard(s, kind_dbi(k, s), prefix, plen, &n);
        if (rc != 0) {
            return kind_err(d, k, err, rc, i, "count");
        }
        if (per_shard != NULL) {
            per_shard[i] = n;
        }
        sum += n;
    }
    if (total != NULL) {
        *total = sum;
    }
    return 0;
}

int
sl_delta_count(struct sl_delta *d,
               const char *source,
               uint64_t *total,
               uint64_t *per_shard,
               struct sl_err *err)
{
    return count_source(d, &entries_kind, source, total, per_shard, err);
}

int
sl_delta_visited_count(struct sl_delta *d,
                       const char *source,
                       uint64_t *total,
                       uint64_t *per_shard,
                       struct sl_err *err)
{
    return count_source(d, &visited_kind, source, total, per_shard, err);
}

struct names {
    char **v; /* sorted, unique */
    size_t n;
    size_t cap;
};

static void
names_add(struct names *ns, const char *s, size_t len)
{
    size_t lo = 0;
    size_t hi = ns->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(ns->v[mid], s, len);

        if (c == 0 && ns->v[mid][len] == '\0') {
            return;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (ns->n == ns->cap) {
        ns->cap = ns->cap != 0 ? 2 * ns->cap : 16;
        ns->v = sl_realloc(ns->v, ns->cap * sizeof(*ns->v));
    }
    memmove(ns->v + lo + 1, ns->v + lo, (ns->n - lo) * sizeof(*ns->v));
    ns->v[lo] = sl_strndup(s, len);
    ns->n++;
}

/*
 * Add the sources of one shard: seek to the first key, take the source
 * (up to the NUL), then seek past all its keys to source "\x01".
 */
static int
sources_shard(const struct sl__delta_shard *s, MDB_dbi dbi, struct names *ns)
{
    unsigned char seek[SL_DELTA_SOURCE_MAX + 1];
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k;
    MDB_val v;
    int rc = 0;

    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, dbi, &cur);
    }
    if (rc == 0) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    }
    while (rc == 0) {
        const char *key = k.mv_data;
        const char *nul = memchr(key, '\0', k.mv_size);
        size_t slen = nul != NULL ? (size_t)(nul - key) : 0;

        if (slen == 0 || slen > SL_DELTA_SOURCE_MAX) {
            rc = MDB_CORRUPTED;
            break;
        }
        names_add(ns, key, slen);
        memcpy(seek, key, slen);
        seek[slen] = 0x01;
        k.mv_data = seek;
        k.mv_size = slen + 1;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    }
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static int
list_sources(struct sl_delta *d,
             const struct kind *k,
             int (*cb)(void *ctx, const char *source),
             void *ctx,
             struct sl_err *err)
{
    struct names ns;
    unsigned i = 0;
    size_t j = 0;
    int rc = 0;

    memset(&ns, 0, sizeof(ns));
    for (i = 0; i < d->nshards; i++) {
        const struct sl__delta_shard *s = &d->shards[i];

        rc = sources_shard(s, kind_dbi(k, s), &ns);
        if (rc != 0) {
            rc = kind_err(d, k, err, rc, i, "list sources");
            goto out;
        }
    }
    for (j = 0; j < ns.n; j++) {
        rc = cb(ctx, ns.v[j]);
        if (rc != 0) {
            break;
        }
    }

out:
    for (j = 0; j < ns.n; j++) {
        sl_free(ns.v[j]);
    }
    sl_free(ns.v);
    return rc;
}

int
sl_delta_sources(struct sl_delta *d,
                 int (*cb)(void *ctx, const char *source),
                 void *ctx,
                 struct sl_err *err)
{
    return list_sources(d, &entries_kind, cb, ctx, err);
}

int
sl_delta_visited_sources(struct sl_delta *d,
                         int (*cb)(void *ctx, const char *source),
                         void *ctx,
                         struct sl_err *err)
{
    return list_sources(d, &visited_kind, cb, ctx, err);
}

/* ------------------------------------------------------------------------
 * One entry.
 * --------------------------------------------------------------------- */

int
sl_delta_entry_get(struct sl_delta *d,
                   const char *source,
                   const char *id,
                   struct sl_delta_entry *e,
                   struct sl_err *err)
{
    size_t slen = source != NULL ? strlen(source) : 0;
    size_t idlen = id != NULL ? strlen(id) : 0;
    unsigned first = 0;
    unsigned char *key = NULL;
    unsigned i = 0;
    int rc = sl__delta_check_source(source, err);

    memset(e, 0, sizeof(*e));
    if (rc != 0) {
        return rc;
    }
    if (idlen == 0 || idlen > SL_DELTA_ID_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "id",
                          "a record id must have 1 to %u bytes",
                          (unsigned)SL_DELTA_ID_MAX);
    }
    key = sl_malloc(d->maxkey);
    (void)sl__delta_key(d, source, slen, id, idlen, key);
    /* its own shard first; an element's is its compound's */
    first = sl_delta_shard_of(d, id);
    rc = MDB_NOTFOUND;
    for (i = 0; i < d->nshards && rc == MDB_NOTFOUND; i++) {
        unsigned s = (first + i) % d->nshards;
        MDB_txn *txn = NULL;
        MDB_val k = {sl__delta_key_len(d, slen, idlen), key};
        MDB_val v;
        struct sl__delta_val dv;

        rc = mdb_txn_begin(d->shards[s].env, NULL, MDB_RDONLY, &txn);
        if (rc == 0) {
            rc = mdb_get(txn, d->shards[s].entries, &k, &v);
        }
        if (rc == 0 && sl__delta_val_decode(v.mv_data, v.mv_size, &dv) != 0) {
            rc = MDB_CORRUPTED;
        } else if (rc == 0) {
            (void)snprintf(
                e->hash, sizeof(e->hash), "%.*s", (int)dv.hash_len, dv.hash);
            e->visited = dv.visited;
            e->is_compound = (dv.flags & SL__DELTA_F_COMPOUND) != 0;
            e->compound_id =
                dv.cid != NULL ? sl_strndup(dv.cid, dv.cid_len) : NULL;
        }
        if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        if (rc != 0 && rc != MDB_NOTFOUND) {
            sl_free(key);
            return sl__delta_lmdb_err(d, err, rc, (int)s, "entry");
        }
    }
    sl_free(key);
    if (rc == MDB_NOTFOUND) {
        return sl_err_set(err,
                          SL_ENOENT,
                          "id",
                          "source '%s' has no entry for '%s'",
                          source,
                          id);
    }
    return 0;
}
