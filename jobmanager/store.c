/*
 * The jobmanager's state store: one LMDB environment with seven named
 * databases and group commit.  Callers queue puts and deletes (copied) and
 * get a sequence number; one writer thread drains the queue into a single
 * write transaction, commits it, syncs in fsync mode, and wakes everyone
 * whose sequence number is now durable.  So a thousand task finishes cost
 * one commit, not a thousand (docs/jobmanager.md).
 *
 * The environment is opened with MDB_NOSYNC: with durability "process" a
 * committed transaction is in the page cache and survives kill -9; with
 * "fsync" the writer calls mdb_env_sync after each group.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lmdb.h>

#include "jobmanager/jobmanager_int.h"

#define MAP_SIZE ((size_t)64 << 30) /* virtual; grows on disk as used */

static const char *const db_names[SL__JM_NDB] = {
    "defs", "runs", "tasks", "events", "meta", "history", "docs"};

/* Backoff of a group commit that failed for want of space or I/O. */
#define RETRY_FIRST_MS 100
#define RETRY_MAX_MS   30000

/* What an op does; OP_DEL_UNLESS deletes the key unless its value starts
 * with the op's value bytes. */
enum { OP_PUT = 0, OP_DEL, OP_DEL_UNLESS };

struct op {
    struct op *next;
    enum sl__jm_dbi db;
    int del;  /* OP_PUT, OP_DEL or OP_DEL_UNLESS */
    int skip; /* refused by LMDB on its own (a key too long): left out */
    size_t klen;
    size_t vlen;
    char data[]; /* key, then value */
};

struct sl__jm_store {
    MDB_env *env;
    MDB_dbi dbi[SL__JM_NDB];
    enum sl_durability durability;
    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t work; /* queue not empty, or stopping */
    pthread_cond_t done; /* committed advanced */
    struct op *head;     /* queued ops, in order */
    struct op *tail;
    uint64_t queued;           /* sequence number of the last queued op */
    uint64_t committed;        /* everything up to here is done: committed,
                                  or dropped after a failure (waiters then
                                  see `failed`) */
    uint64_t durable;          /* everything up to here is committed */
    void (*notify)(void *arg); /* called after each commit, or NULL */
    void *notify_arg;
    int failed; /* a commit failed while stopping: refuse changes */
    int stopping;
    int give_up; /* the server stops: a failing commit is not retried */
    atomic_int test_fail; /* sl__jm_store_test_fail: commits fail so */
    char failure[256];
    pthread_mutex_t *swap_lock; /* the engine's lock, or NULL */
};

static int
lmdb_err(struct sl_err *err, int rc, const char *what)
{
    int code = rc == MDB_MAP_FULL || rc == ENOSPC ? SL_ENOSPC : SL_EIO;

    return sl_err_set(
        err, code, NULL, "jobmanager state: %s: %s", what, mdb_strerror(rc));
}

/* Apply delete op @o (OP_DEL or OP_DEL_UNLESS) in @txn: 0 or an LMDB
 * error; an absent key is fine. */
static int
apply_del(MDB_txn *txn, MDB_dbi dbi, const struct op *o)
{
    MDB_val k = {o->klen, (void *)o->data};
    MDB_val cur = {0, NULL};
    int rc = 0;

    if (o->del == OP_DEL_UNLESS) {
        rc = mdb_get(txn, dbi, &k, &cur);
        if (rc != 0) {
            return rc == MDB_NOTFOUND ? 0 : rc;
        }
        if (cur.mv_size >= o->vlen &&
            memcmp(cur.mv_data, o->data + o->klen, o->vlen) == 0) {
            return 0;
        }
    }
    rc = mdb_del(txn, dbi, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/*
 * Apply one group of ops in one write transaction.  Returns 0 or an LMDB
 * error code; on error nothing of the group is applied, and *bad is the op
 * that LMDB refused (NULL when the commit itself failed).
 */
static int
apply_group(struct sl__jm_store *s, struct op *ops, struct op **bad)
{
    MDB_txn *txn = NULL;
    struct op *o = NULL;
    int rc = 0;

    *bad = NULL;
    if (atomic_load(&s->test_fail) != 0) {
        return atomic_load(&s->test_fail);
    }
    rc = mdb_txn_begin(s->env, NULL, 0, &txn);
    if (rc != 0) {
        return rc;
    }
    for (o = ops; o != NULL; o = o->next) {
        MDB_val k = {o->klen, o->data};
        MDB_val v = {o->vlen, o->data + o->klen};

        if (o->skip) {
            continue;
        }
        if (o->del == OP_PUT) {
            rc = mdb_put(txn, s->dbi[o->db], &k, &v, 0);
        } else {
            rc = apply_del(txn, s->dbi[o->db], o);
        }
        if (rc != 0) {
            mdb_txn_abort(txn);
            *bad = o;
            return rc;
        }
    }
    rc = mdb_txn_commit(txn);
    if (rc == 0 && s->durability == SL_DURABILITY_FSYNC) {
        rc = mdb_env_sync(s->env, 1);
    }
    return rc;
}

static void
free_ops(struct op *o)
{
    while (o != NULL) {
        struct op *next = o->next;

        sl_free(o);
        o = next;
    }
}

/* Errors of one op alone, which LMDB refuses before changing anything. */
static int
op_error(int rc)
{
    return rc == MDB_BAD_VALSIZE || rc == EINVAL;
}

/*
 * Commit one group.  An op that LMDB refuses on its own (edge checks keep
 * keys short, so this is a bug) is left out with an error in the log and
 * the rest committed; a failing commit (a full disk, I/O) is retried with
 * a backoff from RETRY_FIRST_MS doubling to RETRY_MAX_MS, so changes wait
 * instead of being lost.  Only when the server stops during a failure
 * does the store give up and refuse further changes.
 */
static int
commit_group(struct sl__jm_store *s, struct op *group)
{
    unsigned delay = RETRY_FIRST_MS;
    struct op *bad = NULL;
    struct timespec until;
    int rc = 0;

    for (;;) {
        rc = apply_group(s, group, &bad);
        if (rc == 0) {
            return 0;
        }
        if (bad != NULL && op_error(rc)) {
            char key[96];
            char esc[400];

            (void)snprintf(key,
                           sizeof(key),
                           "%.*s",
                           (int)(bad->klen < 80 ? bad->klen : 80),
                           bad->data);
            (void)sl_utf8_escape(esc, sizeof(esc), key);
            SL_ERROR("jobmanager state: %s of a %zu-byte key '%s%s' in "
                     "'%s' refused (%s); left out, the rest is committed",
                     bad->del != OP_PUT ? "delete" : "put",
                     bad->klen,
                     esc,
                     bad->klen > 80 ? "..." : "",
                     db_names[bad->db],
                     mdb_strerror(rc));
            bad->skip = 1;
            continue;
        }
        SL_WARN("jobmanager state: commit failed (%s); retrying in %u ms",
                mdb_strerror(rc),
                delay);
        (void)clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(delay / 1000);
        until.tv_nsec += (long)(delay % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        (void)pthread_mutex_lock(&s->mu);
        /* s->work is also signalled by every new op: wait out the delay. */
        while (!s->stopping && !s->give_up &&
               pthread_cond_timedwait(&s->work, &s->mu, &until) != ETIMEDOUT) {
        }
        if (s->stopping || s->give_up) {
            (void)pthread_mutex_unlock(&s->mu);
            return rc;
        }
        (void)pthread_mutex_unlock(&s->mu);
        delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
    }
}

static void *
writer_main(void *arg)
{
    struct sl__jm_store *s = arg;

    (void)pthread_mutex_lock(&s->mu);
    for (;;) {
        struct op *group = NULL;
        uint64_t upto = 0;
        int rc = 0;

        while (s->head == NULL && !s->stopping) {
            (void)pthread_cond_wait(&s->work, &s->mu);
        }
        if (s->head == NULL && s->stopping) {
            break;
        }
        if (s->swap_lock != NULL) {
            /* Take the group only between two engine operations, so the
             * changes of one operation never straddle two commits.  Lock
             * order is always engine lock, then s->mu. */
            (void)pthread_mutex_unlock(&s->mu);
            (void)pthread_mutex_lock(s->swap_lock);
            (void)pthread_mutex_lock(&s->mu);
        }
        group = s->head;
        upto = s->queued;
        s->head = NULL;
        s->tail = NULL;
        (void)pthread_mutex_unlock(&s->mu);
        if (s->swap_lock != NULL) {
            (void)pthread_mutex_unlock(s->swap_lock);
        }

        rc = s->failed ? SL_EIO : commit_group(s, group);
        free_ops(group);

        (void)pthread_mutex_lock(&s->mu);
        if (rc == 0) {
            s->durable = upto;
        } else if (!s->failed) {
            s->failed = 1;
            (void)snprintf(
                s->failure, sizeof(s->failure), "%s", mdb_strerror(rc));
            SL_ERROR("jobmanager state: commit failed while stopping: %s; "
                     "the changes of the last group are lost",
                     s->failure);
        }
        s->committed = upto;
        (void)pthread_cond_broadcast(&s->done);
        if (s->notify != NULL) {
            /* Outside s->mu: the callback takes the engine lock, which
             * comes before s->mu in the lock order. */
            (void)pthread_mutex_unlock(&s->mu);
            s->notify(s->notify_arg);
            (void)pthread_mutex_lock(&s->mu);
        }
    }
    (void)pthread_mutex_unlock(&s->mu);
    return NULL;
}

int
sl__jm_store_open(const char *dir,
                  enum sl_durability durability,
                  struct sl__jm_store **out,
                  struct sl_err *err)
{
    struct sl__jm_store *s = NULL;
    MDB_txn *txn = NULL;
    int rc = 0;
    int i = 0;

    *out = NULL;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          NULL,
                          "cannot create '%s': %s",
                          dir,
                          sl_errno_str(errno));
    }
    s = sl_calloc(1, sizeof(*s));
    s->durability = durability;
    rc = mdb_env_create(&s->env);
    if (rc == 0) {
        rc = mdb_env_set_maxdbs(s->env, SL__JM_NDB);
    }
    if (rc == 0) {
        rc = mdb_env_set_mapsize(s->env, MAP_SIZE);
    }
    if (rc == 0) {
        rc = mdb_env_open(s->env, dir, MDB_NOSYNC | MDB_NOTLS, 0644);
    }
    if (rc != 0) {
        (void)lmdb_err(err, rc, "cannot open the environment");
        goto fail;
    }
    rc = mdb_txn_begin(s->env, NULL, 0, &txn);
    for (i = 0; rc == 0 && i < SL__JM_NDB; i++) {
        rc = mdb_dbi_open(txn, db_names[i], MDB_CREATE, &s->dbi[i]);
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (rc != 0) {
        if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        (void)lmdb_err(err, rc, "cannot open the databases");
        goto fail;
    }
    (void)pthread_mutex_init(&s->mu, NULL);
    (void)pthread_cond_init(&s->work, NULL);
    (void)pthread_cond_init(&s->done, NULL);
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
        rc = sl_err_set(err, SL_EIO, NULL, "cannot start the writer thread");
        goto fail;
    }
    *out = s;
    return 0;

fail:
    mdb_env_close(s->env);
    sl_free(s);
    return rc < 0 ? rc : SL_EIO;
}

void
sl__jm_store_usage(struct sl__jm_store *s, uint64_t *used, uint64_t *size)
{
    MDB_envinfo info;
    MDB_stat st;

    *used = 0;
    *size = 0;
    if (mdb_env_info(s->env, &info) == 0 && mdb_env_stat(s->env, &st) == 0) {
        *used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
        *size = (uint64_t)info.me_mapsize;
    }
}

void
sl__jm_store_test_fail(struct sl__jm_store *s, int rc)
{
    atomic_store(&s->test_fail, rc);
}

void
sl__jm_store_give_up(struct sl__jm_store *s)
{
    (void)pthread_mutex_lock(&s->mu);
    s->give_up = 1;
    (void)pthread_cond_broadcast(&s->work);
    (void)pthread_mutex_unlock(&s->mu);
}

void
sl__jm_store_close(struct sl__jm_store *s)
{
    if (s == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    (void)pthread_cond_signal(&s->work);
    (void)pthread_mutex_unlock(&s->mu);
    (void)pthread_join(s->writer, NULL);
    (void)mdb_env_sync(s->env, 1);
    mdb_env_close(s->env);
    (void)pthread_mutex_destroy(&s->mu);
    (void)pthread_cond_destroy(&s->work);
    (void)pthread_cond_destroy(&s->done);
    sl_free(s);
}

static uint64_t
enqueue(struct sl__jm_store *s,
        enum sl__jm_dbi db,
        int del,
        const void *key,
        size_t klen,
        const void *val,
        size_t vlen)
{
    struct op *o = sl_malloc(sizeof(*o) + klen + vlen);
    uint64_t seq = 0;

    o->next = NULL;
    o->db = db;
    o->del = del;
    o->skip = 0;
    o->klen = klen;
    o->vlen = vlen;
    memcpy(o->data, key, klen);
    if (vlen > 0) {
        memcpy(o->data + klen, val, vlen);
    }
    (void)pthread_mutex_lock(&s->mu);
    if (s->tail != NULL) {
        s->tail->next = o;
    } else {
        s->head = o;
    }
    s->tail = o;
    seq = ++s->queued;
    (void)pthread_cond_signal(&s->work);
    (void)pthread_mutex_unlock(&s->mu);
    return seq;
}

void
sl__jm_store_set_swap_lock(struct sl__jm_store *s, pthread_mutex_t *lock)
{
    (void)pthread_mutex_lock(&s->mu);
    s->swap_lock = lock;
    (void)pthread_mutex_unlock(&s->mu);
}

uint64_t
sl__jm_store_put(struct sl__jm_store *s,
                 enum sl__jm_dbi db,
                 const void *key,
                 size_t klen,
                 const void *val,
                 size_t vlen)
{
    return enqueue(s, db, OP_PUT, key, klen, val, vlen);
}

uint64_t
sl__jm_store_del(struct sl__jm_store *s,
                 enum sl__jm_dbi db,
                 const void *key,
                 size_t klen)
{
    return enqueue(s, db, OP_DEL, key, klen, NULL, 0);
}

uint64_t
sl__jm_store_del_unless(struct sl__jm_store *s,
                        enum sl__jm_dbi db,
                        const void *key,
                        size_t klen,
                        const void *keep,
                        size_t keep_len)
{
    return enqueue(s, db, OP_DEL_UNLESS, key, klen, keep, keep_len);
}

uint64_t
sl__jm_store_put_json(struct sl__jm_store *s,
                      enum sl__jm_dbi db,
                      const void *key,
                      size_t klen,
                      const json_t *val)
{
    char *text = json_dumps(val, JSON_COMPACT);
    uint64_t seq = 0;

    if (text == NULL) {
        sl_panic("jobmanager state: cannot serialise a value");
    }
    seq = enqueue(s, db, OP_PUT, key, klen, text, strlen(text));
    sl_free(text);
    return seq;
}

int
sl__jm_store_wait(struct sl__jm_store *s, uint64_t seq, struct sl_err *err)
{
    int rc = 0;

    (void)pthread_mutex_lock(&s->mu);
    while (s->committed < seq) {
        (void)pthread_cond_wait(&s->done, &s->mu);
    }
    if (s->failed) {
        rc = sl_err_set(err,
                        SL_EIO,
                        NULL,
                        "jobmanager state: a commit failed (%s); restart "
                        "the server",
                        s->failure);
    }
    (void)pthread_mutex_unlock(&s->mu);
    return rc;
}

uint64_t
sl__jm_store_committed(struct sl__jm_store *s)
{
    uint64_t seq = 0;

    (void)pthread_mutex_lock(&s->mu);
    seq = s->durable;
    (void)pthread_mutex_unlock(&s->mu);
    return seq;
}

void
sl__jm_store_set_notify(struct sl__jm_store *s,
                        void (*notify)(void *arg),
                        void *arg)
{
    (void)pthread_mutex_lock(&s->mu);
    s->notify = notify;
    s->notify_arg = arg;
    (void)pthread_mutex_unlock(&s->mu);
}

uint64_t
sl__jm_store_last(struct sl__jm_store *s)
{
    uint64_t seq = 0;

    (void)pthread_mutex_lock(&s->mu);
    seq = s->queued;
    (void)pthread_mutex_unlock(&s->mu);
    return seq;
}

int
sl__jm_store_scan(struct sl__jm_store *s,
                  enum sl__jm_dbi db,
                  const void *prefix,
                  size_t plen,
                  int (*cb)(void *ctx,
                            const void *key,
                            size_t klen,
                            const void *val,
                            size_t vlen),
                  void *ctx)
{
    return sl__jm_store_scan_from(s, db, prefix, plen, prefix, plen, cb, ctx);
}

int
sl__jm_store_scan_from(struct sl__jm_store *s,
                       enum sl__jm_dbi db,
                       const void *prefix,
                       size_t plen,
                       const void *from,
                       size_t flen,
                       int (*cb)(void *ctx,
                                 const void *key,
                                 size_t klen,
                                 const void *val,
                                 size_t vlen),
                       void *ctx)
{
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k = {flen, (void *)from};
    MDB_val v;
    int rc = 0;
    MDB_cursor_op op = flen > 0 ? MDB_SET_RANGE : MDB_FIRST;

    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return SL_EIO;
    }
    rc = mdb_cursor_open(txn, s->dbi[db], &cur);
    if (rc != 0) {
        mdb_txn_abort(txn);
        return SL_EIO;
    }
    for (;;) {
        rc = mdb_cursor_get(cur, &k, &v, op);
        op = MDB_NEXT;
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc != 0) {
            rc = SL_EIO;
            break;
        }
        if (plen > 0 && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen))) {
            break;
        }
        rc = cb(ctx, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
        if (rc != 0) {
            break;
        }
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return rc;
}

int
sl__jm_store_get_json(struct sl__jm_store *s,
                      enum sl__jm_dbi db,
                      const void *key,
                      size_t klen,
                      json_t **out)
{
    MDB_txn *txn = NULL;
    MDB_val k = {klen, (void *)key};
    MDB_val v;
    int rc = 0;

    *out = NULL;
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return SL_EIO;
    }
    rc = mdb_get(txn, s->dbi[db], &k, &v);
    if (rc == 0) {
        *out = json_loadb(v.mv_data, v.mv_size, 0, NULL);
        rc = *out != NULL ? 0 : SL_ECORRUPT;
    } else {
        rc = rc == MDB_NOTFOUND ? SL_ENOENT : SL_EIO;
    }
    mdb_txn_abort(txn);
    return rc;
}
