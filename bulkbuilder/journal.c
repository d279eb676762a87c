/*
 * Bulkbuilder: durable journals per job, sealed into bulks, committed as
 * initial tasks of the job by one committer thread.  The model and the
 * crash argument are in bulkbuilder.h and docs/bulkbuilder.md.
 */
#include "bulkbuilder/bulkbuilder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS        2
#define TICK_MS       100
#define TASK_FILE_MAX (1u << 20)
/* _version = epoch << COUNTER_BITS | counter; both stay positive in a
 * JSON integer (int64). */
#define DRAIN_POLL_MS 10
#define COUNTER_BITS  40
#define COUNTER_LIMIT (UINT64_C(1) << COUNTER_BITS)
#define EPOCH_MAX     (UINT64_C(1) << (63 - COUNTER_BITS))

static const char *const slot_names[NSLOTS] = {"insertedRecords",
                                               "deletedRecords"};

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

/* The open journal of one slot. */
struct journal {
    int fd; /* -1: none open */
    struct sl_sink sink;
    struct sl_bulk_writer *w;
    uint64_t count; /* complete records */
};

struct job {
    struct job *next;
    char *name;
    char *dir; /* <bb dir>/j.<name> */
    pthread_mutex_t mu;
    struct journal jr[NSLOTS];
    int64_t opened_ms; /* sl_mono_ms of the first open record, or 0 */
    uint64_t next_seq;
    /* every slot of the bulks below it is linked: seal links slot by
     * slot, and the committer must not take a bulk half linked (it would
     * commit slot 0 and remove a slot 1 linked after its copy) */
    atomic_uint_fast64_t sealed_below;
    /* statistics: accepted under mu, the others atomic */
    uint64_t accepted;
    atomic_uint_fast64_t committed; /* atomics: the committer never waits */
    atomic_uint_fast64_t pending;   /* sealed, not yet committed */
    int waiting; /* the committer found the job not running */
    /* committer only: the task of bulk cur_seq kept between attempts
     * (its lease renewed), so a failing copy never costs a new task */
    json_t *cur;
    uint64_t cur_seq;
    struct sl_backoff nospace; /* a full disk pauses the job's commits */
};

struct sl_bb {
    struct sl_bb_config cfg;
    char *dir;
    pthread_mutex_t vmu; /* epoch and counter */
    uint64_t epoch;      /* persisted; taken anew at start and on wrap */
    uint64_t counter;    /* records stamped in this epoch */
    struct sl_jm *jm;
    struct sl_obj *store;
    pthread_mutex_t mu; /* jobs list, stop, kick */
    pthread_cond_t cv;
    struct job *jobs;
    pthread_t thread;
    int started;
    int stop;
    int kick;
};

struct sl_bb_rec {
    struct sl_bb *bb;
    struct job *j;
    int slot;
    off_t start; /* journal size before the record */
};

/* ------------------------------------------------------------------------
 * Files.
 * --------------------------------------------------------------------- */

static char *
journal_path(const struct job *j, int slot)
{
    return sl_asprintf("%s/open-%s.journal", j->dir, slot_names[slot]);
}

static char *
bulk_path(const struct job *j, uint64_t seq, int slot)
{
    return sl_asprintf(
        "%s/%020" PRIu64 "-%s.bulk", j->dir, seq, slot_names[slot]);
}

static char *
task_path(const struct job *j, uint64_t seq)
{
    return sl_asprintf("%s/%020" PRIu64 ".task", j->dir, seq);
}

/* Written once the task of bulk @seq is finished: its files can go. */
static char *
done_path(const struct job *j, uint64_t seq)
{
    return sl_asprintf("%s/%020" PRIu64 ".done", j->dir, seq);
}

static int
sync_dir(const struct sl_bb *bb, const char *dir)
{
    int fd = -1;

    if (bb->cfg.durability != SL_DURABILITY_FSYNC) {
        return 0;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;

        if (fd >= 0) {
            (void)close(fd);
        }
        return -e;
    }
    (void)close(fd);
    return 0;
}

/* Write @text to @path atomically (temp file + rename). */
static int
write_atomic(const struct sl_bb *bb,
             const struct job *j,
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
    rc = sync_dir(bb, j->dir);
out:
    if (rc != 0) {
        (void)unlink(tmp);
    }
    sl_free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------
 * Jobs.
 * --------------------------------------------------------------------- */

static void
job_free(struct job *j)
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
scan_next_seq(const struct job *j)
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
static int
job_get(struct sl_bb *bb,
        const char *name,
        struct job **out,
        struct sl_err *err)
{
    struct job *j = NULL;
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
 * Journals.
 * --------------------------------------------------------------------- */

/* Open the journal of @slot for appending; called with j->mu held. */
static int
journal_open(struct sl_bb *bb, struct job *j, int slot, struct sl_err *err)
{
    struct journal *jr = &j->jr[slot];
    char *path = NULL;
    int rc = 0;

    if (jr->fd >= 0) {
        return 0;
    }
    path = journal_path(j, slot);
    /* A name left there is stale: recover_journals took every journal at
     * start, and a seal whose unlink failed left a name of a sealed bulk,
     * which may be an object in the store by now (a hard link): drop the
     * name, never truncate what it names. */
    if (unlink(path) != 0 && errno != ENOENT) {
        SL_WARN("bulkbuilder: %s: %s", path, sl_errno_str(errno));
    }
    jr->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (jr->fd < 0) {
        rc = sl_err_set(err,
                        sl_err_from_errno(errno),
                        "job",
                        "journal %s: %s",
                        path,
                        sl_errno_str(errno));
        goto out;
    }
    sl_sink_fd(&jr->sink, &jr->fd);
    rc = sl_bulk_writer_new(&jr->sink, &jr->w);
    if (rc == 0) {
        rc = sl_bulk_writer_flush(jr->w);
    }
    if (rc == 0) {
        rc = sync_dir(bb, j->dir);
    }
    if (rc != 0) {
        (void)sl_err_set(
            err, rc, "job", "journal %s: %s", path, sl_strerror(rc));
        sl_bulk_writer_free(jr->w);
        jr->w = NULL;
        (void)close(jr->fd);
        jr->fd = -1;
        (void)unlink(path);
    }
    jr->count = 0;
out:
    sl_free(path);
    return rc;
}

/* Seal the open journals of @j into bulk number next_seq; j->mu held. */
static int
seal(struct sl_bb *bb, struct job *j, struct sl_err *err)
{
    uint64_t seq = j->next_seq;
    int sealed = 0;
    int counted = 0;
    int rc = 0;
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        struct journal *jr = &j->jr[i];
        uint64_t good = 0;
        char *from = NULL;
        char *to = NULL;
        int src = 0;

        if (jr->fd < 0) {
            continue;
        }
        from = journal_path(j, i);
        if (jr->count == 0) {
            (void)unlink(from);
            goto closed;
        }
        to = bulk_path(j, seq, i);
        good = sl_bulk_writer_bytes(jr->w);
        src = sl_bulk_writer_finish(jr->w); /* flushes */
        if (src == 0 && bb->cfg.durability == SL_DURABILITY_FSYNC &&
            fdatasync(jr->fd) != 0) {
            src = sl_err_from_errno(errno);
        }
        /* Counted before the link makes the bulk visible: the committer
         * may take it and count it down at once. */
        if (src == 0 && !counted) {
            atomic_fetch_add(&j->pending, 1);
            counted = 1;
        }
        /* link + unlink: never replace a bulk of the same number. */
        if (src == 0 && link(from, to) != 0) {
            src = sl_err_from_errno(errno);
        }
        if (src == 0) {
            sl_test_delay("bulkbuilder.sealed"); /* the committer may run */
            if (unlink(from) != 0) {
                SL_WARN("bulkbuilder: %s: %s (the next journal removes it)",
                        from,
                        sl_errno_str(errno));
            }
            sealed = 1;
            goto closed;
        }
        /* Failed (disk full?): cut the trailer off again and go on
         * appending to this journal; its records stay safe in it. */
        (void)sl_err_set(
            err, src, "job", "seal %s: %s", from, sl_strerror(src));
        rc = src;
        sl_bulk_writer_free(jr->w);
        jr->w = NULL;
        if (ftruncate(jr->fd, (off_t)good) != 0 ||
            lseek(jr->fd, 0, SEEK_END) < 0) {
            SL_ERROR("bulkbuilder: %s: cannot cut back: %s",
                     from,
                     sl_errno_str(errno));
        }
        (void)sl_bulk_writer_resume(&jr->sink, jr->count, good, &jr->w);
        sl_free(from);
        sl_free(to);
        continue;
    closed:
        sl_bulk_writer_free(jr->w);
        jr->w = NULL;
        (void)close(jr->fd);
        jr->fd = -1;
        jr->count = 0;
        sl_free(from);
        sl_free(to);
    }
    if (rc == 0) {
        j->opened_ms = 0;
    }
    if (counted && !sealed) {
        atomic_fetch_sub(&j->pending, 1);
    }
    if (sealed) {
        /* A number used by one slot is never used again. */
        j->next_seq++;
        atomic_store(&j->sealed_below, j->next_seq);
        if (rc == 0) {
            rc = sync_dir(bb, j->dir);
        }
    }
    return rc;
}

/* Cut a journal left by a crash back to its last complete record; return
 * that count (or 0 when nothing is usable) and the good length. */
static uint64_t
journal_recover(int fd, uint64_t *good)
{
    struct sl_source src;
    struct sl_bulk_reader *r = NULL;
    struct sl_err err = {0};
    json_t *meta = NULL;
    int fdc = fd;
    uint64_t n = 0;

    *good = 0;
    sl_source_fd(&src, &fdc);
    if (sl_bulk_reader_new(&src, NULL, &r, &err) != 0) {
        return 0;
    }
    *good = sl_bulk_reader_offset(r);
    while (sl_bulk_reader_next_meta(r, &meta, &err) == 1) {
        json_decref(meta);
        if (sl_bulk_reader_skip_attachments(r, NULL, &err) != 0) {
            break;
        }
        n++;
        *good = sl_bulk_reader_offset(r);
    }
    sl_bulk_reader_free(r);
    return n;
}

/* At start: turn the journals of @j left by the last process into bulks. */
static void
recover_journals(struct sl_bb *bb, struct job *j)
{
    struct sl_err err = {0};
    int i = 0;

    (void)pthread_mutex_lock(&j->mu);
    for (i = 0; i < NSLOTS; i++) {
        struct journal *jr = &j->jr[i];
        char *path = journal_path(j, i);
        struct stat st;
        uint64_t good = 0;
        uint64_t n = 0;

        jr->fd = open(path, O_RDWR | O_CLOEXEC);
        if (jr->fd < 0) {
            sl_free(path);
            continue;
        }
        if (fstat(jr->fd, &st) == 0 && st.st_nlink > 1) {
            /* Sealed already (linked as a bulk, which the store may share
             * by now): the crash came before its journal name was
             * removed.  Recovering it would cut the bulk's trailer off. */
            SL_INFO("bulkbuilder: %s was sealed already; name removed", path);
            (void)close(jr->fd);
            jr->fd = -1;
            (void)unlink(path);
            sl_free(path);
            continue;
        }
        n = journal_recover(jr->fd, &good);
        if (n > 0 && (ftruncate(jr->fd, (off_t)good) != 0 ||
                      lseek(jr->fd, 0, SEEK_END) < 0)) {
            char *aside = sl_asprintf("%s.broken", path);

            /* Never delete accepted records: keep the file for a human. */
            SL_ERROR("bulkbuilder: %s: cannot cut back (%s); kept as %s",
                     path,
                     sl_errno_str(errno),
                     aside);
            (void)rename(path, aside);
            sl_free(aside);
            n = 0;
        }
        if (n == 0) {
            (void)close(jr->fd);
            jr->fd = -1;
            (void)unlink(path);
            sl_free(path);
            continue;
        }
        sl_sink_fd(&jr->sink, &jr->fd);
        (void)sl_bulk_writer_resume(&jr->sink, n, good, &jr->w);
        jr->count = n;
        j->accepted += n;
        SL_INFO("bulkbuilder: job %s: recovered %" PRIu64 " record(s) of %s",
                j->name,
                n,
                slot_names[i]);
        sl_free(path);
    }
    if (seal(bb, j, &err) != 0) {
        SL_ERROR("bulkbuilder: %s", err.message);
    }
    (void)pthread_mutex_unlock(&j->mu);
}

static uint64_t next_version(struct sl_bb *bb);

/* ------------------------------------------------------------------------
 * Appending.
 * --------------------------------------------------------------------- */

/*
 * Open a record of @job in journal @slot: checks, the job's lock (held
 * on success), its journal flushed so that an abort can cut it back.
 */
static int
record_open(struct sl_bb *bb,
            const char *job,
            int slot,
            struct sl_bb_rec **out,
            struct sl_err *err)
{
    struct sl_bb_rec *rec = NULL;
    struct job *j = NULL;
    int rc = sl_name_check_entity(job, err);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    rc = sl_jm_bulk_source_ready(bb->jm, job, SL_BB_WORKER, err);
    if (rc != 0) {
        return rc;
    }
    rc = job_get(bb, job, &j, err);
    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&j->mu);
    rc = journal_open(bb, j, slot, err);
    if (rc == 0) {
        rc = sl_bulk_writer_flush(j->jr[slot].w);
    }
    if (rc != 0) {
        (void)pthread_mutex_unlock(&j->mu);
        return rc;
    }
    rec = sl_calloc(1, sizeof(*rec));
    rec->bb = bb;
    rec->j = j;
    rec->slot = slot;
    /* the journal's size: its writer's buffer was just flushed */
    rec->start = (off_t)sl_bulk_writer_bytes(j->jr[slot].w);
    *out = rec;
    return 0;
}

/* After writing the metadata of @rec (result @rc): 0 and *out = @rec, or
 * @rc reported and @rec aborted. */
static int
record_started(struct sl_bb_rec *rec,
               int rc,
               struct sl_bb_rec **out,
               struct sl_err *err)
{
    if (rc != 0) {
        (void)sl_err_set(err, rc, "record", "journal: %s", sl_strerror(rc));
        sl_bb_record_abort(rec);
        return rc;
    }
    *out = rec;
    return 0;
}

/* Remove the named spool files sl_bb_spool_open's fallback left in @dir
 * when the process died between mkostemp and unlink. */
static void
sweep_spools(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e = NULL;

    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "spool.", 6) == 0 &&
            unlinkat(dirfd(d), e->d_name, 0) == 0) {
            SL_INFO(
                "bulkbuilder: removed %s/%s left by a crash", dir, e->d_name);
        }
    }
    if (d != NULL) {
        (void)closedir(d);
    }
}

int
sl_bb_spool_open(struct sl_bb *bb, struct sl_err *err)
{
    char *path = NULL;
    int fd = open(bb->cfg.dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

    if (fd >= 0) {
        return fd;
    }
    path = sl_asprintf("%s/spool.XXXXXX", bb->cfg.dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) {
        (void)unlink(path);
    } else {
        fd = sl_err_set(err,
                        sl_err_from_errno(errno),
                        NULL,
                        "cannot create a spool file in %s: %s",
                        bb->cfg.dir,
                        sl_errno_str(errno));
    }
    sl_free(path);
    return fd;
}

int
sl_bb_record_check(const json_t *meta, struct sl_err *err)
{
    const json_t *id = json_object_get(meta, "_recordid");
    size_t len = json_string_length(id);

    if (!json_is_object(meta)) {
        return sl_err_set(
            err, SL_EINVAL, "record", "a record is a JSON object");
    }
    if (!json_is_string(id) || len == 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "_recordid",
                          "the record has no non-empty string _recordid");
    }
    if (len > SL_RECORD_ID_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "_recordid",
                          "_recordid has %zu bytes, at most %u allowed",
                          len,
                          SL_RECORD_ID_MAX);
    }
    if (strlen(json_string_value(id)) != len) {
        return sl_err_set(
            err, SL_EINVAL, "_recordid", "_recordid contains a NUL character");
    }
    return 0;
}

int
sl_bb_record_begin(struct sl_bb *bb,
                   const char *job,
                   const json_t *meta,
                   int is_delete,
                   struct sl_bb_rec **out,
                   struct sl_err *err)
{
    const json_t *id = json_object_get(meta, "_recordid");
    struct sl_bb_rec *rec = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl_bb_record_check(meta, err);
    if (rc != 0) {
        return rc;
    }
    rc = record_open(bb, job, is_delete ? 1 : 0, &rec, err);
    if (rc != 0) {
        return rc;
    }
    {
        /* _version: growing over restarts (epoch) and within one (counter),
         * so the index can order an add and a delete of one id that take
         * different paths through the workflow. */
        uint64_t v = next_version(bb);
        json_t *m = is_delete ? json_pack("{s:O}", "_recordid", id)
                              : json_copy((json_t *)meta);

        if (is_delete) {
            /* what a delete keeps: the source it comes from (the index
             * leaves the document to other sources) or a source to purge */
            static const char *const keep[] = {"_source", "_purgeSource"};
            size_t i = 0;

            for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
                const json_t *kv = json_object_get(meta, keep[i]);

                if (json_is_string(kv)) {
                    (void)json_object_set(m, keep[i], (json_t *)kv);
                }
            }
        }

        (void)json_object_set_new(m, "_version", json_integer((json_int_t)v));
        /* the webCrawler's mark of a link it visited itself: never taken
         * from outside (a pushed link is normalised and visited) */
        (void)json_object_del(m, "_visited");
        rc = sl_bulk_writer_record_begin(rec->j->jr[rec->slot].w, m);
        json_decref(m);
    }
    return record_started(rec, rc, out, err);
}

int
sl_bb_record_begin_text(struct sl_bb *bb,
                        const char *job,
                        const char *meta,
                        size_t len,
                        const struct sl_record_head *head,
                        struct sl_bb_rec **out,
                        struct sl_err *err)
{
    struct sl_record_head h;
    struct sl_bb_rec *rec = NULL;
    char *text = NULL;
    int rc = 0;

    *out = NULL;
    if (meta == NULL || len < 3 || meta[0] != '{' || meta[len - 1] != '}' ||
        len > INT_MAX / 2 || memchr(meta, '\0', len) != NULL) {
        return sl_err_set(
            err, SL_EINVAL, "record", "a record is a JSON object");
    }
    if (head == NULL || head->id == NULL || head->id[0] == '\0' ||
        strlen(head->id) > SL_RECORD_ID_MAX ||
        (head->flags & (SL_HEAD_VERSION | SL_HEAD_VISITED)) != 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "record",
                          "a record given as text needs its head, without "
                          "_version and _visited");
    }
    rc = record_open(bb, job, 0, &rec, err);
    if (rc != 0) {
        return rc;
    }
    /* the object's text with _version appended (as sl_bb_record_begin
     * adds it): the head says the key is not there yet, and there is one
     * at least (_recordid), so a comma goes before it */
    text = sl_asprintf("%.*s,\"_version\":%llu}",
                       (int)(len - 1),
                       meta,
                       (unsigned long long)next_version(bb));
    h = *head;
    h.flags |= SL_HEAD_VERSION;
    rc = sl_bulk_writer_record_begin_text(
        rec->j->jr[rec->slot].w, text, strlen(text), &h);
    sl_free(text);
    return record_started(rec, rc, out, err);
}

int
sl_bb_attachment_begin(struct sl_bb_rec *rec,
                       const char *name,
                       uint64_t size,
                       struct sl_err *err)
{
    int rc =
        sl_bulk_writer_attachment_begin(rec->j->jr[rec->slot].w, name, size);

    return rc == 0 ? 0
                   : sl_err_set(err,
                                rc,
                                "attachment",
                                "attachment '%s': %s",
                                name,
                                sl_strerror(rc));
}

int
sl_bb_attachment_write(struct sl_bb_rec *rec,
                       const void *data,
                       size_t len,
                       struct sl_err *err)
{
    int rc =
        sl_bulk_writer_attachment_write(rec->j->jr[rec->slot].w, data, len);

    return rc == 0 ? 0
                   : sl_err_set(
                         err, rc, "attachment", "journal: %s", sl_strerror(rc));
}

/* Throw away the journal of @slot after a failed write: the records it
 * held are kept by sealing what was complete. */
static void
journal_reset(struct sl_bb *bb, struct job *j, int slot, off_t good)
{
    struct journal *jr = &j->jr[slot];
    struct sl_err err = {0};
    uint64_t count = jr->count;

    sl_bulk_writer_free(jr->w);
    jr->w = NULL;
    if (ftruncate(jr->fd, good) != 0 || lseek(jr->fd, 0, SEEK_END) < 0) {
        SL_ERROR("bulkbuilder: job %s: cannot cut the journal back: %s",
                 j->name,
                 sl_errno_str(errno));
    }
    if (count == 0) {
        char *path = journal_path(j, slot);

        (void)close(jr->fd);
        jr->fd = -1;
        (void)unlink(path);
        sl_free(path);
        return;
    }
    (void)sl_bulk_writer_resume(&jr->sink, count, (uint64_t)good, &jr->w);
    if (seal(bb, j, &err) != 0) {
        SL_ERROR("bulkbuilder: %s", err.message);
    }
}

void
sl_bb_record_abort(struct sl_bb_rec *rec)
{
    if (rec == NULL) {
        return;
    }
    journal_reset(rec->bb, rec->j, rec->slot, rec->start);
    (void)pthread_mutex_unlock(&rec->j->mu);
    sl_free(rec);
}

int
sl_bb_record_end(struct sl_bb_rec *rec, struct sl_err *err)
{
    struct sl_bb *bb = rec->bb;
    struct job *j = rec->j;
    struct journal *jr = &j->jr[rec->slot];
    int rc = sl_bulk_writer_record_end(jr->w);
    int kick = 0;

    if (rc == 0) {
        rc = sl_bulk_writer_flush(jr->w);
    }
    if (rc == 0 && bb->cfg.durability == SL_DURABILITY_FSYNC &&
        fdatasync(jr->fd) != 0) {
        rc = sl_err_from_errno(errno);
    }
    if (rc != 0) {
        (void)sl_err_set(err, rc, "record", "journal: %s", sl_strerror(rc));
        sl_bb_record_abort(rec);
        return rc;
    }
    jr->count++;
    j->accepted++;
    if (j->opened_ms == 0) {
        j->opened_ms = sl_mono_ms();
    }
    if (sl_bulk_writer_bytes(jr->w) >= bb->cfg.limit_size) {
        rc = seal(bb, j, err);
        kick = 1;
    }
    (void)pthread_mutex_unlock(&j->mu);
    sl_free(rec);
    if (kick) {
        (void)pthread_mutex_lock(&bb->mu);
        bb->kick = 1;
        (void)pthread_cond_signal(&bb->cv);
        (void)pthread_mutex_unlock(&bb->mu);
    }
    /* A failed seal does not lose the accepted record (it stays in the
     * journal, recovered at the next start): report success. */
    return 0;
}

int
sl_bb_add(struct sl_bb *bb,
          const char *job,
          const json_t *meta,
          int is_delete,
          struct sl_err *err)
{
    struct sl_bb_rec *rec = NULL;
    int rc = sl_bb_record_begin(bb, job, meta, is_delete, &rec, err);

    return rc != 0 ? rc : sl_bb_record_end(rec, err);
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

static json_t *
load_task(const char *path)
{
    json_error_t e;

    return json_load_file(path, 0, &e);
}

/* Remove the files of bulk @seq. */
static void
remove_bulk(struct sl_bb *bb, struct job *j, uint64_t seq)
{
    char *tp = task_path(j, seq);
    char *dp = done_path(j, seq);
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        char *p = bulk_path(j, seq, i);

        (void)unlink(p);
        sl_free(p);
    }
    (void)unlink(tp);
    (void)unlink(dp); /* last: until it is gone, the bulk is known done */
    (void)sync_dir(bb, j->dir);
    sl_free(tp);
    sl_free(dp);
}

/* A full disk (@code) stopped a seal or a commit of @j: its seals and
 * commits pause (committer thread only). */
static void
job_nospace(struct job *j, int code, const char *what)
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
job_keep_alive(struct sl_bb *bb, struct job *j)
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
 * Commit bulk @seq of @j: task, copies, finish, removal.  Returns 0 when
 * done, 1 to try again later (job not running, transient error).  A task
 * that could not be finished is kept in j->cur for the next attempt: a
 * copy that fails on a full disk never asks for another task (issue 24:
 * ten tasks a second, a workflow run each, for the same three bulks).
 */
static int
commit_bulk(struct sl_bb *bb, struct job *j, uint64_t seq)
{
    char *tp = task_path(j, seq);
    char *dp = done_path(j, seq);
    struct sl_err err = {0};
    json_t *task = NULL;
    json_t *counters = json_object();
    json_t *result = NULL;
    const char *task_id = NULL;
    int have_file = 0;
    int keep = 0;
    int rc = 0;
    int i = 0;

    if (access(dp, F_OK) == 0) {
        goto done; /* finished before a crash; only the files are left */
    }
    if (j->cur != NULL && j->cur_seq != seq) {
        /* kept for a bulk that is gone (cannot happen: bulks commit in
         * order and leave only when done): it belongs to nothing */
        json_t *empty = json_pack("{s:s}", "status", "SUCCESSFUL");

        (void)sl_jm_task_finish(
            bb->jm,
            SL_BB_WORKER,
            json_string_value(json_object_get(j->cur, "taskId")),
            empty,
            &err);
        json_decref(empty);
        json_decref(j->cur);
        j->cur = NULL;
        sl_err_clear(&err);
    }
    task = load_task(tp);
    have_file = task != NULL;
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
        /* Its lease ran out (a long copy failure) or its run ended: never
         * finished, so the bulk goes into a new task. */
        SL_WARN("bulkbuilder: job %s: task of bulk %" PRIu64
                " is gone; a new one takes the bulk",
                j->name,
                seq);
        (void)unlink(tp);
        json_decref(task);
        task = NULL;
        have_file = 0;
        sl_err_clear(&err);
    }
    if (task == NULL) {
        char *text = NULL;

        rc = sl_jm_task_initial(bb->jm, j->name, SL_BB_WORKER, &task, &err);
        if (rc != 0) {
            if (!j->waiting) {
                SL_INFO("bulkbuilder: job %s: bulks wait: %s",
                        j->name,
                        err.message);
            }
            j->waiting = 1;
            rc = 1;
            goto out;
        }
        text = json_dumps(task, JSON_COMPACT);
        rc = write_atomic(bb, j, tp, text);
        sl_free(text);
        have_file = rc == 0;
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
            rc = 0;
        }
    }
    j->waiting = 0;
    task_id = json_string_value(json_object_get(task, "taskId"));
    for (i = 0; i < NSLOTS; i++) {
        char *bp = bulk_path(j, seq, i);
        const json_t *o = json_array_get(
            json_object_get(json_object_get(task, "output"), slot_names[i]), 0);
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
                    slot_names[i],
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
            keep = 1;
            rc = 1;
            goto out;
        }
        (void)json_object_set_new(counters,
                                  i == 0 ? "records.inserted"
                                         : "records.deleted",
                                  json_integer((json_int_t)n));
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
        goto out;
    }
    if (rc != 0) {
        SL_ERROR("bulkbuilder: job %s: finish: %s", j->name, err.message);
        keep = 1;
        rc = 1;
        goto out;
    }
    /* Finished: say so before removing anything.  A crash before this
     * rename only means the bulk is committed a second time (indexing is
     * idempotent and versioned); never that it is lost. */
    if (have_file && rename(tp, dp) != 0) {
        SL_ERROR(
            "bulkbuilder: job %s: %s: %s", j->name, dp, sl_errno_str(errno));
    }
    (void)sync_dir(bb, j->dir);
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
    json_decref(result);
    json_decref(counters);
    json_decref(task);
    sl_free(tp);
    sl_free(dp);
    return rc;
}

/* Sealed bulk numbers of @j, ascending (new array of *n). */
static uint64_t *
sealed_seqs(const struct job *j, size_t *n)
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
static void
sweep_orphans(struct sl_bb *bb)
{
    json_t *task = NULL;
    json_t *result = json_pack("{s:s}", "status", "SUCCESSFUL");
    struct sl_err err = {0};

    while (sl_jm_task_take(bb->jm, SL_BB_WORKER, NULL, NULL, &task, &err) ==
           0) {
        const char *id = json_string_value(json_object_get(task, "taskId"));

        SL_INFO("bulkbuilder: finishing orphan task %s empty", id);
        (void)sl_jm_task_finish(bb->jm, SL_BB_WORKER, id, result, &err);
        json_decref(task);
        task = NULL;
    }
    json_decref(result);
}

static void *
committer_main(void *arg)
{
    struct sl_bb *bb = arg;

    for (;;) {
        struct job *j = NULL;
        struct job *jobs = NULL;
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
                    seal(bb, j, &err) != 0) {
                    SL_ERROR("bulkbuilder: %s", err.message);
                    job_nospace(j, err.code, err.message);
                }
                (void)pthread_mutex_unlock(&j->mu);
            }
            seqs = sealed_seqs(j, &n);
            for (i = 0; i < n; i++) {
                if (seqs[i] >= atomic_load(&j->sealed_below) ||
                    commit_bulk(bb, j, seqs[i]) != 0) {
                    break; /* keep the order; try again next tick */
                }
            }
            sl_free(seqs);
        }
        sweep_orphans(bb);
    }
    return NULL;
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
    bb->jm = jm;
    bb->store = store;
    sweep_spools(bb->dir);
    (void)pthread_mutex_init(&bb->mu, NULL);
    (void)pthread_mutex_init(&bb->vmu, NULL);
    (void)pthread_cond_init(&bb->cv, NULL);
    *out = bb;
    return 0;
}

/* Reconcile the .task files of @j with the jobmanager (see the header). */
static void
recover_tasks(struct sl_bb *bb, struct job *j)
{
    uint64_t *seqs = NULL;
    size_t n = 0;
    size_t i = 0;

    seqs = sealed_seqs(j, &n);
    atomic_store(&j->pending, n);
    for (i = 0; i < n; i++) {
        char *tp = task_path(j, seqs[i]);
        json_t *task = load_task(tp);
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
static uint64_t
next_version(struct sl_bb *bb)
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
    struct job *j = NULL;
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
            job_get(bb, e->d_name + 2, &j, err) != 0) {
            continue;
        }
    }
    (void)closedir(d);
    for (j = bb->jobs; j != NULL; j = j->next) {
        recover_journals(bb, j);
        recover_tasks(bb, j);
    }
    sweep_orphans(bb);
    rc = pthread_create(&bb->thread, NULL, committer_main, bb);
    if (rc != 0) {
        return sl_err_set(err, -rc, NULL, "cannot start the committer");
    }
    bb->started = 1;
    return 0;
}

void
sl_bb_close(struct sl_bb *bb)
{
    struct job *j = NULL;

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
    struct job *j = NULL;
    struct job *jobs = NULL;
    int rc = 0;

    (void)pthread_mutex_lock(&bb->mu);
    jobs = bb->jobs;
    (void)pthread_mutex_unlock(&bb->mu);
    for (j = jobs; j != NULL && rc == 0; j = j->next) {
        if (job == NULL || strcmp(job, j->name) == 0) {
            (void)pthread_mutex_lock(&j->mu);
            rc = seal(bb, j, err);
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
open_records(struct job *j)
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
    struct job *j = NULL;
    int64_t deadline = sl_mono_ms() + (int64_t)timeout_ms;
    const struct timespec tick = {0, DRAIN_POLL_MS * 1000000L};
    int rc = 0;

    (void)pthread_mutex_lock(&bb->mu);
    j = bb->jobs;
    while (j != NULL && strcmp(j->name, job) != 0) {
        j = j->next;
    }
    (void)pthread_mutex_unlock(&bb->mu);
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
    return rc;
}

static json_t *
job_status(struct job *j)
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
    struct job *j = NULL;
    struct job *jobs = NULL;

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
