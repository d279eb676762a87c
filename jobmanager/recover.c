/*
 * Start-up and the definitions API.  sl_jm_start loads predefined and user
 * definitions, rebuilds active runs and their tasks from LMDB (tasks that
 * were in progress in the dead process simply become todo again: the
 * in-progress state is never persisted), completes pending events, and
 * starts autoStart jobs.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

static const char *const kind_names[] = {"buckets", "workflows", "jobs"};

static int
kind_parse(const char *name, enum sl__jm_kind *out)
{
    size_t i = 0;

    for (i = 0; name != NULL && i < 3; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (enum sl__jm_kind)i;
            return 0;
        }
    }
    return SL_EINVAL;
}

/* Key of a user definition: "<kind digit>\0<name>". */
static size_t
def_key(char *buf, size_t cap, enum sl__jm_kind kind, const char *name)
{
    size_t n = strlen(name);

    if (n + 2 > cap) {
        sl_panic("jobmanager: definition name too long");
    }
    buf[0] = (char)('0' + (int)kind);
    buf[1] = '\0';
    memcpy(buf + 2, name, n);
    return n + 2;
}

/* ------------------------------------------------------------------------
 * Definitions API.
 * --------------------------------------------------------------------- */

json_t *
sl_jm_defs_list(struct sl_jm *jm, const char *kind)
{
    enum sl__jm_kind k = SL__JM_BUCKET;

    if (kind_parse(kind, &k) != 0) {
        return NULL;
    }
    return sl__jm_defs_list(jm->defs, k);
}

json_t *
sl_jm_defs_get(struct sl_jm *jm, const char *kind, const char *name)
{
    enum sl__jm_kind k = SL__JM_BUCKET;

    if (kind_parse(kind, &k) != 0) {
        return NULL;
    }
    return sl__jm_defs_get(jm->defs, k, name);
}

int
sl_jm_defs_put(struct sl_jm *jm,
               const char *kind,
               const json_t *def,
               json_t **stored,
               struct sl_err *err)
{
    enum sl__jm_kind k = SL__JM_BUCKET;
    json_t *copy = NULL;
    const char *name = NULL;
    char key[SL_NAME_MAX + 3];
    uint64_t seq = 0;
    int rc = 0;

    if (stored != NULL) {
        *stored = NULL;
    }
    if (kind_parse(kind, &k) != 0) {
        return sl_err_set(err, SL_EINVAL, "kind", "unknown kind '%s'", kind);
    }
    name = json_string_value(json_object_get(def, "name"));
    if (k == SL__JM_JOB && name != NULL &&
        sl_jm_run_state(jm, name, NULL) != NULL) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "name",
                          "job '%s' is running; change it after the run",
                          name);
    }
    (void)pthread_mutex_lock(&jm->mu);
    rc = sl__jm_defs_put(jm->defs, k, def, 0, &copy, err);
    if (rc == 0) {
        name = json_string_value(json_object_get(copy, "name"));
        seq = sl__jm_store_put_json(jm->st,
                                    SL__JM_DB_DEFS,
                                    key,
                                    def_key(key, sizeof(key), k, name),
                                    copy);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (rc != 0) {
        return rc;
    }
    rc = sl__jm_store_wait(jm->st, seq, err);
    if (rc == 0 && stored != NULL) {
        *stored = copy;
    } else {
        json_decref(copy);
    }
    return rc;
}

int
sl_jm_defs_delete(struct sl_jm *jm,
                  const char *kind,
                  const char *name,
                  struct sl_err *err)
{
    enum sl__jm_kind k = SL__JM_BUCKET;
    char key[SL_NAME_MAX + 3];
    uint64_t seq = 0;
    int rc = 0;

    if (kind_parse(kind, &k) != 0) {
        return sl_err_set(err, SL_EINVAL, "kind", "unknown kind '%s'", kind);
    }
    if (strlen(name) > SL_NAME_MAX) {
        return sl_err_set(err, SL_ENOENT, "name", "no %s '%s'", kind, name);
    }
    if (k == SL__JM_JOB && sl_jm_run_state(jm, name, NULL) != NULL) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "name",
                          "job '%s' is running; delete it after the run",
                          name);
    }
    (void)pthread_mutex_lock(&jm->mu);
    rc = sl__jm_defs_delete(jm->defs, k, name, err);
    if (rc == 0) {
        seq = sl__jm_store_del(
            jm->st, SL__JM_DB_DEFS, key, def_key(key, sizeof(key), k, name));
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc != 0 ? rc : sl__jm_store_wait(jm->st, seq, err);
}

static json_t *
find_named(json_t *list, const char *name)
{
    size_t i = 0;
    json_t *v = NULL;

    json_array_foreach(list, i, v)
    {
        const char *n = json_string_value(json_object_get(v, "name"));

        if (n != NULL && strcmp(n, name) == 0) {
            return json_incref(v);
        }
    }
    return NULL;
}

json_t *
sl_jm_workers(struct sl_jm *jm, const char *name)
{
    json_t *all = sl__jm_defs_workers_json(jm->defs);
    json_t *one = NULL;

    if (name == NULL) {
        return all;
    }
    one = find_named(all, name);
    json_decref(all);
    return one;
}

json_t *
sl_jm_dots(struct sl_jm *jm, const char *name)
{
    json_t *all = sl__jm_defs_dots_json();
    json_t *one = NULL;

    (void)jm;
    if (name == NULL) {
        return all;
    }
    one = find_named(all, name);
    json_decref(all);
    return one;
}

/* ------------------------------------------------------------------------
 * Recovery.
 * --------------------------------------------------------------------- */

struct load_ctx {
    struct sl_jm *jm;
    int pass; /* the kind loaded in this pass */
};

/* User definitions, in kind order so jobs find their workflows. */
static int
load_def(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct load_ctx *c = ctx;
    const char *k = key;
    json_t *def = NULL;
    struct sl_err err;
    int rc = 0;

    if (klen < 2 || k[0] - '0' != c->pass) {
        return 0;
    }
    def = json_loadb(val, vlen, 0, NULL);
    if (def == NULL) {
        SL_WARN("jobmanager: stored %s '%.*s' is not valid JSON; skipped",
                kind_names[c->pass],
                (int)(klen - 2),
                k + 2);
        return 0;
    }
    sl_err_clear(&err);
    (void)json_object_del(def, "readOnly");
    rc = sl__jm_defs_put(c->jm->defs,
                         (enum sl__jm_kind)c->pass,
                         def,
                         SL__JM_PUT_LENIENT,
                         NULL,
                         &err);
    if (rc != 0) {
        SL_WARN("jobmanager: stored %s '%.*s' no longer loads: %s (field %s)",
                kind_names[c->pass],
                (int)(klen - 2),
                k + 2,
                err.message,
                err.field);
    }
    json_decref(def);
    return 0;
}

/* Rebuild one run from its persisted JSON; only active runs come back. */
static int
load_run(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;
    json_t *j = json_loadb(val, vlen, 0, NULL);
    json_t *in = json_object_get(j, "_internal");
    struct run *r = NULL;
    enum run_state st = RS_PREPARING;
    size_t i = 0;
    json_t *v = NULL;

    (void)key;
    (void)klen;
    if (j == NULL || in == NULL ||
        sl__jm_state_parse(json_string_value(json_object_get(j, "state")),
                           &st) != 0 ||
        st == RS_SUCCEEDED || st == RS_FAILED || st == RS_CANCELED) {
        json_decref(j);
        return 0;
    }
    r = sl_calloc(1, sizeof(*r));
    (void)snprintf(r->job,
                   sizeof(r->job),
                   "%s",
                   json_string_value(json_object_get(in, "job")));
    (void)snprintf(r->id,
                   sizeof(r->id),
                   "%s",
                   json_string_value(json_object_get(j, "jobId")));
    r->runonce = strcmp(json_string_value(json_object_get(j, "runMode")),
                        "RUNONCE") == 0;
    r->state = st;
    r->start_ms = json_integer_value(json_object_get(in, "startMs"));
    r->finish_ms = json_integer_value(json_object_get(in, "finishMs"));
    r->jobdef = json_incref(json_object_get(in, "jobdef"));
    r->wfdef = json_incref(json_object_get(in, "wfdef"));
    r->buckets = json_incref(json_object_get(in, "buckets"));
    r->worker = json_incref(json_object_get(j, "worker"));
    r->errors = json_incref(json_object_get(j, "errors"));
    r->next_wfrun =
        (unsigned)json_integer_value(json_object_get(in, "nextWfRun"));
    r->had_fatal = json_is_true(json_object_get(in, "hadFatal"));
    r->incomplete =
        (uint64_t)json_integer_value(json_object_get(in, "incomplete"));
    if (r->incomplete > 0) {
        r->incomplete_why = sl_strdup(
            json_string_value(json_object_get(in, "incompleteWhy")) != NULL
                ? json_string_value(json_object_get(in, "incompleteWhy"))
                : "");
    }
    r->completion = json_incref(json_object_get(j, "completion"));
    sl__jm_run_counters_load(r, j);
    json_array_foreach(json_object_get(in, "wfruns"), i, v)
    {
        struct wfrun *w = sl_calloc(1, sizeof(*w));

        w->id = (unsigned)json_integer_value(json_object_get(v, "id"));
        w->failed = json_is_true(json_object_get(v, "failed"));
        w->completion = json_is_true(json_object_get(v, "completion"));
        w->next = r->wfruns;
        r->wfruns = w;
        r->active_wfruns++;
    }
    {
        json_t *p = sl__jm_task_params(
            r->jobdef, r->wfdef, json_object_get(r->wfdef, "startAction"));

        if (json_is_string(json_object_get(p, "dataSource"))) {
            r->data_source =
                sl_strdup(json_string_value(json_object_get(p, "dataSource")));
        }
        json_decref(p);
    }
    r->next = jm->runs;
    jm->runs = r;
    json_decref(j);
    return 0;
}

/* Rebuild one task: todo again, whatever it was. */
static int
load_task(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;
    json_t *j = json_loadb(val, vlen, 0, NULL);
    json_t *props = json_object_get(j, "properties");
    struct run *r = NULL;
    struct wfrun *w = NULL;
    struct task *t = NULL;
    struct wqueue *q = NULL;

    r = j ? sl__jm_run_find(
                jm, json_string_value(json_object_get(props, "jobName")))
          : NULL;
    q = j ? sl__jm_wqueue(jm,
                          json_string_value(json_object_get(j, "workerName")))
          : NULL;
    if (r == NULL || q == NULL || klen >= sizeof(t->id) ||
        strcmp(r->id, json_string_value(json_object_get(props, "jobRunId")))) {
        (void)sl__jm_store_del(jm->st, SL__JM_DB_TASKS, key, klen);
        json_decref(j);
        return 0;
    }
    t = sl_calloc(1, sizeof(*t));
    memcpy(t->id, key, klen);
    t->run = r;
    t->wq = q;
    t->wfrun =
        (unsigned)json_integer_value(json_object_get(props, "workflowRunId"));
    t->action = (int)json_integer_value(json_object_get(props, "actionIndex"));
    t->json = j;
    w = sl__jm_wfrun_find(r, t->wfrun);
    if (w == NULL) {
        w = sl_calloc(1, sizeof(*w));
        w->id = t->wfrun;
        w->next = r->wfruns;
        r->wfruns = w;
        r->active_wfruns++;
    }
    w->open++;
    sl__jm_task_index(jm, t);
    sl__jm_task_enqueue(t);
    return 0;
}

static int
drop_event(
    void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;

    (void)val;
    (void)vlen;
    SL_INFO("jobmanager: pending event '%.*s' completed at restart",
            (int)klen,
            (const char *)key);
    (void)sl__jm_store_del(jm->st, SL__JM_DB_EVENTS, key, klen);
    return 0;
}

/* Move every recovered run on: runs whose work is done finish now. */
static void
resume_runs(struct sl_jm *jm)
{
    struct run *r = jm->runs;

    while (r != NULL) {
        struct run *next = r->next;

        SL_INFO("jobmanager: resuming run %s of job %s (%s)",
                r->id,
                r->job,
                sl__jm_state_name(r->state));
        if (r->state == RS_CLEANINGUP || r->state == RS_CANCELING) {
            r->cleanup_queued = 1;
            sl__jm_run_requeue_cleanup(jm, r);
        } else {
            sl__jm_run_check_done(jm, r);
            sl__jm_run_persist(jm, r);
        }
        r = next;
    }
}

static void
autostart(struct sl_jm *jm)
{
    json_t *jobs = sl__jm_defs_list(jm->defs, SL__JM_JOB);
    size_t i = 0;
    json_t *j = NULL;

    json_array_foreach(jobs, i, j)
    {
        const char *name = json_string_value(json_object_get(j, "name"));
        char id[SL_JM_RUN_ID_MAX];
        struct sl_err err;

        if (!json_is_true(json_object_get(j, "autoStart")) ||
            sl_jm_run_state(jm, name, NULL) != NULL) {
            continue;
        }
        sl_err_clear(&err);
        if (sl_jm_run_start(jm, name, "standard", id, &err) != 0) {
            SL_WARN("jobmanager: autoStart of job '%s' failed: %s",
                    name,
                    err.message);
        }
    }
    json_decref(jobs);
}

int
sl_jm_start(struct sl_jm *jm, struct sl_err *err)
{
    struct load_ctx lc = {jm, 0};
    uint64_t seq = 0;
    int failed = 0;

    failed =
        sl__jm_defs_load_files(jm->defs, jm->config_dir, jm->workflows_dir);
    if (failed > 0) {
        SL_WARN("jobmanager: %d predefined definition(s) failed to load",
                failed);
    }
    for (lc.pass = 0; lc.pass < 3; lc.pass++) {
        (void)sl__jm_store_scan(jm->st, SL__JM_DB_DEFS, NULL, 0, load_def, &lc);
    }
    (void)pthread_mutex_lock(&jm->mu);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_RUNS, NULL, 0, load_run, jm);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_TASKS, NULL, 0, load_task, jm);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_EVENTS, NULL, 0, drop_event, jm);
    jm->started = 1;
    if (pthread_create(&jm->lease_thread, NULL, sl__jm_lease_main, jm) != 0 ||
        pthread_create(&jm->cleanup_thread, NULL, sl__jm_cleanup_main, jm) !=
            0) {
        sl_panic("jobmanager: cannot start threads");
    }
    resume_runs(jm);
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (sl__jm_store_wait(jm->st, seq, err) != 0) {
        return err ? err->code : SL_EIO;
    }
    autostart(jm);
    return 0;
}

int
sl_jm_register_workers_file(struct sl_jm *jm,
                            const char *path,
                            struct sl_err *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    json_t *list = NULL;
    size_t i = 0;
    json_t *w = NULL;
    int failed = 0;

    if (root == NULL) {
        if (strstr(jerr.text, "unable to open") != NULL) {
            return 0;
        }
        return sl_err_set(err,
                          SL_EBADJSON,
                          path,
                          "%s: line %d, column %d: %s",
                          path,
                          jerr.line,
                          jerr.column,
                          jerr.text);
    }
    list = json_object_get(root, "workers");
    if (!json_is_array(list)) {
        json_decref(root);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "workers",
                          "%s: expected {\"workers\": [...]}",
                          path);
    }
    json_array_foreach(list, i, w)
    {
        struct sl_err e;

        sl_err_clear(&e);
        if (sl_jm_register_worker(jm, w, NULL, &e) != 0) {
            SL_WARN("%s: worker %zu ('%s'): %s (field %s)",
                    path,
                    i,
                    json_string_value(json_object_get(w, "name")),
                    e.message,
                    e.field);
            failed++;
        }
    }
    json_decref(root);
    return failed;
}
