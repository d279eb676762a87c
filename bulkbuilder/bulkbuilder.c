/*
 * Bulkbuilder: durable journals per job, sealed into bulks, committed as
 * initial tasks of the job by one committer thread.  The model and the
 * crash argument are in bulkbuilder.h and docs/bulkbuilder.md.  This file
 * holds the jobs, the `_version` stamps and the life cycle (open, start
 * with recovery, flush, drain, status, close); the journals are in
 * journal.c, the committer in committer.c, what they share in
 * bulkbuilder_int.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bulkbuilder/bulkbuilder_int.h"

#define DRAIN_POLL_MS 10
/* _version = epoch << COUNTER_BITS | counter; both stay positive in a
 * JSON integer (int64). */
#define COUNTER_BITS  40
#define COUNTER_LIMIT (UINT64_C(1) << COUNTER_BITS)
#define EPOCH_MAX     (UINT64_C(1) << (63 - COUNTER_BITS))

static const char bb_description[] =
    "{\"name\": \"" SL_BB_WORKER "\","
    " \"modes\": [\"bulkSource\", \"autoCommit\"],"
    " \"parameters\": [{\"name\": \"bulkLimitSize\", \"optional\": true,"
    "   \"type\": \"integer\"},"
    "  {\"name\": \"bulkLimitTime\", \"optional\": true, \"type\": "
    "\"integer\"}],"
    " \"output\": [{\"name\": \"insertedRecords\", \"type\": \"recordBulks\","
    "  \"modes\": [\"optional\"]},"
    "  {\"name\": \"deletedRecords\", \"type\": \"recordBulks\","
    "  \"modes\": [\"optional\"]}]}";

/* ------------------------------------------------------------------------
 * Jobs.
 * --------------------------------------------------------------------- */

static void
job_free(struct sl__bb_job *j)
{
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        sl_bulk_writer_free(j->jr[i].w);
        if (j->jr[i].fd >= 0) {
            (void)close(j->jr[i].fd);
        }
    }
    json_decref(j->cur);
    (void)pthread_mutex_destroy(&j->mu);
    sl_free(j->name);
    sl_free(j->dir);
    sl_free(j);
}

/* Highest sequence number among the sealed files of @j, plus one. */
static uint64_t
scan_next_seq(const struct sl__bb_job *j)
{
    DIR *d = opendir(j->dir);
    struct dirent *e = NULL;
    uint64_t next = 1;

    if (d == NULL) {
        return next;
    }
    while ((e = readdir(d)) != NULL) {
        uint64_t seq = 0;

        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' &&
            sscanf(e->d_name, "%20" SCNu64, &seq) == 1 && seq >= next) {
            next = seq + 1;
        }
    }
    (void)closedir(d);
    return next;
}

/* The job @name, created (with its directory) when missing. */
int
sl__bb_job_get(struct sl_bb *bb,
               const char *name,
               struct sl__bb_job **out,
               struct sl_err *err)
{
    struct sl__bb_job *j = NULL;
    int rc = 0;
    int i = 0;

    *out = NULL;
    (void)pthread_mutex_lock(&bb->mu);
    for (j = bb->jobs; j != NULL; j = j->next) {
        if (strcmp(j->name, name) == 0) {
            *out = j;
            goto out;
        }
    }
    j = sl_calloc(1, sizeof(*j));
    j->name = sl_asprintf("%s", name);
    j->dir = sl_asprintf("%s/j.%s", bb->dir, name);
    sl_backoff_init(&j->nospace,
                    bb->cfg.nospace_first_ms ? bb->cfg.nospace_first_ms : 1000,
                    bb->cfg.nospace_max_ms ? bb->cfg.nospace_max_ms : 60000);
    (void)pthread_mutex_init(&j->mu, NULL);
    for (i = 0; i < NSLOTS; i++) {
        j->jr[i].fd = -1;
    }
    rc = sl_mkdirs(j->dir, err);
    if (rc != 0) {
        job_free(j);
        goto out;
    }
    j->next_seq = scan_next_seq(j);
    atomic_store(&j->sealed_below, j->next_seq);
    j->next = bb->jobs;
    bb->jobs = j;
    *out = j;
out:
    (void)pthread_mutex_unlock(&bb->mu);
    return rc;
}

/* ------------------------------------------------------------------------
 * Life cycle.
 * --------------------------------------------------------------------- */

int
sl_bb_open(const struct sl_bb_config *cfg,
           struct sl_jm *jm,
           struct sl_obj *store,
           struct sl_bb **out,
           struct sl_err *err)
{
    struct sl_bb *bb = NULL;
    json_error_t je;
    json_t *desc = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl_mkdirs(cfg->dir, err);
    if (rc != 0) {
        return rc;
    }
    desc = json_loads(bb_description, 0, &je);
    if (desc == NULL) {
        return sl_err_set(err, SL_EINTERNAL, NULL, "bulkbuilder description");
    }
    rc = sl_jm_register_worker(jm, desc, NULL, err);
    json_decref(desc);
    if (rc != 0) {
        return rc;
    }
    bb = sl_calloc(1, sizeof(*bb));
    bb->cfg = *cfg;
    bb->dir = sl_asprintf("%s", cfg->dir);
    bb->cfg.dir = bb->dir;
    if (bb->cfg.limit_size == 0) {
        bb->cfg.limit_size = SL_BB_DEFAULT_LIMIT_SIZE;
    }
    if (bb->cfg.limit_ms == 0) {
        bb->cfg.limit_ms = SL_BB_DEFAULT_LIMIT_MS;
    }
    if (bb->cfg.max_active == 0) {
        bb->cfg.max_active = SL_BB_DEFAULT_MAX_ACTIVE;
    }
    bb->jm = jm;
    bb->store = store;
    sl__bb_sweep_spools(bb->dir);
    (void)pthread_mutex_init(&bb->mu, NULL);
    (void)pthread_mutex_init(&bb->vmu, NULL);
    (void)pthread_cond_init(&bb->cv, NULL);
    *out = bb;
    return 0;
}

/* Reconcile the .task files of @j with the jobmanager (see the header). */
static void
recover_tasks(struct sl_bb *bb, struct sl__bb_job *j)
{
    uint64_t *seqs = NULL;
    size_t n = 0;
    size_t i = 0;

    seqs = sl__bb_sealed_seqs(j, &n);
    atomic_store(&j->pending, n);
    for (i = 0; i < n; i++) {
        char *tp = sl__bb_task_path(j, seqs[i]);
        json_t *task = sl__bb_load_task(tp);
        json_t *again = NULL;
        struct sl_err err = {0};
        const char *id = json_string_value(json_object_get(task, "taskId"));

        /* A task the jobmanager still has is taken back and redone from
         * the copy; one it lost (never finished: a .done file would say
         * so) gives way to a new task in commit_bulk. */
        if (task != NULL &&
            (id == NULL ||
             sl_jm_task_reclaim(bb->jm, SL_BB_WORKER, id, &again, &err) != 0)) {
            (void)unlink(tp);
        }
        json_decref(again);
        json_decref(task);
        sl_free(tp);
    }
    sl_free(seqs);
}

/* Read, increment and persist the epoch of the data dir (fsync of the
 * file and the directory: a reused epoch would order new writes before
 * old ones).  An unreadable epoch file refuses the start. */
static int
next_epoch(struct sl_bb *bb, struct sl_err *err)
{
    char *path = sl_asprintf("%s/epoch", bb->dir);
    char *tmp = sl_asprintf("%s/epoch.tmp", bb->dir);
    char text[32];
    FILE *f = fopen(path, "r");
    uint64_t e = 0;
    int rc = 0;
    int fd = -1;

    if (f == NULL && errno != ENOENT) {
        rc =
            sl_err_set(err, SL_EIO, "dir", "%s: %s", path, sl_errno_str(errno));
        goto out;
    }
    if (f != NULL) {
        int ok = fscanf(f, "%20" SCNu64, &e) == 1;

        (void)fclose(f);
        if (!ok || e >= EPOCH_MAX) {
            rc = sl_err_set(err,
                            SL_ECORRUPT,
                            "dir",
                            "%s: not an epoch number; versions would go "
                            "backwards (restore it or clear the index)",
                            path);
            goto out;
        }
    }
    e++;
    (void)snprintf(text, sizeof(text), "%" PRIu64 "\n", e);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
        fsync(fd) != 0 || rename(tmp, path) != 0) {
        rc =
            sl_err_set(err, SL_EIO, "dir", "%s: %s", path, sl_errno_str(errno));
        goto out;
    }
    (void)close(fd);
    fd = open(bb->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
    }
    bb->epoch = e;
    bb->counter = 0;
out:
    if (fd >= 0) {
        (void)close(fd);
    }
    sl_free(path);
    sl_free(tmp);
    return rc;
}

/* The next `_version`: epoch in the high bits, a counter below; a counter
 * about to wrap takes a new epoch first, so versions only grow. */
uint64_t
sl__bb_next_version(struct sl_bb *bb)
{
    uint64_t v = 0;

    (void)pthread_mutex_lock(&bb->vmu);
    if (bb->counter + 1 >= COUNTER_LIMIT) {
        struct sl_err err = {0};

        if (next_epoch(bb, &err) != 0) {
            SL_ERROR("bulkbuilder: %s", err.message);
            bb->epoch++; /* still growing in this process */
            bb->counter = 0;
        }
    }
    bb->counter++;
    v = (bb->epoch << COUNTER_BITS) | bb->counter;
    (void)pthread_mutex_unlock(&bb->vmu);
    return v;
}

int
sl_bb_start(struct sl_bb *bb, struct sl_err *err)
{
    DIR *d = NULL;
    struct dirent *e = NULL;
    struct sl__bb_job *j = NULL;
    int rc = next_epoch(bb, err);

    if (rc != 0) {
        return rc;
    }
    d = opendir(bb->dir);

    if (d == NULL) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          "dir",
                          "%s: %s",
                          bb->dir,
                          sl_errno_str(errno));
    }
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "j.", 2) != 0 || e->d_name[2] == '\0' ||
            sl__bb_job_get(bb, e->d_name + 2, &j, err) != 0) {
            continue;
        }
    }
    (void)closedir(d);
    for (j = bb->jobs; j != NULL; j = j->next) {
        sl__bb_recover_journals(bb, j);
        recover_tasks(bb, j);
    }
    sl__bb_sweep_orphans(bb);
    rc = pthread_create(&bb->thread, NULL, sl__bb_committer_main, bb);
    if (rc != 0) {
        return sl_err_set(err, -rc, NULL, "cannot start the committer");
    }
    bb->started = 1;
    return 0;
}

void
sl_bb_close(struct sl_bb *bb)
{
    struct sl__bb_job *j = NULL;

    if (bb == NULL) {
        return;
    }
    if (bb->started) {
        (void)pthread_mutex_lock(&bb->mu);
        bb->stop = 1;
        (void)pthread_cond_signal(&bb->cv);
        (void)pthread_mutex_unlock(&bb->mu);
        (void)pthread_join(bb->thread, NULL);
    }
    while ((j = bb->jobs) != NULL) {
        bb->jobs = j->next;
        job_free(j);
    }
    (void)pthread_cond_destroy(&bb->cv);
    (void)pthread_mutex_destroy(&bb->mu);
    (void)pthread_mutex_destroy(&bb->vmu);
    sl_free(bb->dir);
    sl_free(bb);
}

int
sl_bb_flush(struct sl_bb *bb, const char *job, struct sl_err *err)
{
    struct sl__bb_job *j = NULL;
    struct sl__bb_job *jobs = NULL;
    int rc = 0;

    (void)pthread_mutex_lock(&bb->mu);
    jobs = bb->jobs;
    (void)pthread_mutex_unlock(&bb->mu);
    for (j = jobs; j != NULL && rc == 0; j = j->next) {
        if (job == NULL || strcmp(job, j->name) == 0) {
            (void)pthread_mutex_lock(&j->mu);
            rc = sl__bb_seal(bb, j, err);
            (void)pthread_mutex_unlock(&j->mu);
        }
    }
    (void)pthread_mutex_lock(&bb->mu);
    bb->kick = 1;
    (void)pthread_cond_signal(&bb->cv);
    (void)pthread_mutex_unlock(&bb->mu);
    return rc;
}

/* Records in @j's open journals; takes j->mu. */
static uint64_t
open_records(struct sl__bb_job *j)
{
    uint64_t recs = 0;
    int i = 0;

    (void)pthread_mutex_lock(&j->mu);
    for (i = 0; i < NSLOTS; i++) {
        recs += j->jr[i].w != NULL ? j->jr[i].count : 0;
    }
    (void)pthread_mutex_unlock(&j->mu);
    return recs;
}

int
sl_bb_drain(struct sl_bb *bb,
            const char *job,
            unsigned timeout_ms,
            struct sl_err *err)
{
    struct sl__bb_job *j = NULL;
    int64_t deadline = sl_mono_ms() + (int64_t)timeout_ms;
    const struct timespec tick = {0, DRAIN_POLL_MS * 1000000L};
    int rc = 0;

    (void)pthread_mutex_lock(&bb->mu);
    j = bb->jobs;
    while (j != NULL && strcmp(j->name, job) != 0) {
        j = j->next;
    }
    (void)pthread_mutex_unlock(&bb->mu);
    if (j != NULL) {
        atomic_fetch_add(&j->draining, 1); /* no backlog limit meanwhile */
    }
    while (j != NULL && rc == 0) {
        uint64_t open = open_records(j);
        uint64_t pending = atomic_load(&j->pending);

        if (open == 0 && pending == 0) {
            break;
        }
        if (sl_mono_ms() >= deadline) {
            rc = sl_err_set(err,
                            SL_ENOTREADY,
                            "job",
                            "job '%s': the bulkbuilder has not handed %" PRIu64
                            " open records and %" PRIu64
                            " bulks to the run yet; try again",
                            job,
                            open,
                            pending);
            break;
        }
        /* seal what is open (again, if records came after the last
         * seal) and wake the committer */
        rc = open > 0 ? sl_bb_flush(bb, job, err) : 0;
        (void)nanosleep(&tick, NULL);
    }
    if (j != NULL) {
        atomic_fetch_sub(&j->draining, 1);
    }
    return rc;
}

static json_t *
job_status(struct sl__bb_job *j)
{
    json_t *o = NULL;
    uint64_t bytes = 0;
    uint64_t recs = 0;
    int i = 0;

    (void)pthread_mutex_lock(&j->mu);
    for (i = 0; i < NSLOTS; i++) {
        if (j->jr[i].w != NULL) {
            bytes += sl_bulk_writer_bytes(j->jr[i].w);
            recs += j->jr[i].count;
        }
    }
    o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}",
                  "job",
                  j->name,
                  "openRecords",
                  (json_int_t)recs,
                  "openBytes",
                  (json_int_t)bytes,
                  "pendingBulks",
                  (json_int_t)atomic_load(&j->pending),
                  "acceptedRecords",
                  (json_int_t)j->accepted,
                  "committedBulks",
                  (json_int_t)atomic_load(&j->committed));
    (void)pthread_mutex_unlock(&j->mu);
    return o;
}

json_t *
sl_bb_status(struct sl_bb *bb, const char *job)
{
    json_t *arr = json_array();
    struct sl__bb_job *j = NULL;
    struct sl__bb_job *jobs = NULL;

    (void)pthread_mutex_lock(&bb->mu);
    jobs = bb->jobs;
    (void)pthread_mutex_unlock(&bb->mu);
    for (j = jobs; j != NULL; j = j->next) {
        if (job == NULL) {
            (void)json_array_append_new(arr, job_status(j));
        } else if (strcmp(job, j->name) == 0) {
            json_decref(arr);
            return job_status(j);
        }
    }
    if (job != NULL) {
        json_decref(arr);
        return NULL;
    }
    return json_pack("{s:o}", "jobs", arr);
}
