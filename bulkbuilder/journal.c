/*
 * Bulkbuilder: the journals.  A pushed record is appended to the open
 * journal of its job and slot (a bulk without its trailer, in
 * <dir>/j.<job>/) and acknowledged once it is there; sealing gives the
 * journals their trailers and links them as bulk number next_seq, which
 * the committer (committer.c) hands to the job.  Also the recovery of
 * the journals a crash left, and the spool files of the REST intake.
 * The model and the crash argument are in bulkbuilder.h and
 * docs/bulkbuilder.md.
 *
 * Threading: everything on a job's journals runs under the job's mu; an
 * open record (struct sl_bb_rec) holds it from sl_bb_record_begin to
 * sl_bb_record_end or sl_bb_record_abort.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkbuilder/bulkbuilder_int.h"

const char *const sl__bb_slot_names[NSLOTS] = {"insertedRecords",
                                               "deletedRecords"};

/* ------------------------------------------------------------------------
 * Files.
 * --------------------------------------------------------------------- */

static char *
journal_path(const struct sl__bb_job *j, int slot)
{
    return sl_asprintf("%s/open-%s.journal", j->dir, sl__bb_slot_names[slot]);
}

char *
sl__bb_bulk_path(const struct sl__bb_job *j, uint64_t seq, int slot)
{
    return sl_asprintf(
        "%s/%020" PRIu64 "-%s.bulk", j->dir, seq, sl__bb_slot_names[slot]);
}

char *
sl__bb_task_path(const struct sl__bb_job *j, uint64_t seq)
{
    return sl_asprintf("%s/%020" PRIu64 ".task", j->dir, seq);
}

/* Written once the task of bulk @seq is finished: its files can go. */
char *
sl__bb_done_path(const struct sl__bb_job *j, uint64_t seq)
{
    return sl_asprintf("%s/%020" PRIu64 ".done", j->dir, seq);
}

int
sl__bb_sync_dir(const struct sl_bb *bb, const char *dir)
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

/* ------------------------------------------------------------------------
 * Journals.
 * --------------------------------------------------------------------- */

/* Open the journal of @slot for appending; called with j->mu held. */
static int
journal_open(struct sl_bb *bb,
             struct sl__bb_job *j,
             int slot,
             struct sl_err *err)
{
    struct sl__bb_journal *jr = &j->jr[slot];
    char *path = NULL;
    int rc = 0;

    if (jr->fd >= 0) {
        return 0;
    }
    path = journal_path(j, slot);
    /* A name left there is stale: sl__bb_recover_journals took every journal at
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
        rc = sl__bb_sync_dir(bb, j->dir);
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
int
sl__bb_seal(struct sl_bb *bb, struct sl__bb_job *j, struct sl_err *err)
{
    uint64_t seq = j->next_seq;
    int sealed = 0;
    int counted = 0;
    int rc = 0;
    int i = 0;

    for (i = 0; i < NSLOTS; i++) {
        struct sl__bb_journal *jr = &j->jr[i];
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
        to = sl__bb_bulk_path(j, seq, i);
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
            rc = sl__bb_sync_dir(bb, j->dir);
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
void
sl__bb_recover_journals(struct sl_bb *bb, struct sl__bb_job *j)
{
    struct sl_err err = {0};
    int i = 0;

    (void)pthread_mutex_lock(&j->mu);
    for (i = 0; i < NSLOTS; i++) {
        struct sl__bb_journal *jr = &j->jr[i];
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
                sl__bb_slot_names[i]);
        sl_free(path);
    }
    if (sl__bb_seal(bb, j, &err) != 0) {
        SL_ERROR("bulkbuilder: %s", err.message);
    }
    (void)pthread_mutex_unlock(&j->mu);
}

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
    struct sl__bb_job *j = NULL;
    int rc = sl_name_check_entity(job, err);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    rc = sl_jm_bulk_source_ready(bb->jm, job, SL_BB_WORKER, err);
    if (rc != 0) {
        return rc;
    }
    rc = sl__bb_job_get(bb, job, &j, err);
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
void
sl__bb_sweep_spools(const char *dir)
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
        uint64_t v = sl__bb_next_version(bb);
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
                       (unsigned long long)sl__bb_next_version(bb));
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
journal_reset(struct sl_bb *bb, struct sl__bb_job *j, int slot, off_t good)
{
    struct sl__bb_journal *jr = &j->jr[slot];
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
    if (sl__bb_seal(bb, j, &err) != 0) {
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
    struct sl__bb_job *j = rec->j;
    struct sl__bb_journal *jr = &j->jr[rec->slot];
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
        rc = sl__bb_seal(bb, j, err);
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
