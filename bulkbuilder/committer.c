/*
 * Bulkbuilder: the committer thread.  At every tick (or when kicked) it
 * seals the journals that are open longer than bulkLimitTime, then
 * commits each job's sealed bulks in order: an initial task of the job
 * (kept in a .task file so that a restart takes it back), a copy of each
 * slot into the task's output bucket, the finish of the task, and the
 * removal of the bulk's files.  The model and the crash argument are in
 * bulkbuilder.h and docs/bulkbuilder.md.
 *
 * Threading: one committer thread per bulkbuilder; it takes a job's mu
 * only to seal (trylock: a record being appended is never waited for),
 * and the fields of a job marked "committer only" are its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bulkbuilder/bulkbuilder_int.h"

#define TICK_MS       100
#define TASK_FILE_MAX (1u << 20)

static int
write_atomic(const struct sl_bb *bb,
             const struct sl__bb_job *j,
             const char *path,
             const char *text)
{
    char *tmp = sl_asprintf("%s.tmp", path);
    size_t len = strlen(text);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = 0;

    if (fd < 0) {
        rc = sl_err_from_errno(errno);
        goto out;
    }
    if (write(fd, text, len) != (ssize_t)len ||
        (bb->cfg.durability == SL_DURABILITY_FSYNC && fdatasync(fd) != 0)) {
        rc = errno != 0 ? sl_err_from_errno(errno) : SL_EIO;
        (void)close(fd);
        goto out;
    }
    (void)close(fd);
    if (rename(tmp, path) != 0) {
        rc = sl_err_from_errno(errno);
        goto out;
    }
    rc = sl__bb_sync_dir(bb, j->dir);
out:
    if (rc != 0) {
        (void)unlink(tmp);
    }
    sl_free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------
 * Committing.
 * --------------------------------------------------------------------- */

/* Records in a sealed bulk file: its trailer's count. */
static uint64_t
bulk_count(const char *path)
{
    unsigned char t[16];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint64_t n = 0;

    if (fd < 0) {
        return 0;
    }
    if (fstat(fd, &st) == 0 && st.st_size >= 24 &&
        pread(fd, t, sizeof(t), st.st_size - 16) == (ssize_t)sizeof(t) &&
        memcmp(t, "SLND", 4) == 0) {
        n = sl_le_get64(t + 4);
    }
    (void)close(fd);
    return n;
}

/* Store sealed bulk file @path as object @store/@id: a hard link where
 * the store is on the same filesystem (a sealed bulk never changes), else
 * a copy. */
static int
copy_to_store(struct sl_bb *bb,
              const char *path,
              const char *store,
              const char *id,
              struct sl_err *err)
{
    struct sl_obj_writer *w = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = 0;

    if (fd < 0) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          "bulk",
                          "%s: %s",
                          path,
                          sl_errno_str(errno));
    }
    rc = sl_obj_writer_open_file(bb->store, store, id, fd, &w, err);
    if (rc == 0) {
        rc = sl_obj_writer_commit(w, NULL, err);
    }
    sl_obj_writer_free(w);
    (void)close(fd);
    if (rc != 0 && err != NULL) {
        char *why = sl_strdup(err->message);

        (void)sl_err_set(err, rc, "bulk", "%s: %s", path, why);
        sl_free(why);
    }
    return rc;
}

json_t *
sl__bb_load_task(const char *path)
{
    json_error_t e;

    return json_load_file(path, 0, &e);
}

/* Remove the files of bulk @seq. */
static void
remove_bulk(struct sl_bb *bb, struct sl__bb_job *j, uint64_t seq)
{
    char *tp = sl__bb_task_path(j, seq);
    char *dp = sl__bb_done_path(j, seq);
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        char *p = sl__bb_bulk_path(j, seq, i);

        (void)unlink(p);
        sl_free(p);
    }
    (void)unlink(tp);
    (void)unlink(dp); /* last: until it is gone, the bulk is known done */
    (void)sl__bb_sync_dir(bb, j->dir);
    sl_free(tp);
    sl_free(dp);
}

/* A full disk (@code) stopped a seal or a commit of @j: its seals and
 * commits pause (committer thread only). */
static void
job_nospace(struct sl__bb_job *j, int code, const char *what)
{
    if (sl_err_nospace(code) && sl_backoff_fail(&j->nospace, sl_mono_ms())) {
        SL_WARN("bulkbuilder: job %s: no space left (%s); its bulks wait "
                "%u ms",
                j->name,
                what,
                j->nospace.cur_ms);
    }
}

/* Renew the lease of the task kept for the job's next attempt; one that
 * is gone is dropped (committer thread only). */
static void
job_keep_alive(struct sl_bb *bb, struct sl__bb_job *j)
{
    struct sl_err err = {0};

    if (j->cur != NULL &&
        sl_jm_task_keepalive(
            bb->jm,
            SL_BB_WORKER,
            json_string_value(json_object_get(j->cur, "taskId")),
            &err) != 0) {
        json_decref(j->cur);
        j->cur = NULL;
    }
}

/*
 * A task kept in j->cur for a bulk other than @seq belongs to nothing
 * (cannot happen: bulks commit in order and leave only when done): it is
 * finished empty.
 */
static void
drop_stale_task(struct sl_bb *bb, struct sl__bb_job *j, uint64_t seq)
{
    struct sl_err err = {0};
    json_t *empty = NULL;

    if (j->cur == NULL || j->cur_seq == seq) {
        return;
    }
    empty = json_pack("{s:s}", "status", "SUCCESSFUL");
    if (sl_jm_task_finish(bb->jm,
                          SL_BB_WORKER,
                          json_string_value(json_object_get(j->cur, "taskId")),
                          empty,
                          &err) != 0) {
        /* its lease runs out and the orphan sweep finishes it later */
        SL_WARN("bulkbuilder: job %s: finishing a stale task: %s",
                j->name,
                err.message);
    }
    json_decref(empty);
    json_decref(j->cur);
    j->cur = NULL;
}

/*
 * The task a former attempt at bulk @seq took, from its .task file @tp
 * (*have_file = 1) or, when that could not be written, from j->cur; NULL
 * when there is none or its lease ran out or its run ended (never
 * finished, so the bulk goes into a new task).  j->cur is empty after.
 */
static json_t *
resume_task(struct sl_bb *bb,
            struct sl__bb_job *j,
            uint64_t seq,
            const char *tp,
            int *have_file)
{
    struct sl_err err = {0};
    json_t *task = sl__bb_load_task(tp);

    *have_file = task != NULL;
    if (task == NULL && j->cur != NULL) {
        task = j->cur; /* its .task file could not be written */
    } else {
        json_decref(j->cur);
    }
    j->cur = NULL;
    if (task != NULL &&
        sl_jm_task_keepalive(bb->jm,
                             SL_BB_WORKER,
                             json_string_value(json_object_get(task, "taskId")),
                             &err) != 0) {
        SL_WARN("bulkbuilder: job %s: task of bulk %" PRIu64
                " is gone; a new one takes the bulk",
                j->name,
                seq);
        (void)unlink(tp);
        json_decref(task);
        task = NULL;
        *have_file = 0;
    }
    return task;
}

/*
 * A new initial task of the job into *task, recorded in the .task file
 * @tp (*have_file = 1) where that can be written.  Returns 0, or 1 when
 * the job does not run: its bulks wait.
 */
static int
new_task(struct sl_bb *bb,
         struct sl__bb_job *j,
         const char *tp,
         json_t **task,
         int *have_file)
{
    struct sl_err err = {0};
    char *text = NULL;
    int rc = sl_jm_task_initial(bb->jm, j->name, SL_BB_WORKER, task, &err);

    if (rc != 0) {
        if (!j->waiting) {
            SL_INFO(
                "bulkbuilder: job %s: bulks wait: %s", j->name, err.message);
        }
        j->waiting = 1;
        return 1;
    }
    text = json_dumps(*task, JSON_COMPACT);
    rc = write_atomic(bb, j, tp, text);
    sl_free(text);
    *have_file = rc == 0;
    if (rc != 0) {
        /* Go on without it: the file only lets a restart take this
         * task back; without it a crash before the finish gives the
         * bulk to a new task (committed twice, never lost).  Finishing
         * this task empty and asking for another at every tick, as
         * before, made ten tasks a second on a full disk. */
        SL_WARN("bulkbuilder: job %s: %s: %s (going on without it)",
                j->name,
                tp,
                sl_strerror(rc));
    }
    return 0;
}

/*
 * Copy each slot of bulk @seq into the output bucket of @task, counting
 * its records into @counters (the records of a slot that is not
 * connected are dropped and counted so).  Returns 0, or 1 after a copy
 * failed (logged; a full disk pauses the job).
 */
static int
copy_slots(struct sl_bb *bb,
           struct sl__bb_job *j,
           uint64_t seq,
           const json_t *task,
           json_t *counters)
{
    struct sl_err err = {0};
    int rc = 0;
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        char *bp = sl__bb_bulk_path(j, seq, i);
        const json_t *o =
            json_array_get(json_object_get(json_object_get(task, "output"),
                                           sl__bb_slot_names[i]),
                           0);
        uint64_t n = 0;

        if (access(bp, F_OK) != 0) {
            sl_free(bp);
            continue;
        }
        n = bulk_count(bp);
        if (o == NULL) {
            SL_WARN("bulkbuilder: job %s: slot %s is not connected; %" PRIu64
                    " record(s) dropped",
                    j->name,
                    sl__bb_slot_names[i],
                    n);
            (void)json_object_set_new(counters,
                                      i == 0 ? "records.dropped"
                                             : "deletes.dropped",
                                      json_integer((json_int_t)n));
            sl_free(bp);
            continue;
        }
        rc = copy_to_store(bb,
                           bp,
                           json_string_value(json_object_get(o, "store")),
                           json_string_value(json_object_get(o, "id")),
                           &err);
        sl_free(bp);
        if (rc != 0) {
            SL_ERROR("bulkbuilder: job %s: %s", j->name, err.message);
            job_nospace(j, rc, err.message);
            return 1;
        }
        (void)json_object_set_new(counters,
                                  i == 0 ? "records.inserted"
                                         : "records.deleted",
                                  json_integer((json_int_t)n));
    }
    return 0;
}

/*
 * Copy bulk @seq into the outputs of @task and finish the task.  Returns
 * 0, or 1 to try again later: with the same task when *keep is set (a
 * copy or the finish failed), else with a new one (the task is gone; its
 * .task file @tp is removed).
 */
static int
hand_over(struct sl_bb *bb,
          struct sl__bb_job *j,
          uint64_t seq,
          const json_t *task,
          const char *tp,
          int *keep)
{
    struct sl_err err = {0};
    const char *task_id = json_string_value(json_object_get(task, "taskId"));
    json_t *counters = json_object();
    json_t *result = NULL;
    int rc = copy_slots(bb, j, seq, task, counters);

    if (rc != 0) {
        *keep = 1;
        goto out;
    }
    result =
        json_pack("{s:s, s:O}", "status", "SUCCESSFUL", "counters", counters);
    rc = sl_jm_task_finish(bb->jm, SL_BB_WORKER, task_id, result, &err);
    if (rc == SL_EGONE) {
        /* The lease ran out or the run ended: start over with a new task
         * (the old one is finished empty by the orphan sweep). */
        SL_WARN("bulkbuilder: job %s: task %s is gone; retrying the bulk",
                j->name,
                task_id);
        (void)unlink(tp);
        rc = 1;
    } else if (rc != 0) {
        SL_ERROR("bulkbuilder: job %s: finish: %s", j->name, err.message);
        *keep = 1;
        rc = 1;
    }
out:
    json_decref(result);
    json_decref(counters);
    return rc;
}

/*
 * Commit bulk @seq of @j: task, copies, finish, removal.  Returns 0 when
 * done, 1 to try again later (job not running, transient error).  A task
 * that could not be finished is kept in j->cur for the next attempt: a
 * copy that fails on a full disk never asks for another task (issue 24:
 * ten tasks a second, a workflow run each, for the same three bulks).
 */
static int
commit_bulk(struct sl_bb *bb, struct sl__bb_job *j, uint64_t seq)
{
    char *tp = sl__bb_task_path(j, seq);
    char *dp = sl__bb_done_path(j, seq);
    json_t *task = NULL;
    int have_file = 0;
    int keep = 0;
    int rc = 0;

    if (access(dp, F_OK) == 0) {
        goto done; /* finished before a crash; only the files are left */
    }
    drop_stale_task(bb, j, seq);
    task = resume_task(bb, j, seq, tp, &have_file);
    if (task == NULL && new_task(bb, j, tp, &task, &have_file) != 0) {
        rc = 1;
        goto out;
    }
    j->waiting = 0;
    rc = hand_over(bb, j, seq, task, tp, &keep);
    if (rc != 0) {
        goto out;
    }
    /* Finished: say so before removing anything.  A crash before this
     * rename only means the bulk is committed a second time (indexing is
     * idempotent and versioned); never that it is lost. */
    if (have_file && rename(tp, dp) != 0) {
        SL_ERROR(
            "bulkbuilder: job %s: %s: %s", j->name, dp, sl_errno_str(errno));
    }
    (void)sl__bb_sync_dir(bb, j->dir);
done:
    rc = 0;
    remove_bulk(bb, j, seq);
    atomic_fetch_add(&j->committed, 1);
    if (atomic_load(&j->pending) > 0) {
        atomic_fetch_sub(&j->pending, 1);
    }
out:
    if (keep && task != NULL) {
        j->cur = task; /* the next attempt goes on with it */
        j->cur_seq = seq;
        task = NULL;
    }
    json_decref(task);
    sl_free(tp);
    sl_free(dp);
    return rc;
}

/* Sealed bulk numbers of @j, ascending (new array of *n). */
uint64_t *
sl__bb_sealed_seqs(const struct sl__bb_job *j, size_t *n)
{
    DIR *d = opendir(j->dir);
    struct dirent *e = NULL;
    uint64_t *v = NULL;
    size_t cap = 0;
    size_t i = 0;

    *n = 0;
    if (d == NULL) {
        return NULL;
    }
    while ((e = readdir(d)) != NULL) {
        uint64_t seq = 0;
        char rest[32];

        /* "<seq>-<slot>.bulk" and "<seq>.task" (alone after a crash
         * between the removal of the bulks and of the task file). */
        if (sscanf(e->d_name, "%20" SCNu64 "%31s", &seq, rest) != 2 ||
            strcmp(rest, ".task.tmp") == 0) {
            continue;
        }
        for (i = 0; i < *n && v[i] != seq; i++) {
        }
        if (i < *n) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = sl_realloc(v, cap * sizeof(*v));
        }
        v[(*n)++] = seq;
    }
    (void)closedir(d);
    for (i = 1; i < *n; i++) { /* insertion sort: few files */
        uint64_t x = v[i];
        size_t k = i;

        for (; k > 0 && v[k - 1] > x; k--) {
            v[k] = v[k - 1];
        }
        v[k] = x;
    }
    return v;
}

/* Finish every todo task of the bulkbuilder empty: they belong to nothing
 * (a lease that ran out, or a crash before the task was recorded). */
void
sl__bb_sweep_orphans(struct sl_bb *bb)
{
    json_t *task = NULL;
    json_t *result = json_pack("{s:s}", "status", "SUCCESSFUL");
    struct sl_err err = {0};

    while (sl_jm_task_take(bb->jm, SL_BB_WORKER, NULL, NULL, &task, &err) ==
           0) {
        const char *id = json_string_value(json_object_get(task, "taskId"));

        SL_INFO("bulkbuilder: finishing orphan task %s empty", id);
        if (sl_jm_task_finish(bb->jm, SL_BB_WORKER, id, result, &err) != 0) {
            /* taken again when its lease has run out */
            SL_WARN("bulkbuilder: orphan task %s: %s", id, err.message);
        }
        json_decref(task);
        task = NULL;
    }
    json_decref(result);
}

/*
 * Does @j's run hold as many active workflow runs as the bulkbuilder may
 * give it (issue 29: an indexWriter slower than the crawl had about 820
 * workflow runs queued at a million files, their tasks in memory)?  The
 * bulk then waits in the journal; the committer tries again at the next
 * tick.  A bulk whose task was taken before (j->cur, or a .task file)
 * goes on, and so does every bulk while a drain waits (a finish hands
 * over everything).
 */
static int
backlog_full(struct sl_bb *bb, struct sl__bb_job *j, uint64_t seq)
{
    char *tp = NULL;
    int full = 0;

    if (atomic_load(&j->draining) > 0 ||
        (j->cur != NULL && j->cur_seq == seq) ||
        sl_jm_run_active_wfruns(bb->jm, j->name) < bb->cfg.max_active) {
        return 0;
    }
    /* a bulk with a task from before a restart: its workflow run is one
     * of the active ones */
    tp = sl__bb_task_path(j, seq);
    full = access(tp, F_OK) != 0;
    sl_free(tp);
    return full;
}

void *
sl__bb_committer_main(void *arg)
{
    struct sl_bb *bb = arg;

    for (;;) {
        struct sl__bb_job *j = NULL;
        struct sl__bb_job *jobs = NULL;
        int64_t now = 0;

        (void)pthread_mutex_lock(&bb->mu);
        if (!bb->stop && !bb->kick) {
            struct timespec ts;

            (void)clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += TICK_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            (void)pthread_cond_timedwait(&bb->cv, &bb->mu, &ts);
        }
        bb->kick = 0;
        if (bb->stop) {
            (void)pthread_mutex_unlock(&bb->mu);
            break;
        }
        jobs = bb->jobs; /* jobs are never removed while running */
        (void)pthread_mutex_unlock(&bb->mu);

        now = sl_mono_ms();
        for (j = jobs; j != NULL; j = j->next) {
            struct sl_err err = {0};
            uint64_t *seqs = NULL;
            size_t n = 0;
            size_t i = 0;

            if (sl_backoff_left(&j->nospace, now) > 0) {
                job_keep_alive(bb, j); /* paused: the disk was full */
                continue;
            }
            /* A record being appended (a big attachment streaming in)
             * holds the job: seal it at a later tick, commit what is
             * sealed now, and never make the other jobs wait. */
            if (pthread_mutex_trylock(&j->mu) == 0) {
                if (j->opened_ms != 0 &&
                    now - j->opened_ms >= (int64_t)bb->cfg.limit_ms &&
                    sl__bb_seal(bb, j, &err) != 0) {
                    SL_ERROR("bulkbuilder: %s", err.message);
                    job_nospace(j, err.code, err.message);
                }
                (void)pthread_mutex_unlock(&j->mu);
            }
            seqs = sl__bb_sealed_seqs(j, &n);
            for (i = 0; i < n; i++) {
                if (seqs[i] >= atomic_load(&j->sealed_below) ||
                    backlog_full(bb, j, seqs[i]) ||
                    commit_bulk(bb, j, seqs[i]) != 0) {
                    break; /* keep the order; try again next tick */
                }
            }
            sl_free(seqs);
        }
        sl__bb_sweep_orphans(bb);
    }
    return NULL;
}
