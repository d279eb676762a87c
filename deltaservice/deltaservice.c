/*
 * Delta service: open and close, the meta environment (shard count and
 * run sequences), the shard function, key and value codecs and the
 * strategy table.  Record and link batches are in ops.c, scans (also of
 * the visited links) in scan.c.
 *
 * Every environment is opened with MDB_NOSYNC | MDB_NOTLS: a committed
 * transaction is in the page cache and survives kill -9; in fsync mode
 * each commit is followed by mdb_env_sync (docs/deltaservice.md).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <libdeflate.h>
#include <openssl/sha.h>

#include "deltaservice/deltaservice_int.h"

/* ------------------------------------------------------------------------
 * Errors and commits
 * --------------------------------------------------------------------- */

int
sl__delta_lmdb_err(const struct sl_delta *d,
                   struct sl_err *err,
                   int rc,
                   int shard,
                   const char *what)
{
    char where[32];

    if (shard < 0) {
        (void)snprintf(where, sizeof(where), "meta");
    } else {
        (void)snprintf(where, sizeof(where), "shard %d", shard);
    }
    if (rc == MDB_MAP_FULL) {
        return sl_err_set(err,
                          SL_ENOSPC,
                          "deltaMapSize",
                          "delta service %s is full (map size %llu bytes): "
                          "raise deltaMapSize and restart",
                          where,
                          (unsigned long long)d->map_size);
    }
    if (rc == ENOSPC || (rc == EIO && sl_disk_full(d->dir))) {
        /* (LMDB says EIO when a write came up short) */
        return sl_err_set(err,
                          SL_ENOSPC,
                          NULL,
                          "delta service %s: %s: no space left on device",
                          where,
                          what);
    }
    if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID ||
        rc == MDB_VERSION_MISMATCH) {
        return sl_err_set(err,
                          SL_ECORRUPT,
                          NULL,
                          "delta service %s: %s: %s",
                          where,
                          what,
                          mdb_strerror(rc));
    }
    return sl_err_set(err,
                      SL_EIO,
                      NULL,
                      "delta service %s: %s: %s",
                      where,
                      what,
                      mdb_strerror(rc));
}

int
sl__delta_commit(const struct sl_delta *d, MDB_env *env, MDB_txn *txn)
{
    int rc = mdb_txn_commit(txn);

    if (rc == 0 && d->durability == SL_DURABILITY_FSYNC) {
        rc = mdb_env_sync(env, 1);
    }
    return rc;
}

int
sl_delta_source_check(const char *source, struct sl_err *err)
{
    return sl__delta_check_source(source, err);
}

int
sl__delta_check_source(const char *source, struct sl_err *err)
{
    size_t len = source != NULL ? strlen(source) : 0;

    size_t i = 0;

    if (len == 0 || len > SL_DELTA_SOURCE_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "source",
                          "a delta source id must have 1 to %u bytes",
                          SL_DELTA_SOURCE_MAX);
    }
    if (strcmp(source, ".") == 0 || strcmp(source, "..") == 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "source",
                          "a delta source id cannot be '%s'",
                          source);
    }
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)source[i];

        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\') {
            return sl_err_set(err,
                              SL_EINVAL,
                              "source",
                              "a delta source id cannot hold byte 0x%02x "
                              "(offset %zu): no control characters, '/' or "
                              "'\\'",
                              (unsigned)c,
                              i);
        }
    }
    if (!sl_utf8_valid(source, len)) {
        return sl_err_set(
            err, SL_EINVAL, "source", "a delta source id must be UTF-8");
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Shards, keys and values
 * --------------------------------------------------------------------- */

unsigned
sl_delta_shard_for(unsigned shards, const char *id)
{
    /* zlib's CRC-32 (IEEE), computed by libdeflate: the same values */
    return (unsigned)(libdeflate_crc32(0, id, strlen(id)) % shards);
}

unsigned
sl_delta_shard_of(const struct sl_delta *d, const char *id)
{
    return sl_delta_shard_for(d->nshards, id);
}

unsigned
sl_delta_shards(const struct sl_delta *d)
{
    return d->nshards;
}

int
sl_delta_shard_stats(struct sl_delta *d,
                     unsigned shard,
                     struct sl_delta_shard_stats *out,
                     struct sl_err *err)
{
    MDB_txn *txn = NULL;
    MDB_stat st;
    MDB_envinfo info;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (shard >= d->nshards) {
        return sl_err_set(
            err, SL_EINVAL, "shard", "no shard %u of %u", shard, d->nshards);
    }
    rc = mdb_txn_begin(d->shards[shard].env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_stat(txn, d->shards[shard].entries, &st);
        out->entries = rc == 0 ? (uint64_t)st.ms_entries : 0;
    }
    if (rc == 0) {
        rc = mdb_stat(txn, d->shards[shard].visited, &st);
        out->visited = rc == 0 ? (uint64_t)st.ms_entries : 0;
    }
    if (rc == 0) {
        rc = mdb_env_info(d->shards[shard].env, &info);
    }
    if (rc == 0) {
        out->map_used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
        out->map_size = (uint64_t)info.me_mapsize;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc == 0
               ? 0
               : sl__delta_lmdb_err(d, err, rc, (int)shard, "shard statistics");
}

size_t
sl__delta_key_len(const struct sl_delta *d, size_t slen, size_t idlen)
{
    size_t len = slen + 1 + idlen;

    return len <= d->maxkey ? len : d->maxkey;
}

int
sl__delta_key(const struct sl_delta *d,
              const char *source,
              size_t slen,
              const char *id,
              size_t idlen,
              unsigned char *out)
{
    size_t keep = 0;

    memcpy(out, source, slen);
    out[slen] = '\0';
    if (slen + 1 + idlen <= d->maxkey) {
        memcpy(out + slen + 1, id, idlen);
        return 0;
    }
    /* Too long for LMDB: a prefix of the id, then its full digest. */
    keep = d->maxkey - slen - 1 - SL__DELTA_LONG_DIGEST;
    memcpy(out + slen + 1, id, keep);
    (void)SHA256((const unsigned char *)id, idlen, out + slen + 1 + keep);
    return 1;
}

size_t
sl__delta_elem_key(const char *source,
                   size_t slen,
                   const char *cid,
                   size_t cidlen,
                   const char *eid,
                   size_t eidlen,
                   unsigned char *out)
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    size_t len = slen + 1;

    memcpy(out, source, slen);
    out[slen] = '\0';
    (void)SHA256((const unsigned char *)cid, cidlen, md);
    memcpy(out + len, md, SL__DELTA_DIGEST);
    len += SL__DELTA_DIGEST;
    if (eid != NULL) {
        (void)SHA256((const unsigned char *)eid, eidlen, md);
        memcpy(out + len, md, SL__DELTA_DIGEST);
        len += SL__DELTA_DIGEST;
    }
    return len;
}

size_t
sl__delta_val_size(const struct sl__delta_val *v)
{
    size_t n = 12 + v->hash_len + 4 + v->cid_len;

    if (v->flags & SL__DELTA_F_LONGID) {
        n += 4 + v->id_len;
    }
    return n;
}

void
sl__delta_val_encode(const struct sl__delta_val *v, unsigned char *out)
{
    size_t off = 12;

    out[0] = SL__DELTA_VERSION;
    out[1] = (unsigned char)v->flags;
    sl_le_put64(out + SL__DELTA_VISITED_OFF, v->visited);
    out[10] = (unsigned char)v->hash_len;
    out[11] = (unsigned char)(v->hash_len >> 8);
    memcpy(out + off, v->hash, v->hash_len);
    off += v->hash_len;
    sl_le_put32(out + off, (uint32_t)v->cid_len);
    off += 4;
    if (v->cid_len > 0) {
        memcpy(out + off, v->cid, v->cid_len);
        off += v->cid_len;
    }
    if (v->flags & SL__DELTA_F_LONGID) {
        sl_le_put32(out + off, (uint32_t)v->id_len);
        memcpy(out + off + 4, v->id, v->id_len);
    }
}

void
sl__delta_val_set_visited(unsigned char *p, uint64_t seq)
{
    sl_le_put64(p + SL__DELTA_VISITED_OFF, seq);
}

int
sl__delta_val_decode(const void *data, size_t n, struct sl__delta_val *v)
{
    const unsigned char *p = data;
    size_t off = 12;

    memset(v, 0, sizeof(*v));
    if (n < 16 || p[0] != SL__DELTA_VERSION) {
        return SL_ECORRUPT;
    }
    v->flags = p[1];
    v->visited = sl_le_get64(p + SL__DELTA_VISITED_OFF);
    v->hash_len = (size_t)p[10] | (size_t)p[11] << 8;
    if (v->hash_len > n - off - 4) {
        return SL_ECORRUPT;
    }
    v->hash = (const char *)p + off;
    off += v->hash_len;
    v->cid_len = sl_le_get32(p + off);
    off += 4;
    if (v->cid_len > n - off) {
        return SL_ECORRUPT;
    }
    v->cid = v->cid_len > 0 ? (const char *)p + off : NULL;
    off += v->cid_len;
    if (v->flags & SL__DELTA_F_LONGID) {
        if (n - off < 4 || sl_le_get32(p + off) > n - off - 4) {
            return SL_ECORRUPT;
        }
        v->id_len = sl_le_get32(p + off);
        v->id = (const char *)p + off + 4;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Open and close
 * --------------------------------------------------------------------- */

/*
 * Create and open one environment at path with the given named databases.
 * The caller closes *env on failure too (LMDB's rule), so *env is set as
 * soon as it exists.
 */
static int
open_env(const char *path,
         uint64_t map_size,
         const char *const *names,
         MDB_dbi *dbis,
         int ndbs,
         MDB_env **env)
{
    MDB_txn *txn = NULL;
    int rc = 0;
    int i = 0;

    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        return errno;
    }
    rc = mdb_env_create(env);
    if (rc != 0) {
        *env = NULL;
        return rc;
    }
    rc = mdb_env_set_maxdbs(*env, (MDB_dbi)ndbs);
    if (rc == 0) {
        rc = mdb_env_set_mapsize(*env, (size_t)map_size);
    }
    if (rc == 0) {
        rc = mdb_env_open(*env, path, MDB_NOSYNC | MDB_NOTLS, 0644);
    }
    if (rc == 0) {
        rc = mdb_txn_begin(*env, NULL, 0, &txn);
    }
    for (i = 0; rc == 0 && i < ndbs; i++) {
        rc = mdb_dbi_open(txn, names[i], MDB_CREATE, &dbis[i]);
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc;
}

/*
 * Read the stored shard count, or store @p want (default when 0) at the
 * first open.  A different count is refused: entries are found by
 * crc32 % count, so changing it would lose them.
 */
static int
settle_shards(struct sl_delta *d, unsigned want, struct sl_err *err)
{
    static const char key[] = "shards";
    MDB_txn *txn = NULL;
    MDB_val k = {sizeof(key) - 1, (void *)key};
    MDB_val v;
    unsigned char buf[4];
    uint32_t stored = 0;
    int rc = 0;

    rc = mdb_txn_begin(d->meta, NULL, 0, &txn);
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, -1, "begin");
    }
    rc = mdb_get(txn, d->meta_config, &k, &v);
    if (rc == 0) {
        if (v.mv_size != 4) {
            mdb_txn_abort(txn);
            return sl_err_set(
                err, SL_ECORRUPT, NULL, "delta service: bad shard count");
        }
        stored = sl_le_get32(v.mv_data);
        mdb_txn_abort(txn);
        if (want != 0 && want != stored) {
            return sl_err_set(err,
                              SL_ECONFLICT,
                              "deltaShards",
                              "the delta service in '%s' has %u shards, not "
                              "%u: re-sharding is not supported (clear the "
                              "directory or keep deltaShards at %u)",
                              d->dir,
                              (unsigned)stored,
                              want,
                              (unsigned)stored);
        }
        d->nshards = stored;
        return 0;
    }
    if (rc != MDB_NOTFOUND) {
        mdb_txn_abort(txn);
        return sl__delta_lmdb_err(d, err, rc, -1, "read the shard count");
    }
    d->nshards = want != 0 ? want : SL_DELTA_DEFAULT_SHARDS;
    sl_le_put32(buf, d->nshards);
    v.mv_size = sizeof(buf);
    v.mv_data = buf;
    rc = mdb_put(txn, d->meta_config, &k, &v, 0);
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (rc == 0) {
        rc = mdb_env_sync(d->meta, 1);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc == 0 ? 0 : sl__delta_lmdb_err(d, err, rc, -1, "store shards");
}

/*
 * Open every shard with its five databases.  "visited", "recheck" and
 * "due" came after the first stores: MDB_CREATE adds them to a shard that
 * lacks them.
 */
static int
open_shards(struct sl_delta *d, struct sl_err *err)
{
    static const char *const names[5] = {
        "entries", "elements", "visited", "recheck", "due"};
    unsigned i = 0;
    int rc = 0;

    d->shards = sl_calloc(d->nshards, sizeof(*d->shards));
    for (i = 0; i < d->nshards; i++) {
        struct sl__delta_shard *s = &d->shards[i];
        MDB_dbi dbis[5];
        char *path = sl_asprintf("%s/shard-%02u", d->dir, i);

        rc = open_env(path, d->map_size, names, dbis, 5, &s->env);
        sl_free(path);
        if (rc != 0) {
            return sl__delta_lmdb_err(d, err, rc, (int)i, "open");
        }
        s->entries = dbis[0];
        s->elements = dbis[1];
        s->visited = dbis[2];
        s->recheck = dbis[3];
        s->due = dbis[4];
    }
    return 0;
}

int
sl_delta_open(const char *dir,
              unsigned shards,
              enum sl_durability durability,
              uint64_t map_size,
              struct sl_delta **out,
              struct sl_err *err)
{
    static const char *const meta_names[4] = {
        "config", "runs", "purges", "passes"};
    struct sl_delta *d = NULL;
    MDB_dbi dbis[4];
    char *path = NULL;
    int rc = 0;

    *out = NULL;
    if (shards > SL_DELTA_MAX_SHARDS) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "deltaShards",
                          "deltaShards must be 1 to %u",
                          SL_DELTA_MAX_SHARDS);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          NULL,
                          "cannot create '%s': %s",
                          dir,
                          sl_errno_str(errno));
    }
    d = sl_calloc(1, sizeof(*d));
    d->dir = sl_strdup(dir);
    d->durability = durability;
    d->map_size = map_size != 0 ? map_size : SL_DELTA_DEFAULT_MAP_SIZE;
    path = sl_asprintf("%s/meta", dir);
    rc = open_env(path, (uint64_t)1 << 26, meta_names, dbis, 4, &d->meta);
    sl_free(path);
    if (rc != 0) {
        rc = sl__delta_lmdb_err(d, err, rc, -1, "open");
        goto fail;
    }
    d->meta_config = dbis[0];
    d->meta_runs = dbis[1];
    d->meta_purges = dbis[2];
    d->meta_passes = dbis[3];
    d->maxkey = (size_t)mdb_env_get_maxkeysize(d->meta);
    rc = settle_shards(d, shards, err);
    if (rc == 0) {
        rc = open_shards(d, err);
    }
    if (rc != 0) {
        goto fail;
    }
    *out = d;
    return 0;

fail:
    sl_delta_close(d);
    return rc;
}

void
sl_delta_close(struct sl_delta *d)
{
    unsigned i = 0;

    if (d == NULL) {
        return;
    }
    for (i = 0; d->shards != NULL && i < d->nshards; i++) {
        if (d->shards[i].env != NULL) {
            (void)mdb_env_sync(d->shards[i].env, 1);
            mdb_env_close(d->shards[i].env);
        }
    }
    if (d->meta != NULL) {
        (void)mdb_env_sync(d->meta, 1);
        mdb_env_close(d->meta);
    }
    sl_free(d->shards);
    sl_free(d->dir);
    sl_free(d);
}

/* ------------------------------------------------------------------------
 * Runs
 * --------------------------------------------------------------------- */

/* The key of @source's run begun at @at_ms in DB passes: source \0 BE64. */
static size_t
pass_key(unsigned char *buf, const char *source, int64_t at_ms)
{
    size_t n = strlen(source) + 1;

    memcpy(buf, source, n);
    sl_be_put64(buf + n, (uint64_t)at_ms);
    return n + 8;
}

/*
 * Take the next run sequence of @source, unless @run_id (may be NULL) is
 * the run that took the current one: then answer that.  The meta value is
 * the 8-byte sequence followed by the run id that took it.  A new run with
 * @at_ms > 0 is also recorded by its time (DB passes).
 */
static int
run_take(struct sl_delta *d,
         const char *source,
         const char *run_id,
         int64_t at_ms,
         uint64_t *seq,
         struct sl_err *err)
{
    unsigned char pk[SL_DELTA_SOURCE_MAX + 9];
    unsigned char pv[8];
    MDB_txn *txn = NULL;
    MDB_val k = {0, NULL};
    MDB_val v;
    unsigned char buf[8 + 256];
    size_t idlen = run_id != NULL ? strlen(run_id) : 0;
    uint64_t cur = 0;
    int rc = 0;

    rc = sl__delta_check_source(source, err);
    if (rc != 0) {
        return rc;
    }
    if (idlen > sizeof(buf) - 8) {
        return sl_err_set(err, SL_EINVAL, "runId", "run id is too long");
    }
    k.mv_size = strlen(source);
    k.mv_data = (void *)source;
    if (idlen > 0 &&
        mdb_txn_begin(d->meta, NULL, MDB_RDONLY, &txn) == MDB_SUCCESS) {
        /* Usually the run already has its sequence: no write transaction
         * (they serialise) for the many tasks of one run. */
        if (mdb_get(txn, d->meta_runs, &k, &v) == MDB_SUCCESS &&
            v.mv_size == 8 + idlen &&
            memcmp((const char *)v.mv_data + 8, run_id, idlen) == 0) {
            *seq = sl_le_get64(v.mv_data);
            mdb_txn_abort(txn);
            return 0;
        }
        mdb_txn_abort(txn);
        txn = NULL;
    }
    rc = mdb_txn_begin(d->meta, NULL, 0, &txn);
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, -1, "begin a run");
    }
    rc = mdb_get(txn, d->meta_runs, &k, &v);
    if (rc == 0 && v.mv_size >= 8) {
        cur = sl_le_get64(v.mv_data);
        if (idlen > 0 && v.mv_size == 8 + idlen &&
            memcmp((const char *)v.mv_data + 8, run_id, idlen) == 0) {
            mdb_txn_abort(txn);
            *seq = cur;
            return 0;
        }
    } else if (rc == 0 || rc == MDB_NOTFOUND) {
        rc = 0;
    }
    if (rc == 0) {
        sl_le_put64(buf, cur + 1);
        if (idlen > 0) {
            memcpy(buf + 8, run_id, idlen);
        }
        v.mv_size = 8 + idlen;
        v.mv_data = buf;
        rc = mdb_put(txn, d->meta_runs, &k, &v, 0);
    }
    if (rc == 0 && at_ms > 0) {
        MDB_val tk = {pass_key(pk, source, at_ms), pk};
        MDB_val tv = {sizeof(pv), pv};

        sl_le_put64(pv, cur + 1);
        /* the first run recorded at a time keeps it */
        rc = mdb_put(txn, d->meta_passes, &tk, &tv, MDB_NOOVERWRITE);
        rc = rc == MDB_KEYEXIST ? 0 : rc;
    }
    if (rc == 0) {
        rc = sl__delta_commit(d, d->meta, txn);
        txn = NULL;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, -1, "begin a run");
    }
    *seq = cur + 1;
    return 0;
}

int
sl_delta_run_begin(struct sl_delta *d,
                   const char *source,
                   uint64_t *seq,
                   struct sl_err *err)
{
    return run_take(d, source, NULL, 0, seq, err);
}

int
sl_delta_run_for(struct sl_delta *d,
                 const char *source,
                 const char *run_id,
                 uint64_t *seq,
                 struct sl_err *err)
{
    return sl_delta_run_for_at(d, source, run_id, 0, seq, err);
}

int
sl_delta_run_for_at(struct sl_delta *d,
                    const char *source,
                    const char *run_id,
                    int64_t at_ms,
                    uint64_t *seq,
                    struct sl_err *err)
{
    if (run_id == NULL || run_id[0] == '\0') {
        return sl_err_set(err, SL_EINVAL, "runId", "a run id is required");
    }
    return run_take(d, source, run_id, at_ms, seq, err);
}

int
sl_delta_run_before(struct sl_delta *d,
                    const char *source,
                    int64_t at_ms,
                    uint64_t *seq,
                    struct sl_err *err)
{
    unsigned char pk[SL_DELTA_SOURCE_MAX + 9];
    size_t plen = 0;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k;
    MDB_val v;
    int rc = sl__delta_check_source(source, err);

    *seq = 0;
    if (rc != 0 || at_ms < 0) {
        return rc; /* nothing begun before 1970 */
    }
    plen = strlen(source) + 1;
    rc = mdb_txn_begin(d->meta, NULL, 0, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, d->meta_passes, &cur);
    }
    if (rc == 0) {
        k.mv_size = pass_key(pk, source, at_ms < INT64_MAX ? at_ms + 1 : at_ms);
        k.mv_data = pk;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc == 0 || rc == MDB_NOTFOUND) {
            rc = mdb_cursor_get(
                cur, &k, &v, rc == MDB_NOTFOUND ? MDB_LAST : MDB_PREV);
        }
    }
    /* the newest of @source at or before @at_ms; older ones are dropped */
    if (rc == 0 && k.mv_size == plen + 8 && memcmp(k.mv_data, pk, plen) == 0 &&
        v.mv_size == 8) {
        *seq = sl_le_get64(v.mv_data);
        while ((rc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) == 0 &&
               k.mv_size == plen + 8 && memcmp(k.mv_data, pk, plen) == 0) {
            rc = mdb_cursor_del(cur, 0);
            if (rc != 0) {
                break;
            }
        }
    }
    rc = rc == MDB_NOTFOUND ? 0 : rc;
    if (cur != NULL) {
        mdb_cursor_close(cur);
    }
    if (rc == 0) {
        rc = sl__delta_commit(d, d->meta, txn);
        txn = NULL;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    return rc != 0 ? sl__delta_lmdb_err(d, err, rc, -1, "find a pass") : 0;
}

int
sl_delta_run_current(struct sl_delta *d,
                     const char *source,
                     uint64_t *seq,
                     struct sl_err *err)
{
    MDB_txn *txn = NULL;
    MDB_val k = {0, NULL};
    MDB_val v;
    int rc = 0;

    rc = sl__delta_check_source(source, err);
    if (rc != 0) {
        return rc;
    }
    k.mv_size = strlen(source);
    k.mv_data = (void *)source;
    *seq = 0;
    rc = mdb_txn_begin(d->meta, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return sl__delta_lmdb_err(d, err, rc, -1, "read a run");
    }
    rc = mdb_get(txn, d->meta_runs, &k, &v);
    if (rc == 0 && v.mv_size >= 8) {
        *seq = sl_le_get64(v.mv_data);
    }
    mdb_txn_abort(txn);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sl__delta_lmdb_err(d, err, rc, -1, "read a run");
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Strategies (SMILA's deltaImportStrategy), in one table.
 * --------------------------------------------------------------------- */

static const struct {
    const char *name;
    int reads;   /* deltaChecker checks */
    int writes;  /* updatePusher marks updated */
    int deletes; /* delta-delete at completion */
} strategies[] = {
    [SL_DELTA_STRATEGY_DISABLED] = {"disabled", 0, 0, 0},
    [SL_DELTA_STRATEGY_INITIAL] = {"initial", 0, 1, 0},
    [SL_DELTA_STRATEGY_ADDITIVE] = {"additive", 1, 1, 0},
    [SL_DELTA_STRATEGY_FULL] = {"full", 1, 1, 1},
};

#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

int
sl_delta_strategy_parse(const char *s,
                        enum sl_delta_strategy *out,
                        struct sl_err *err)
{
    size_t i = 0;

    if (s == NULL) {
        *out = SL_DELTA_STRATEGY_FULL;
        return 0;
    }
    for (i = 0; i < NSTRATEGIES; i++) {
        if (strcmp(s, strategies[i].name) == 0) {
            *out = (enum sl_delta_strategy)i;
            return 0;
        }
    }
    return sl_err_set(err,
                      SL_EINVAL,
                      "deltaImportStrategy",
                      "deltaImportStrategy must be disabled, initial, "
                      "additive or full, not '%.64s'",
                      s);
}

/* Table row of s; unknown values behave as disabled (fail safe). */
static size_t
row(enum sl_delta_strategy s)
{
    return (size_t)s < NSTRATEGIES ? (size_t)s : SL_DELTA_STRATEGY_DISABLED;
}

const char *
sl_delta_strategy_name(enum sl_delta_strategy s)
{
    return strategies[row(s)].name;
}

int
sl_delta_strategy_reads(enum sl_delta_strategy s)
{
    return strategies[row(s)].reads;
}

int
sl_delta_strategy_writes(enum sl_delta_strategy s)
{
    return strategies[row(s)].writes;
}

int
sl_delta_strategy_deletes(enum sl_delta_strategy s)
{
    return strategies[row(s)].deletes;
}
