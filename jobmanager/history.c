/*
 * The per-document history of job runs (docs/jobmanager.md, "Document
 * history").  Workers report what happened to a document in their finish;
 * a SUCCESSFUL finish records each report as an entry of the run's
 * history (failures and skips also as the document's last problem, which
 * a later push or delete clears), queued under jm->mu
 * with the rest of the finish, so both commit in its group commit.
 *
 * A run's entries are numbered from 0 (hist_next); their keys are
 * "<job>\0<runId>\0" and the number in 8 big-endian bytes, so they sort in
 * the order they were recorded and a range of them can be dropped without
 * reading it.  A run keeps its newest history_max_per_run entries (the
 * oldest go as new ones come); the clean-up thread drops the entries of
 * all but the newest history_keep_runs runs of a job and entries older
 * than history_max_days.  An ended run's first kept entry is the first key
 * under its prefix.
 */
#include <stdlib.h>
#include <string.h>

#include "jobmanager/engine_int.h"

#define DEF_MAX_PER_RUN 1000000u
#define DEF_KEEP_RUNS   20u
#define DEF_MAX_DAYS    30u
#define DROP_BATCH      10000u  /* deletes queued between waits */
#define PAGE_SCAN_MAX   100000u /* entries one page may look at */

#define HKEY_MAX (SL_NAME_MAX + SL_JM_RUN_ID_MAX + 2 + 8)
#define DKEY_MAX 480 /* under LMDB's 511-byte keys */

static const char *const state_names[SL_JM_DOC_NSTATES] = {
    "new", "changed", "deleted", "failed", "skipped"};

const char *
sl_jm_doc_state_name(enum sl_jm_doc_state s)
{
    return (unsigned)s < SL_JM_DOC_NSTATES ? state_names[s] : "?";
}

int
sl_jm_doc_state_parse(const char *name)
{
    int i = 0;

    for (i = 0; name != NULL && i < SL_JM_DOC_NSTATES; i++) {
        if (strcmp(name, state_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static unsigned
max_per_run(const struct sl_jm *jm)
{
    return jm->cfg.history_max_per_run ? jm->cfg.history_max_per_run
                                       : DEF_MAX_PER_RUN;
}

/* "<job>\0<runId>\0", then @seq big-endian when @with_seq. */
static size_t
hist_key(
    char *buf, const char *job, const char *run_id, uint64_t seq, int with_seq)
{
    size_t jl = strnlen(job, SL_NAME_MAX);
    size_t rl = strnlen(run_id, SL_JM_RUN_ID_MAX - 1);
    size_t n = 0;
    int i = 0;

    memcpy(buf, job, jl);
    buf[jl] = '\0';
    memcpy(buf + jl + 1, run_id, rl);
    buf[jl + 1 + rl] = '\0';
    n = jl + rl + 2;
    if (with_seq) {
        for (i = 7; i >= 0; i--) {
            buf[n++] = (char)(seq >> (i * 8));
        }
    }
    return n;
}

static uint64_t
key_seq(const void *key, size_t klen)
{
    return sl_be_get64((const unsigned char *)key + klen - 8);
}

/* "<source>\0<id>", or for a long id "<source>\0<its first bytes>\0<its
 * SHA-256 in hex>", DKEY_MAX bytes (ids hold no NUL, so the forms cannot
 * meet). */
static size_t
doc_key(char buf[DKEY_MAX], const char *source, const char *id)
{
    size_t sl = strnlen(source, SL_NAME_MAX);
    size_t il = strlen(id);
    size_t keep = 0;
    char hex[65];

    memcpy(buf, source, sl);
    buf[sl] = '\0';
    if (sl + 1 + il <= DKEY_MAX) {
        memcpy(buf + sl + 1, id, il);
        return sl + 1 + il;
    }
    /* keep: at least DKEY_MAX - SL_NAME_MAX - 66 = 158 bytes */
    keep = DKEY_MAX - sl - 2 - 64;
    sl_sha256_hex(id, il, hex);
    memcpy(buf + sl + 1, id, keep);
    buf[sl + 1 + keep] = '\0';
    memcpy(buf + sl + 2 + keep, hex, 64);
    return DKEY_MAX;
}

/* ------------------------------------------------------------------------
 * Recording.
 * --------------------------------------------------------------------- */

static int
check_str(const json_t *e,
          const char *name,
          size_t i,
          size_t max,
          int required,
          struct sl_err *err)
{
    const json_t *v = json_object_get(e, name);

    if (v == NULL || json_is_null(v)) {
        if (!required) {
            return 0;
        }
        return sl_err_set(err,
                          SL_EINVAL,
                          "documents",
                          "documents[%zu].%s is missing",
                          i,
                          name);
    }
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "documents",
                          "documents[%zu].%s must be a string of 1 to %zu "
                          "bytes without NUL",
                          i,
                          name,
                          max);
    }
    return 0;
}

int
sl__jm_history_check(const json_t *docs, struct sl_err *err)
{
    if (docs != NULL && !json_is_null(docs) && !json_is_array(docs)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "documents",
                          "documents must be an array of document reports");
    }
    return 0;
}

/* Entry @i of a finish's reports: 0, or SL_EINVAL with @err saying what
 * breaks the rules (the entry is then left out and counted). */
static int
entry_check(const json_t *e, size_t i, struct sl_err *err)
{
    int rc = 0;

    if (!json_is_object(e)) {
        return sl_err_set(
            err, SL_EINVAL, "documents", "documents[%zu] must be an object", i);
    }
    if (sl_jm_doc_state_parse(json_string_value(json_object_get(e, "state"))) <
        0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "documents",
                          "documents[%zu].state must be new, changed, "
                          "deleted, failed or skipped",
                          i);
    }
    rc = check_str(e, "id", i, SL_JM_DOC_ID_MAX, 1, err);
    if (rc == 0) {
        rc = check_str(e, "source", i, SL_NAME_MAX, 0, err);
    }
    if (rc == 0) {
        rc = check_str(e, "reason", i, SL_JM_DOC_REASON_MAX, 0, err);
    }
    if (rc == 0) {
        rc = check_str(e, "message", i, SL_JM_DOC_MESSAGE_MAX, 0, err);
    }
    return rc;
}

static void
set_str(json_t *o, const char *name, const json_t *from)
{
    const char *v = json_string_value(json_object_get(from, name));

    if (v != NULL) {
        (void)json_object_set_new(o, name, json_string(v));
    }
}

/*
 * The document's last problem after history entry @e (state @st) of run
 * @r: a failure or a skip is kept (key: @source and the entry's id) until
 * the document is pushed in a later run or deleted.  A push in the same
 * run leaves it: what the run reported before the push (an archive entry
 * indexed without its content) is about the version it pushed.  The value
 * starts with the run ({"job":…,"runId":…,…}: jansson keeps the order of
 * keys), which the conditional delete compares.
 */
static void
last_problem(struct sl_jm *jm,
             const struct run *r,
             int st,
             const char *source,
             json_t *e)
{
    char dkey[DKEY_MAX];
    size_t klen =
        doc_key(dkey, source, json_string_value(json_object_get(e, "id")));
    json_t *v = json_pack("{s:s, s:s}", "job", r->job, "runId", r->id);
    char *tag = NULL;

    if (st == SL_JM_DOC_FAILED || st == SL_JM_DOC_SKIPPED) {
        (void)json_object_update(v, e);
        (void)json_object_del(v, "id");
        (void)json_object_del(v, "source");
        (void)sl__jm_store_put_json(jm->st, SL__JM_DB_DOCS, dkey, klen, v);
    } else if (st == SL_JM_DOC_DELETED) {
        (void)sl__jm_store_del(jm->st, SL__JM_DB_DOCS, dkey, klen);
    } else {
        tag = json_dumps(v, JSON_COMPACT);
        if (tag == NULL) {
            sl_panic("jobmanager history: cannot serialise a run");
        }
        /* without the closing brace: the prefix of this run's values */
        (void)sl__jm_store_del_unless(
            jm->st, SL__JM_DB_DOCS, dkey, klen, tag, strlen(tag) - 1);
        sl_free(tag);
    }
    json_decref(v);
}

/* One reported document: the history entry, and the document's last
 * problem (a failure or a skip) or none. */
static void
add_one(struct sl_jm *jm,
        struct run *r,
        const char *worker,
        const json_t *d,
        int64_t now)
{
    const char *source = json_string_value(json_object_get(d, "source"));
    int st =
        sl_jm_doc_state_parse(json_string_value(json_object_get(d, "state")));
    json_t *e = NULL;
    char key[HKEY_MAX];
    size_t klen = 0;

    if (source == NULL) {
        source = r->data_source;
    }
    e = json_pack("{s:s, s:s, s:I}",
                  "state",
                  state_names[st],
                  "worker",
                  worker,
                  "time",
                  (json_int_t)now);
    set_str(e, "id", d);
    if (source != NULL) {
        (void)json_object_set_new(e, "source", json_string(source));
    }
    set_str(e, "reason", d);
    set_str(e, "message", d);
    klen = hist_key(key, r->job, r->id, r->hist_next++, 1);
    (void)sl__jm_store_put_json(jm->st, SL__JM_DB_HISTORY, key, klen, e);
    while (r->hist_next - r->hist_first > max_per_run(jm)) {
        klen = hist_key(key, r->job, r->id, r->hist_first++, 1);
        (void)sl__jm_store_del(jm->st, SL__JM_DB_HISTORY, key, klen);
    }
    if (source != NULL) {
        last_problem(jm, r, st, source, e);
    }
    json_decref(e);
}

unsigned
sl__jm_history_add(struct sl_jm *jm,
                   struct run *r,
                   const char *worker,
                   const json_t *docs)
{
    int64_t now = sl_time_ms();
    const json_t *d = NULL;
    unsigned bad = 0;
    size_t i = 0;

    json_array_foreach(docs, i, d)
    {
        struct sl_err err;
        int st = 0;

        sl_err_clear(&err);
        if (i >= SL_JM_DOCS_PER_FINISH || entry_check(d, i, &err) != 0) {
            if (bad++ == 0) {
                SL_WARN("jobmanager: run %s of job %s: a report of worker "
                        "%s left out: %s",
                        r->id,
                        r->job,
                        worker,
                        i >= SL_JM_DOCS_PER_FINISH
                            ? "more than 10000 in one finish"
                            : err.message);
            }
            continue;
        }
        st = sl_jm_doc_state_parse(
            json_string_value(json_object_get(d, "state")));
        r->docs[st]++;
        if (!jm->cfg.history_off) {
            add_one(jm, r, worker, d, now);
        }
    }
    return bad;
}

json_t *
sl__jm_history_counts(const struct run *r)
{
    json_t *j = json_object();
    int i = 0;

    for (i = 0; i < SL_JM_DOC_NSTATES; i++) {
        (void)json_object_set_new(
            j, state_names[i], json_integer((json_int_t)r->docs[i]));
    }
    return j;
}

void
sl__jm_history_persist(const struct run *r, json_t *internal)
{
    (void)json_object_set_new(
        internal, "histFirst", json_integer((json_int_t)r->hist_first));
    (void)json_object_set_new(
        internal, "histNext", json_integer((json_int_t)r->hist_next));
}

void
sl__jm_history_load(struct run *r, const json_t *j)
{
    const json_t *docs = json_object_get(j, "documents");
    const json_t *in = json_object_get(j, "_internal");
    int i = 0;

    for (i = 0; i < SL_JM_DOC_NSTATES; i++) {
        r->docs[i] =
            (uint64_t)json_integer_value(json_object_get(docs, state_names[i]));
    }
    r->hist_first =
        (uint64_t)json_integer_value(json_object_get(in, "histFirst"));
    r->hist_next =
        (uint64_t)json_integer_value(json_object_get(in, "histNext"));
}

/* ------------------------------------------------------------------------
 * Dropping entries.
 * --------------------------------------------------------------------- */

/* Keys collected by a scan, to delete after it. */
struct keys {
    char **k;
    size_t *len;
    size_t n;
    int64_t before; /* history: only entries older than this (ms) */
    uint64_t last;  /* seq of the last collected history key */
    int history;
};

static int
collect_key(
    void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct keys *ks = ctx;

    if (ks->n == DROP_BATCH) {
        return 1;
    }
    if (ks->history) {
        json_t *e = json_loadb(val, vlen, 0, NULL);
        int64_t t = (int64_t)json_integer_value(json_object_get(e, "time"));

        json_decref(e);
        if (t >= ks->before) {
            return 1; /* entries are in time order: the rest are newer */
        }
        ks->last = key_seq(key, klen);
    }
    ks->k[ks->n] = sl_malloc(klen);
    memcpy(ks->k[ks->n], key, klen);
    ks->len[ks->n++] = klen;
    return 0;
}

static void
keys_free(struct keys *ks)
{
    size_t i = 0;

    for (i = 0; i < ks->n; i++) {
        sl_free(ks->k[i]);
    }
    ks->n = 0;
}

/*
 * Delete the keys of @db under @prefix (history entries: those older than
 * @before), in batches.  For the active run @job/@run_id, entries are
 * deleted only from its kept range, which moves past them.
 */
static int
drop_prefix(struct sl_jm *jm,
            enum sl__jm_dbi db,
            const char *prefix,
            size_t plen,
            int64_t before,
            const char *job,
            const char *run_id)
{
    struct keys ks = {0};
    int rc = 0;

    ks.k = sl_calloc(DROP_BATCH, sizeof(*ks.k));
    ks.len = sl_calloc(DROP_BATCH, sizeof(*ks.len));
    ks.history = db == SL__JM_DB_HISTORY;
    ks.before = before;
    for (;;) {
        struct run *r = NULL;
        uint64_t seq = 0;
        size_t i = 0;

        rc = sl__jm_store_scan(jm->st, db, prefix, plen, collect_key, &ks);
        if (rc < 0 || ks.n == 0) {
            break;
        }
        (void)pthread_mutex_lock(&jm->mu);
        if (jm->stopping && db == SL__JM_DB_HISTORY) {
            /* retention goes on at the next start; a stop does not wait */
            (void)pthread_mutex_unlock(&jm->mu);
            rc = SL_ENOTREADY;
            break;
        }
        r = job != NULL ? sl__jm_run_find(jm, job) : NULL;
        if (r != NULL && strcmp(r->id, run_id) != 0) {
            r = NULL;
        }
        for (i = 0; i < ks.n; i++) {
            (void)sl__jm_store_del(jm->st, db, ks.k[i], ks.len[i]);
        }
        if (r != NULL && ks.last + 1 > r->hist_first) {
            r->hist_first = ks.last + 1;
            sl__jm_run_persist(jm, r);
        }
        seq = sl__jm_store_last(jm->st);
        (void)pthread_mutex_unlock(&jm->mu);
        rc = sl__jm_store_wait(jm->st, seq, NULL);
        if (rc != 0 || ks.n < DROP_BATCH) {
            break;
        }
        keys_free(&ks);
    }
    keys_free(&ks);
    sl_free(ks.k);
    sl_free(ks.len);
    return rc < 0 ? rc : 0;
}

int
sl__jm_history_drop(struct sl_jm *jm, const char *job, const char *run_id)
{
    char key[HKEY_MAX];
    size_t klen = hist_key(key, job, run_id, 0, 0);

    return drop_prefix(jm, SL__JM_DB_HISTORY, key, klen, INT64_MAX, NULL, NULL);
}

int
sl_jm_documents_forget(struct sl_jm *jm, const char *source, struct sl_err *err)
{
    size_t plen = strnlen(source, SL_NAME_MAX) + 1;
    int rc = drop_prefix(jm, SL__JM_DB_DOCS, source, plen, 0, NULL, NULL);

    if (rc != 0) {
        return sl_err_set(err,
                          SL_EIO,
                          NULL,
                          "cannot forget the documents of source '%s'",
                          source);
    }
    return 0;
}

/* The runs in the state: "<job>\0<runId>" keys, in key order. */
struct runs {
    char **key;
    size_t n, cap;
};

static int
collect_run(
    void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct runs *rs = ctx;

    (void)val;
    (void)vlen;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 64;
        rs->key = sl_realloc(rs->key, rs->cap * sizeof(*rs->key));
    }
    rs->key[rs->n] = sl_malloc(klen + 1); /* job, NUL, run id, NUL */
    memcpy(rs->key[rs->n], key, klen);
    rs->key[rs->n][klen] = '\0';
    rs->n++;
    return 0;
}

void
sl__jm_history_prune(struct sl_jm *jm, const char *job)
{
    unsigned keep =
        jm->cfg.history_keep_runs ? jm->cfg.history_keep_runs : DEF_KEEP_RUNS;
    unsigned days =
        jm->cfg.history_max_days ? jm->cfg.history_max_days : DEF_MAX_DAYS;
    int64_t before = sl_time_ms() - (int64_t)days * 86400 * 1000;
    struct runs rs = {0};
    size_t i = 0;
    unsigned rank = 0;

    (void)sl__jm_store_scan(jm->st,
                            SL__JM_DB_RUNS,
                            job,
                            job != NULL ? strlen(job) + 1 : 0,
                            collect_run,
                            &rs);
    /* newest first: run ids sort by their start time */
    for (i = rs.n; i-- > 0;) {
        const char *j = rs.key[i];
        const char *id = j + strlen(j) + 1;
        char key[HKEY_MAX];
        size_t klen = hist_key(key, j, id, 0, 0);

        rank = i + 1 < rs.n && strcmp(rs.key[i + 1], j) == 0 ? rank + 1 : 0;
        (void)drop_prefix(jm,
                          SL__JM_DB_HISTORY,
                          key,
                          klen,
                          rank >= keep ? INT64_MAX : before,
                          j,
                          id);
    }
    for (i = 0; i < rs.n; i++) {
        sl_free(rs.key[i]);
    }
    sl_free(rs.key);
}

/* ------------------------------------------------------------------------
 * Reading.
 * --------------------------------------------------------------------- */

/* An entry as the API shows it: its number, the time as text. */
static json_t *
entry_out(json_t *e, uint64_t seq)
{
    json_t *t = json_object_get(e, "time");
    char ts[32];

    if (json_is_integer(t)) {
        sl_time_format((int64_t)json_integer_value(t), ts, sizeof(ts));
        (void)json_object_set_new(e, "time", json_string(ts));
    }
    if (seq != UINT64_MAX) {
        (void)json_object_set_new(e, "seq", json_integer((json_int_t)seq));
    }
    return e;
}

struct page {
    json_t *list;
    int state; /* -1: all */
    unsigned limit;
    unsigned looked;
    uint64_t last; /* seq of the last entry looked at */
    int more;
    uint64_t first; /* seq of the first entry seen */
    int any;
};

static int
page_one(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct page *p = ctx;
    json_t *e = NULL;

    if (json_array_size(p->list) >= p->limit || p->looked >= PAGE_SCAN_MAX) {
        p->more = 1;
        return 1;
    }
    p->looked++;
    p->last = key_seq(key, klen);
    e = json_loadb(val, vlen, 0, NULL);
    if (e != NULL &&
        (p->state < 0 || sl_jm_doc_state_parse(json_string_value(
                             json_object_get(e, "state"))) == p->state)) {
        (void)json_array_append_new(p->list, entry_out(e, p->last));
        return 0;
    }
    json_decref(e);
    return 0;
}

static int
first_one(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct page *p = ctx;

    (void)val;
    (void)vlen;
    p->first = key_seq(key, klen);
    p->any = 1;
    return 1;
}

/* The run to show: the active one, or a stored one.  Fills @out's "runId",
 * "state" and "counts" (without "recorded") and *next. */
static int
find_run(struct sl_jm *jm,
         const char *job,
         const char *run_id,
         json_t *out,
         uint64_t *next,
         struct sl_err *err)
{
    struct run *r = NULL;
    struct runs rs = {0};
    json_t *j = NULL;
    char key[SL_NAME_MAX + SL_JM_RUN_ID_MAX + 2];
    size_t i = 0;
    int rc = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL && (run_id == NULL || strcmp(run_id, r->id) == 0)) {
        (void)json_object_set_new(out, "runId", json_string(r->id));
        (void)json_object_set_new(
            out, "state", json_string(sl__jm_state_name(r->state)));
        (void)json_object_set_new(out, "counts", sl__jm_history_counts(r));
        *next = r->hist_next;
        (void)pthread_mutex_unlock(&jm->mu);
        return 0;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (run_id == NULL) {
        (void)sl__jm_store_scan(
            jm->st, SL__JM_DB_RUNS, job, strlen(job) + 1, collect_run, &rs);
        if (rs.n > 0) {
            const char *last = rs.key[rs.n - 1];

            rc = sl__jm_store_get_json(jm->st,
                                       SL__JM_DB_RUNS,
                                       last,
                                       strlen(last) + 1 +
                                           strlen(last + strlen(last) + 1),
                                       &j);
        }
        for (i = 0; i < rs.n; i++) {
            sl_free(rs.key[i]);
        }
        sl_free(rs.key);
        if (j == NULL) {
            return sl_err_set(
                err, SL_ENOENT, "job", "job '%s' has no run", job);
        }
    } else if (strlen(job) + strlen(run_id) + 2 <= sizeof(key)) {
        rc =
            sl__jm_store_get_json(jm->st,
                                  SL__JM_DB_RUNS,
                                  key,
                                  sl__jm_run_key(key, sizeof(key), job, run_id),
                                  &j);
    }
    if (j == NULL) {
        return rc == SL_EIO ? sl_err_set(err,
                                         SL_EIO,
                                         NULL,
                                         "cannot read the runs of job '%s'",
                                         job)
                            : sl_err_set(err,
                                         SL_ENOENT,
                                         "runId",
                                         "job '%s' has no run '%s'",
                                         job,
                                         run_id);
    }
    (void)json_object_set(out, "runId", json_object_get(j, "jobId"));
    (void)json_object_set(out, "state", json_object_get(j, "state"));
    (void)json_object_set_new(
        out,
        "counts",
        json_object_get(j, "documents") != NULL
            ? json_deep_copy(json_object_get(j, "documents"))
            : json_object());
    *next = (uint64_t)json_integer_value(
        json_object_get(json_object_get(j, "_internal"), "histNext"));
    json_decref(j);
    return 0;
}

int
sl_jm_run_documents(struct sl_jm *jm,
                    const char *job,
                    const char *run_id,
                    int state,
                    uint64_t after,
                    unsigned limit,
                    json_t **out,
                    struct sl_err *err)
{
    json_t *o = json_pack("{s:s}", "job", job);
    struct page p = {0};
    char key[HKEY_MAX];
    char from[HKEY_MAX];
    size_t plen = 0;
    uint64_t next = 0;
    uint64_t total = 0;
    const char *k = NULL;
    json_t *v = NULL;
    int rc = 0;

    *out = NULL;
    if (strlen(job) > SL_NAME_MAX) {
        json_decref(o);
        return sl_err_set(err, SL_ENOENT, "job", "no job '%.64s...'", job);
    }
    if (run_id != NULL && strlen(run_id) >= SL_JM_RUN_ID_MAX) {
        json_decref(o);
        return sl_err_set(err,
                          SL_ENOENT,
                          "runId",
                          "job '%s' has no run '%.64s...'",
                          job,
                          run_id);
    }
    rc = find_run(jm, job, run_id, o, &next, err);
    if (rc != 0) {
        json_decref(o);
        return rc;
    }
    run_id = json_string_value(json_object_get(o, "runId"));
    if (run_id == NULL) {
        json_decref(o);
        return sl_err_set(
            err, SL_ECORRUPT, NULL, "a stored run of job '%s' has no id", job);
    }
    plen = hist_key(key, job, run_id, 0, 0);
    rc = sl__jm_store_scan(jm->st, SL__JM_DB_HISTORY, key, plen, first_one, &p);
    p.list = json_array();
    p.state = state;
    p.limit = limit;
    if (rc >= 0) {
        rc = sl__jm_store_scan_from(jm->st,
                                    SL__JM_DB_HISTORY,
                                    key,
                                    plen,
                                    from,
                                    hist_key(from, job, run_id, after, 1),
                                    page_one,
                                    &p);
    }
    if (rc < 0) {
        json_decref(p.list);
        json_decref(o);
        return sl_err_set(
            err, SL_EIO, NULL, "cannot read the history of job '%s'", job);
    }
    json_object_foreach(json_object_get(o, "counts"), k, v)
    {
        total += (uint64_t)json_integer_value(v);
    }
    next = p.any && next > p.first ? next - p.first : 0;
    (void)json_object_set_new(json_object_get(o, "counts"),
                              "recorded",
                              json_integer((json_int_t)next));
    (void)json_object_set_new(
        json_object_get(o, "counts"),
        "notRecorded",
        json_integer((json_int_t)(total > next ? total - next : 0)));
    (void)json_object_set_new(o, "documents", p.list);
    if (p.more) {
        (void)json_object_set_new(
            o, "next", json_integer((json_int_t)(p.last + 1)));
    }
    *out = o;
    return 0;
}

int
sl_jm_document_problem(struct sl_jm *jm,
                       const char *source,
                       const char *id,
                       json_t **out,
                       struct sl_err *err)
{
    char key[DKEY_MAX];
    int rc = 0;

    *out = NULL;
    rc = sl__jm_store_get_json(
        jm->st, SL__JM_DB_DOCS, key, doc_key(key, source, id), out);
    if (rc == SL_ENOENT) {
        return sl_err_set(err,
                          SL_ENOENT,
                          "id",
                          "no problem of document '%s' of source '%s' is "
                          "recorded",
                          id,
                          source);
    }
    if (rc != 0) {
        return sl_err_set(err,
                          SL_EIO,
                          NULL,
                          "cannot read the documents of source '%s'",
                          source);
    }
    (void)entry_out(*out, UINT64_MAX);
    return 0;
}
