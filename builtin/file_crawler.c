/*
 * fileCrawler (SMILA's FileCrawler, docs/workers.md): lists one directory per
 * directory record.  Sub-directories go to the multiple output
 * `directoriesToCrawl` (follow-up tasks, in parallel), regular files become
 * metadata records in the multiple output `filesToCrawl`, at most
 * `maxFilesPerBulk` per bulk.  The first task (no input) crawls
 * `rootFolder`.  See docs/workers.md "fileCrawler" for the attributes, the
 * counters and the escaping of names that are not valid UTF-8.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

#define DEFAULT_MAX_FILES_PER_BULK 1000u
/* Entries one task may list before its remaining sub-directories become
 * follow-up tasks (small directories make tiny tasks). */
#define DEFAULT_ENTRIES_PER_TASK 2000u
/* The first sub-directories of a task get a bulk (a follow-up task) each;
 * after that they are grouped, so one task keeps few output bulks open. */
#define DIRS_SINGLE    32u
#define DIRS_PER_GROUP 256u
/* Files checked against the delta service at once.  The batch spans the
 * directories of a task: a check costs a write transaction per shard it
 * touches, so per-directory batches of a dozen files made almost one
 * commit per file. */
#define PRECHECK_BATCH 1024u

/* A file waiting for the delta pre-check. */
struct prefile {
    char *edir;  /* escaped directory */
    char *ename; /* escaped name */
    char *id;    /* record id */
    char hash[64];
    struct stat st;
};

/* The resolved parameters and the output state of one task. */
struct crawl {
    struct sl_task_ctx *ctx;
    const char *source;           /* dataSource, borrowed */
    uint64_t max_file_size;       /* filters.maxFileSize */
    uint64_t max_depth;           /* filters.maxFolderDepth, UINT64_MAX: none */
    int follow;                   /* filters.followSymbolicLinks */
    int outside;                  /* filters.linksOutsideRoot */
    char root[PATH_MAX];          /* rootFolder resolved, "" if it is not */
    uint64_t files_per_bulk;      /* maxFilesPerBulk */
    struct sl__bi_patterns files; /* filters.filePatterns, on the name */
    struct sl__bi_patterns folders; /* filters.folderPatterns, on the path */
    uint64_t files_in_bulk;  /* records in the current filesToCrawl bulk */
    uint64_t dirs_written;   /* directory records written by this task */
    int files_connected;     /* 0 once filesToCrawl proved unconnected */
    int dirs_connected;      /* same for directoriesToCrawl */
    uint64_t entries_budget; /* entriesPerTask */
    uint64_t entries;        /* entries listed by this task so far */
    struct pending *queue;   /* sub-directories to list in this task */
    struct pending *queue_tail;
    /* delta pre-check (deltaPrecheck): NULL when off */
    struct sl__bi_recheck rk; /* the job's next checks, or off */
    struct sl_delta *delta;
    const char *run_id;    /* jobRunId, borrowed */
    uint64_t seq;          /* run sequence of the source, 0: not yet taken */
    struct prefile *batch; /* PRECHECK_BATCH places */
    struct sl_delta_rec *recs; /* as many, for the check */
    size_t nbatch;
    /* a continuous run with `watch: true` (watch.c), or NULL */
    struct sl__bi_watch *watch;
    uint64_t max_watches; /* maxWatches, 0: the kernel's limit */
};

/* A sub-directory kept for this task (while the budget lasts). */
struct pending {
    struct pending *next;
    char *raw;   /* file system path */
    char *epath; /* escaped path (record id) */
    uint64_t depth;
    json_t *chain; /* its ancestors */
};

/* ------------------------------------------------------------------------
 * Parameters.
 * --------------------------------------------------------------------- */

/* Read the parameters into @c; 0 or SL_EINVAL with the task message set. */
/* Turn the delta pre-check on when parameter deltaPrecheck (default
 * true) allows it, the strategy checks (additive, full) and the delta
 * service runs in this process. */
static void
precheck_init(struct crawl *c)
{
    const json_t *v = sl_task_param(c->ctx, "deltaPrecheck");
    enum sl_delta_strategy strategy = SL_DELTA_STRATEGY_FULL;
    c->run_id = json_string_value(json_object_get(
        json_object_get(sl_task_json(c->ctx), "properties"), "jobRunId"));
    if (json_is_false(v) ||
        (json_is_string(v) && strcmp(json_string_value(v), "false") == 0)) {
        return;
    }
    if (sl__bi_strategy(json_object_get(sl_task_json(c->ctx), "parameters"),
                        &strategy,
                        NULL) != 0) {
        return; /* the deltaChecker reports it */
    }
    if (sl_delta_strategy_reads(strategy) && c->run_id != NULL &&
        c->run_id[0] != '\0') {
        c->delta = sl_task_services(c->ctx)->delta;
    }
    if (c->delta != NULL && sl__bi_recheck_init(c->ctx, &c->rk) != 0) {
        c->rk.on = 0; /* the deltaChecker reports it */
    }
    if (c->delta != NULL) {
        c->batch = sl_calloc(PRECHECK_BATCH, sizeof(*c->batch));
        c->recs = sl_calloc(PRECHECK_BATCH, sizeof(*c->recs));
    }
}

/* Free what the pre-check holds (files left by an output error). */
static void
precheck_free(struct crawl *c)
{
    while (c->nbatch > 0) {
        c->nbatch--;
        sl_free(c->batch[c->nbatch].edir);
        sl_free(c->batch[c->nbatch].ename);
        sl_free(c->batch[c->nbatch].id);
    }
    sl_free(c->batch);
    sl_free(c->recs);
    c->batch = NULL;
    c->recs = NULL;
}

static int
crawl_init(struct sl_task_ctx *ctx, struct crawl *c)
{
    const json_t *filters = sl_task_param(ctx, "filters");
    int rc = 0;

    memset(c, 0, sizeof(*c));
    c->ctx = ctx;
    c->files_connected = c->dirs_connected = 1;
    c->source = sl_task_param_str(ctx, "dataSource");
    if (c->source == NULL || c->source[0] == '\0') {
        sl_task_set_message(ctx, "parameter dataSource is required");
        return SL_EINVAL;
    }
    rc = sl_task_param_u64(
        ctx, "entriesPerTask", DEFAULT_ENTRIES_PER_TASK, &c->entries_budget);
    if (rc != 0) {
        sl_task_set_message(ctx, "entriesPerTask: a number >= 0");
        return SL_EINVAL;
    }
    rc = sl_task_param_u64(
        ctx, "maxFilesPerBulk", DEFAULT_MAX_FILES_PER_BULK, &c->files_per_bulk);
    if (rc != 0 || c->files_per_bulk == 0) {
        sl_task_set_message(ctx, "maxFilesPerBulk: a number > 0");
        return SL_EINVAL;
    }
    if (filters != NULL && !json_is_object(filters)) {
        sl_task_set_message(ctx, "filters: not an object");
        return SL_EINVAL;
    }
    if (sl_worker_json_u64(json_object_get(filters, "maxFileSize"),
                           SL_WORKER_FILE_MAX_SIZE,
                           &c->max_file_size) != 0 ||
        sl_worker_json_u64(json_object_get(filters, "maxFolderDepth"),
                           UINT64_MAX,
                           &c->max_depth) != 0) {
        sl_task_set_message(ctx,
                            "filters.maxFileSize and filters.maxFolderDepth: "
                            "numbers >= 0");
        return SL_EINVAL;
    }
    c->follow =
        sl__bi_json_true(json_object_get(filters, "followSymbolicLinks"));
    c->outside = sl__bi_json_true(json_object_get(filters, "linksOutsideRoot"));
    c->root[0] = '\0';
    if (sl_task_param_str(ctx, "rootFolder") == NULL ||
        realpath(sl_task_param_str(ctx, "rootFolder"), c->root) == NULL) {
        c->root[0] = '\0';
    }
    rc = sl__bi_patterns_init(ctx, filters, "filePatterns", &c->files);
    if (rc == 0) {
        rc = sl__bi_patterns_init(ctx, filters, "folderPatterns", &c->folders);
    }
    if (rc == 0) {
        precheck_init(c);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Records.
 * --------------------------------------------------------------------- */

/* The writer of @slot, or NULL (and *connected = 0) when the slot is not
 * connected.  0 or an SL_E* code. */
static int
writer(struct crawl *c,
       const char *slot,
       int *connected,
       struct sl_bulk_writer **w)
{
    int rc = 0;

    *w = NULL;
    if (!*connected) {
        return 0;
    }
    rc = sl_task_output_writer(c->ctx, slot, w);
    if (rc == SL_ENOENT) {
        *connected = 0;
        return 0;
    }
    return rc;
}

/* The record id of file @ename (escaped) in directory @edir (escaped). */
static char *
file_id(const char *edir, const char *ename)
{
    return sl_asprintf("%s/%s", strcmp(edir, "/") == 0 ? "" : edir, ename);
}

/* The _deltaHash of a file: size and modification time in nanoseconds. */
static void
file_hash(const struct stat *st, char *hash, size_t cap)
{
    (void)snprintf(hash,
                   cap,
                   "%lld-%lld.%09ld",
                   (long long)st->st_size,
                   (long long)st->st_mtim.tv_sec,
                   (long)st->st_mtim.tv_nsec);
}

/* Write the file record of @name (escaped @ename) in @dir (escaped
 * @edir). */
static int
emit_file(struct crawl *c,
          const char *edir,
          const char *ename,
          const struct stat *st)
{
    struct sl_bulk_writer *w = NULL;
    json_t *meta = NULL;
    const char *dot = strrchr(ename, '.');
    char *path = file_id(edir, ename);
    char when[40];
    char hash[64];
    int64_t ms = 0;
    int rc = 0;

    if (c->files_in_bulk >= c->files_per_bulk) {
        rc = sl_task_output_next(c->ctx, "filesToCrawl");
        if (rc != 0 && rc != SL_ENOENT) {
            goto out;
        }
        c->files_in_bulk = 0;
    }
    rc = writer(c, "filesToCrawl", &c->files_connected, &w);
    if (rc != 0 || w == NULL) {
        goto out;
    }
    ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    sl_time_format(ms, when, sizeof(when));
    file_hash(st, hash, sizeof(hash));
    meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s}",
                     "_recordid",
                     path,
                     "_source",
                     c->source,
                     sl_task_mapped(c->ctx, "fileName"),
                     ename,
                     sl_task_mapped(c->ctx, "filePath"),
                     path,
                     sl_task_mapped(c->ctx, "fileFolder"),
                     edir,
                     sl_task_mapped(c->ctx, "fileSize"),
                     (json_int_t)st->st_size,
                     sl_task_mapped(c->ctx, "fileLastModified"),
                     when,
                     "_deltaHash",
                     hash);
    if (meta == NULL) {
        rc = SL_EINTERNAL;
        goto out;
    }
    if (dot != NULL && dot != ename && dot[1] != '\0') {
        (void)json_object_set_new(meta,
                                  sl_task_mapped(c->ctx, "fileExtension"),
                                  json_string(dot + 1));
    }
    if (sl_worker_is_archive_name(ename)) {
        (void)json_object_set_new(meta, "_isCompound", json_true());
    }
    rc = sl_bulk_writer_record_begin(w, meta);
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(w);
    }
    if (rc == 0) {
        c->files_in_bulk++;
        sl_task_counter_add(c->ctx, "files.records", 1);
    }

out:
    json_decref(meta);
    sl_free(path);
    return rc;
}

/*
 * The delta pre-check (docs/workers.md "fileCrawler", ManifoldCF's version
 * check): the files collected in c->batch are checked against the delta
 * service in one call, as the deltaChecker would check their records.
 * Those up to date are marked visited by that call (an archive's elements
 * too) and not written; the others are written for the deltaChecker, which
 * checks them again and stays the one that routes records.  When the
 * service fails, every file of the batch is written and the deltaChecker
 * decides.  0 or an output error.
 */
static int
precheck_flush(struct crawl *c)
{
    struct sl_delta_rec *recs = c->recs;
    struct sl_err err;
    uint64_t uptodate = 0;
    size_t i = 0;
    int checked = 0;
    int rc = 0;

    if (c->nbatch == 0) {
        return 0;
    }
    sl_err_clear(&err);
    memset(recs, 0, c->nbatch * sizeof(*recs));
    for (i = 0; i < c->nbatch; i++) {
        recs[i].id = c->batch[i].id;
        recs[i].hash = c->batch[i].hash;
        recs[i].is_compound = sl_worker_is_archive_name(c->batch[i].ename);
    }
    if (c->seq == 0 &&
        sl__bi_delta_run(
            c->ctx, c->delta, c->source, c->run_id, &c->seq, &err) != 0) {
        c->seq = 0;
    } else {
        checked = sl_delta_check(
                      c->delta, c->source, c->seq, recs, c->nbatch, &err) == 0;
    }
    /* the up-to-date files' next checks (the deltaChecker records the
     * others); when that fails, every file goes on to the deltaChecker */
    if (checked &&
        sl__bi_recheck_record(
            c->ctx, &c->rk, c->delta, c->source, c->seq, recs, c->nbatch, 1) !=
            0) {
        checked = 0;
        (void)snprintf(err.message, sizeof(err.message), "next checks failed");
    }
    if (!checked) {
        SL_WARN("fileCrawler: delta pre-check of %zu files from %s: %s (the "
                "deltaChecker checks them)",
                c->nbatch,
                c->batch[0].edir,
                err.message);
        sl_task_counter_add(c->ctx, "files.precheckFailed", 1);
    }
    for (i = 0; i < c->nbatch; i++) {
        struct prefile *f = &c->batch[i];

        if (checked && recs[i].result == SL_DELTA_UPTODATE) {
            uptodate++;
        } else if (rc == 0) {
            rc = emit_file(c, f->edir, f->ename, &f->st);
        }
        sl_free(f->edir);
        sl_free(f->ename);
        sl_free(f->id);
    }
    c->nbatch = 0;
    if (uptodate > 0) {
        sl_task_counter_add(c->ctx, "files.uptodate", uptodate);
    }
    return rc;
}

/* A regular file that passed the filters: written at once, or queued for
 * the delta pre-check.  0 or an output error. */
static int
add_file(struct crawl *c,
         const char *edir,
         const char *ename,
         const struct stat *st)
{
    struct prefile *f = NULL;

    if (c->delta == NULL) {
        return emit_file(c, edir, ename, st);
    }
    f = &c->batch[c->nbatch++];
    f->edir = sl_strdup(edir);
    f->ename = sl_strdup(ename);
    f->id = file_id(edir, ename);
    f->st = *st;
    file_hash(st, f->hash, sizeof(f->hash));
    return c->nbatch == PRECHECK_BATCH ? precheck_flush(c) : 0;
}

/* Write the directory record of @epath at @depth whose ancestors (itself
 * excluded) are @chain (borrowed). */
static int
emit_dir(struct crawl *c, const char *epath, uint64_t depth, json_t *chain)
{
    struct sl_bulk_writer *w = NULL;
    json_t *meta = NULL;
    int rc = 0;

    if (c->dirs_written > 0 &&
        (c->dirs_written <= DIRS_SINGLE ||
         (c->dirs_written - DIRS_SINGLE) % DIRS_PER_GROUP == 0)) {
        rc = sl_task_output_next(c->ctx, "directoriesToCrawl");
        if (rc != 0 && rc != SL_ENOENT) {
            return rc;
        }
    }
    rc = writer(c, "directoriesToCrawl", &c->dirs_connected, &w);
    if (rc != 0 || w == NULL) {
        return rc;
    }
    meta = json_pack("{s:s, s:I, s:O}",
                     "_recordid",
                     epath,
                     "depth",
                     (json_int_t)depth,
                     "ancestors",
                     chain);
    if (meta == NULL) {
        return SL_EINTERNAL;
    }
    rc = sl_bulk_writer_record_begin(w, meta);
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(w);
    }
    json_decref(meta);
    c->dirs_written++;
    sl_task_counter_add(c->ctx, "directories.records", 1);
    return rc;
}

/* ------------------------------------------------------------------------
 * Listing one directory.
 * --------------------------------------------------------------------- */

static json_t *
devino(const struct stat *st)
{
    char s[64];

    (void)snprintf(s,
                   sizeof(s),
                   "%llu:%llu",
                   (unsigned long long)st->st_dev,
                   (unsigned long long)st->st_ino);
    return json_string(s);
}

/* Is (dev, ino) of @st one of the strings of @chain? */
static int
in_chain(const json_t *chain, const struct stat *st)
{
    json_t *me = devino(st);
    const json_t *v = NULL;
    size_t i = 0;
    int found = 0;

    json_array_foreach(chain, i, v)
    {
        if (json_equal(v, me)) {
            found = 1;
            break;
        }
    }
    json_decref(me);
    return found;
}

/*
 * Does the link @name in directory @raw lead to rootFolder or below it?
 * (filters.linksOutsideRoot false: a followed link must not take the
 * crawl out of the tree the job names, to /etc/passwd say.)
 */
static int
link_inside_root(const struct crawl *c, const char *raw, const char *name)
{
    char *path = sl_asprintf("%s/%s", strcmp(raw, "/") == 0 ? "" : raw, name);
    char target[PATH_MAX];
    int inside = 0;

    if (realpath(path, target) != NULL) {
        inside = sl__bi_path_under(c->root, target);
    }
    if (!inside) {
        SL_INFO("fileCrawler: %s: the link leads out of rootFolder %s; "
                "skipped",
                path,
                c->root);
    }
    sl_free(path);
    return inside;
}

/* Report entry @name (raw) of directory @epath (escaped) to the run's
 * document history. */
static void
entry_doc(struct crawl *c,
          enum sl_jm_doc_state state,
          const char *epath,
          const char *name,
          const char *reason,
          const char *message)
{
    char *ename = sl_worker_path_escape(name);
    char *id = file_id(epath, ename);

    sl_task_doc(c->ctx, state, c->source, id, reason, message);
    sl_free(id);
    sl_free(ename);
}

/*
 * Handle entry @name of the open directory @dfd (raw path @raw, escaped
 * @epath, at @depth, ancestor chain @chain including the directory itself).
 * Problems with one entry are counted, not errors; the return value is an
 * output error only.
 */
static int
crawl_entry(struct crawl *c,
            int dfd,
            const char *raw,
            const char *epath,
            uint64_t depth,
            json_t *chain,
            const char *name)
{
    struct stat st;
    char *ename = NULL;
    char *sub = NULL;
    int rc = 0;

    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        SL_WARN("fileCrawler: %s/%s: %s", raw, name, sl_errno_str(errno));
        if (errno == ENOENT || errno == ENOTDIR) {
            sl_task_counter_add(c->ctx, "files.vanished", 1);
        } else {
            sl_task_counter_add(c->ctx, "files.unreadable", 1);
            sl_task_set_incomplete(
                c->ctx, "%s/%s: %s", raw, name, sl_errno_str(errno));
            entry_doc(c,
                      SL_JM_DOC_FAILED,
                      epath,
                      name,
                      "unreadable",
                      sl_errno_str(errno));
        }
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        if (!c->follow) {
            sl_task_counter_add(c->ctx, "files.skipped.symlink", 1);
            entry_doc(c,
                      SL_JM_DOC_SKIPPED,
                      epath,
                      name,
                      "filters.followSymbolicLinks",
                      NULL);
            return 0;
        }
        if (fstatat(dfd, name, &st, 0) != 0) {
            SL_WARN("fileCrawler: %s/%s: dangling link (%s)",
                    raw,
                    name,
                    sl_errno_str(errno));
            sl_task_counter_add(c->ctx, "files.vanished", 1);
            entry_doc(c,
                      SL_JM_DOC_SKIPPED,
                      epath,
                      name,
                      "danglingLink",
                      sl_errno_str(errno));
            return 0;
        }
        if (!c->outside && !link_inside_root(c, raw, name)) {
            sl_task_counter_add(c->ctx, "files.skipped.outsideRoot", 1);
            entry_doc(c,
                      SL_JM_DOC_SKIPPED,
                      epath,
                      name,
                      "filters.linksOutsideRoot",
                      NULL);
            return 0;
        }
    }
    ename = sl_worker_path_escape(name);
    if (S_ISDIR(st.st_mode)) {
        sub = sl_asprintf("%s/%s", strcmp(epath, "/") == 0 ? "" : epath, ename);
        if (in_chain(chain, &st)) {
            SL_WARN("fileCrawler: %s/%s: symbolic link loop", raw, name);
            sl_task_counter_add(c->ctx, "directories.loops", 1);
            sl_task_doc(
                c->ctx, SL_JM_DOC_SKIPPED, c->source, sub, "linkLoop", NULL);
        } else if (depth + 1 > c->max_depth) {
            sl_task_counter_add(c->ctx, "directories.tooDeep", 1);
            sl_task_doc(c->ctx,
                        SL_JM_DOC_SKIPPED,
                        c->source,
                        sub,
                        "filters.maxDepth",
                        NULL);
        } else if (!sl__bi_patterns_pass(&c->folders, sub)) {
            sl_task_counter_add(c->ctx, "directories.filtered", 1);
            sl_task_doc(c->ctx,
                        SL_JM_DOC_SKIPPED,
                        c->source,
                        sub,
                        "filters.folderPatterns",
                        NULL);
        } else if (c->entries < c->entries_budget) {
            struct pending *p = sl_calloc(1, sizeof(*p));

            p->raw =
                sl_asprintf("%s/%s", strcmp(raw, "/") == 0 ? "" : raw, name);
            p->epath = sub;
            sub = NULL;
            p->depth = depth + 1;
            p->chain = json_incref(chain);
            if (c->queue_tail != NULL) {
                c->queue_tail->next = p;
            } else {
                c->queue = p;
            }
            c->queue_tail = p;
        } else {
            rc = emit_dir(c, sub, depth + 1, chain);
        }
    } else if (!S_ISREG(st.st_mode)) {
        sl_task_counter_add(c->ctx, "files.skipped.special", 1);
        entry_doc(c, SL_JM_DOC_SKIPPED, epath, name, "notARegularFile", NULL);
    } else if (!sl__bi_patterns_pass(&c->files, ename)) {
        sl_task_counter_add(c->ctx, "files.filtered", 1);
        entry_doc(
            c, SL_JM_DOC_SKIPPED, epath, name, "filters.filePatterns", NULL);
    } else if ((uint64_t)st.st_size > c->max_file_size) {
        char size[64];

        (void)snprintf(size,
                       sizeof(size),
                       "%llu bytes, more than %llu",
                       (unsigned long long)st.st_size,
                       (unsigned long long)c->max_file_size);
        sl_task_counter_add(c->ctx, "files.skipped.size", 1);
        entry_doc(
            c, SL_JM_DOC_SKIPPED, epath, name, "filters.maxFileSize", size);
    } else {
        rc = add_file(c, epath, ename, &st);
    }
    sl_free(sub);
    sl_free(ename);
    return rc;
}

/*
 * Is rootFolder still the directory the crawl started in, the first
 * (dev, ino) of @chain?  Not when the volume it is on was unmounted (the
 * mount point is another directory), or it was removed or replaced.
 */
static int
root_intact(const struct crawl *c, const json_t *chain)
{
    struct stat st;
    json_t *me = NULL;
    int same = 0;

    if (c->root[0] == '\0' || json_array_size(chain) == 0 ||
        stat(c->root, &st) != 0) {
        return 0;
    }
    me = devino(&st);
    same = json_equal(json_array_get(chain, 0), me);
    json_decref(me);
    return same;
}

/*
 * Directory @raw below @ancestors (NULL for rootFolder itself) could not
 * be listed (errno).  One that is gone is counted (its files' documents
 * are to be deleted), unless rootFolder went with it: an unmounted volume
 * is not a tree whose files were all removed.  Anything else makes the
 * task incomplete, so the run deletes nothing of what it did not see.
 */
static void
dir_unreadable(struct crawl *c,
               const char *raw,
               const char *epath,
               const json_t *ancestors)
{
    int e = errno;

    SL_WARN("fileCrawler: directory %s: %s", raw, sl_errno_str(e));
    if ((e == ENOENT || e == ENOTDIR) && !root_intact(c, ancestors)) {
        sl_task_counter_add(c->ctx, "directories.unreadable", 1);
        sl_task_set_incomplete(c->ctx,
                               "directory %s: %s, and rootFolder %s is not "
                               "the directory the crawl started in (an "
                               "unmounted volume?)",
                               raw,
                               sl_errno_str(e),
                               c->root);
        return;
    }
    if (e == ENOENT || e == ENOTDIR) {
        sl_task_counter_add(c->ctx, "directories.vanished", 1);
        return;
    }
    sl_task_counter_add(c->ctx, "directories.unreadable", 1);
    sl_task_set_incomplete(c->ctx, "directory %s: %s", raw, sl_errno_str(e));
    sl_task_doc(c->ctx,
                SL_JM_DOC_FAILED,
                c->source,
                epath,
                "unreadable",
                sl_errno_str(e));
}

/*
 * List directory @raw (escaped @epath) at @depth whose ancestors are
 * @ancestors (may be NULL).  An unreadable directory is counted and
 * skipped (dir_unreadable); the return value is an output error only.
 */
static int
crawl_dir(struct crawl *c,
          const char *raw,
          const char *epath,
          uint64_t depth,
          const json_t *ancestors)
{
    struct dirent *de = NULL;
    struct stat st;
    json_t *chain = NULL;
    DIR *d = NULL;
    int fd = -1;
    int rc = 0;

    fd = open(raw, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        dir_unreadable(c, raw, epath, ancestors);
        goto out;
    }
    d = fdopendir(fd);
    if (d == NULL) {
        dir_unreadable(c, raw, epath, ancestors);
        goto out;
    }
    fd = -1;
    /* watched before it is listed: what changes after the listing is an
     * event */
    if (c->watch != NULL &&
        sl__bi_watch_dir(c->watch, raw, (size_t)c->max_watches) != 0) {
        sl_task_counter_add(c->ctx, "watch.unwatched", 1);
    }
    chain = json_is_array(ancestors) ? json_deep_copy(ancestors) : json_array();
    (void)json_array_append_new(chain, devino(&st));
    sl_task_counter_add(c->ctx, "directories.crawled", 1);
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                dir_unreadable(c, raw, epath, chain);
            }
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        c->entries++;
        rc = crawl_entry(c, dirfd(d), raw, epath, depth, chain, de->d_name);
        if (rc != 0 || sl_task_is_canceled(c->ctx)) {
            break;
        }
    }

out:
    json_decref(chain);
    if (d != NULL) {
        (void)closedir(d);
    }
    if (fd >= 0) {
        (void)close(fd);
    }
    return rc;
}

static void
pending_free(struct pending *p)
{
    sl_free(p->raw);
    sl_free(p->epath);
    json_decref(p->chain);
    sl_free(p);
}

/*
 * List the sub-directories queued by crawl_entry, breadth first, while the
 * task's entry budget lasts; then hand the rest out as follow-up tasks.
 * The records are the same as with one task per directory.
 */
static int
crawl_queue(struct crawl *c)
{
    struct pending *p = NULL;
    int rc = 0;

    while ((p = c->queue) != NULL) {
        c->queue = p->next;
        if (c->queue == NULL) {
            c->queue_tail = NULL;
        }
        if (rc == 0 && sl_task_is_canceled(c->ctx)) {
            rc = SL_ECANCELED;
        }
        if (rc == 0) {
            rc = c->entries < c->entries_budget
                     ? crawl_dir(c, p->raw, p->epath, p->depth, p->chain)
                     : emit_dir(c, p->epath, p->depth, p->chain);
        }
        pending_free(p);
    }
    return rc;
}

/* The first task: crawl rootFolder.  Returns an SL_WORKER_* result. */
static int
crawl_root(struct crawl *c)
{
    const char *root = sl_task_param_str(c->ctx, "rootFolder");
    struct stat st;
    char abs[PATH_MAX];
    char *epath = NULL;
    int rc = 0;

    if (root == NULL || root[0] == '\0') {
        sl_task_set_message(c->ctx, "parameter rootFolder is required");
        return SL_WORKER_FATAL;
    }
    if (realpath(root, abs) == NULL) {
        sl_task_set_message(
            c->ctx, "rootFolder %s: %s", root, sl_errno_str(errno));
        return SL_WORKER_FATAL;
    }
    if (stat(abs, &st) != 0) {
        sl_task_set_message(
            c->ctx, "rootFolder %s: %s", root, sl_errno_str(errno));
        return SL_WORKER_FATAL;
    }
    if (!S_ISDIR(st.st_mode)) {
        sl_task_set_message(c->ctx, "rootFolder %s is not a directory", root);
        return SL_WORKER_FATAL;
    }
    if (access(abs, R_OK | X_OK) != 0) {
        /* nothing could be listed: the run must not look like an empty
         * tree whose documents all go */
        sl_task_set_message(
            c->ctx, "rootFolder %s: %s", root, sl_errno_str(errno));
        return SL_WORKER_FATAL;
    }
    epath = sl_worker_path_escape(abs);
    rc = crawl_dir(c, abs, epath, 0, NULL);
    if (rc == 0 && c->entries == 0) {
        /* an unmounted volume leaves its empty mount point: a run that
         * saw nothing must not delete everything (purge the source to
         * empty the index) */
        sl_task_counter_add(c->ctx, "directories.empty", 1);
        sl_task_set_incomplete(c->ctx,
                               "rootFolder %s is empty (an unmounted "
                               "volume?): nothing is deleted",
                               root);
    }
    if (rc == 0) {
        rc = crawl_queue(c);
    }
    sl_free(epath);
    if (rc != 0) {
        sl_task_set_message(c->ctx, "output: %s", sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

/* ------------------------------------------------------------------------
 * The due pass (recheckDue): the files whose next check is due, instead
 * of the tree.
 * --------------------------------------------------------------------- */

struct due_ids {
    char **ids;
    size_t n;
};

static int
due_collect(void *ctx, const char *id, uint64_t due_ms)
{
    struct due_ids *d = ctx;

    (void)due_ms;
    d->ids[d->n++] = sl_strdup(id);
    return 0;
}

/* A due file that is gone, or no longer a file the crawl would list: its
 * next check moves on (as unchanged) so that it is not looked at on every
 * pass; the next full crawl deletes its document. */
static void
due_gone(struct crawl *c, struct sl_delta *delta, const char *id)
{
    sl_task_counter_add(c->ctx, "files.dueGone", 1);
    sl__bi_recheck_moved_on(c->ctx, &c->rk, delta, c->source, id);
}

/* One due file @id: stat it and pass it on as the tree crawl would. */
static int
due_file(struct crawl *c, struct sl_delta *delta, const char *id)
{
    char *raw = sl_worker_path_unescape(id);
    const char *slash = strrchr(id, '/');
    struct stat st;
    char *edir = NULL;
    int gone = 0;
    int rc = 0;

    if (slash == NULL || slash == id || !sl__bi_path_under(c->root, raw)) {
        sl_task_counter_add(c->ctx, "files.dueOutsideRoot", 1);
        sl_free(raw); /* another job's, on the same source: left alone */
        return 0;
    }
    if ((c->follow ? stat(raw, &st) : lstat(raw, &st)) != 0) {
        gone = errno == ENOENT || errno == ENOTDIR;
        if (!gone) {
            /* there, but not readable now (EACCES, EIO): due again next
             * pass, and the run deletes nothing anyway */
            sl_task_counter_add(c->ctx, "files.dueUnreadable", 1);
            sl_free(raw);
            return 0;
        }
    }
    if (gone || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size > c->max_file_size) {
        due_gone(c, delta, id);
        sl_free(raw);
        return 0;
    }
    edir = sl_strndup(id, (size_t)(slash - id));
    rc = add_file(c, edir, slash + 1, &st);
    sl_task_counter_add(c->ctx, "files.due", 1);
    sl_free(edir);
    sl_free(raw);
    return rc;
}

/* The first task of a due pass.  Returns an SL_WORKER_* result. */
static int
crawl_due(struct crawl *c)
{
    struct sl_delta *delta = sl_task_services(c->ctx)->delta;
    struct due_ids d;
    struct sl_err err;
    size_t found = 0;
    size_t i = 0;
    int rc = 0;

    if (!c->rk.on && sl__bi_recheck_init(c->ctx, &c->rk) != 0) {
        return SL_WORKER_FATAL;
    }
    if (delta == NULL || !c->rk.on || c->root[0] == '\0' ||
        access(c->root, R_OK | X_OK) != 0) {
        sl_task_set_message(c->ctx,
                            "recheckDue needs the delta service, the "
                            "parameter recheck and a readable rootFolder");
        return SL_WORKER_FATAL;
    }
    d.ids = sl_calloc(SL__BI_DUE_PER_TASK, sizeof(*d.ids));
    d.n = 0;
    sl_err_clear(&err);
    rc = sl_delta_recheck_due(delta,
                              c->source,
                              (uint64_t)sl__bi_task_now(c->ctx),
                              SL__BI_DUE_PER_TASK,
                              due_collect,
                              &d,
                              &found,
                              &err);
    for (i = 0; i < d.n; i++) {
        if (rc == 0) {
            rc = due_file(c, delta, d.ids[i]);
        }
        sl_free(d.ids[i]);
    }
    sl_free(d.ids);
    if (rc != 0) {
        sl_task_set_message(c->ctx,
                            "due pass: %s",
                            err.message[0] ? err.message : sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

/* ------------------------------------------------------------------------
 * Live changes (`watch: true` in a continuous run; watch.c).
 * --------------------------------------------------------------------- */

/* The run's watcher into c->watch; 1 when it was made now (after a start
 * of the run or of the server): then the pass lists the tree, which
 * watches it. */
static int
watch_init(struct crawl *c)
{
    const char *job = json_string_value(json_object_get(
        json_object_get(sl_task_json(c->ctx), "properties"), "jobName"));
    int made = 0;

    if (!sl__bi_json_true(sl_task_param(c->ctx, "watch")) ||
        sl__bi_pass_kind(c->ctx) == NULL || job == NULL || c->run_id == NULL ||
        c->root[0] == '\0') {
        return 0;
    }
    if (sl_task_services(c->ctx)->delta == NULL) {
        /* `sluice worker`: changes are followed inside `sluice serve` */
        sl_task_counter_add(c->ctx, "watch.offOutsideServer", 1);
        return 0;
    }
    if (sl_task_param_u64(c->ctx, "maxWatches", 0, &c->max_watches) != 0) {
        c->max_watches = 0;
    }
    /* only the first task of a pass makes it: a task of a run that ended
     * meanwhile must not leave one behind */
    c->watch =
        sl__bi_watch_get(job,
                         c->run_id,
                         c->source,
                         c->root,
                         sl_task_input_count(c->ctx, "directoriesToCrawl") == 0,
                         &made);
    return made;
}

/* Entry @raw (a changed file, a new or unwatched folder) as the listing of
 * its folder would see it: the filters apply, a folder is queued. */
static int
watch_entry(struct crawl *c, const char *raw)
{
    const char *slash = strrchr(raw, '/');
    char *dir = NULL;
    char *edir = NULL;
    json_t *chain = NULL;
    uint64_t depth = 0;
    const char *p = NULL;
    int fd = -1;
    int rc = 0;

    if (slash == NULL || slash == raw || !sl__bi_path_under(c->root, raw) ||
        strcmp(raw, c->root) == 0) {
        return 0;
    }
    dir = sl_strndup(raw, (size_t)(slash - raw));
    for (p = dir + strlen(c->root); *p != '\0'; p++) {
        depth += *p == '/';
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        edir = sl_worker_path_escape(dir);
        chain = json_array();
        rc = crawl_entry(c, fd, dir, edir, depth, chain, slash + 1);
        json_decref(chain);
        sl_free(edir);
        (void)close(fd);
    }
    sl_free(dir);
    return rc;
}

/* Folder or file @raw is gone: its documents and those under it go. */
static int
watch_gone(struct crawl *c, const char *raw)
{
    struct sl_delta *delta = sl_task_services(c->ctx)->delta;
    char *id = NULL;
    uint64_t seq = 0;
    uint64_t removed = 0;
    struct sl_err err;
    int rc = 0;

    if (delta == NULL || !sl__bi_path_under(c->root, raw)) {
        return 0;
    }
    id = sl_worker_path_escape(raw);
    sl_err_clear(&err);
    rc = sl__bi_delta_run(c->ctx, delta, c->source, c->run_id, &seq, &err);
    if (rc == 0) {
        rc = sl__bi_push_gone(c->ctx, c->source, id, seq, &removed);
    }
    sl_task_counter_add(c->ctx, "watch.gone", 1);
    sl_free(id);
    return rc == SL_ENOTREADY ? 0 : rc;
}

/* Is a folder above @path in @unwatched? */
static int
under_unwatched(const json_t *unwatched, const char *path)
{
    char *p = sl_strdup(path);
    char *slash = NULL;
    int found = 0;

    while (!found && (slash = strrchr(p, '/')) != NULL && slash != p) {
        *slash = '\0';
        found = json_object_get(unwatched, p) != NULL;
    }
    sl_free(p);
    return found;
}

/* Take the watcher's changes: in a due pass every change, in a pass that
 * lists the tree (@lists) only what is gone.  1 when the tree must be
 * listed, 0, or an SL_E* code. */
static int
watch_pass(struct crawl *c, int lists)
{
    json_t *changes = NULL;
    json_t *unwatched = NULL;
    const char *path = NULL;
    json_t *v = NULL;
    int rescan = sl__bi_watch_take(c->watch, &changes, &unwatched);
    int rc = 0;

    lists = lists || rescan;
    json_object_foreach(changes, path, v)
    {
        const char *kind = json_string_value(v);

        if (strcmp(kind, "gone") == 0 || strcmp(kind, "renew") == 0) {
            rc = watch_gone(c, path);
        }
        if (rc == 0 && strcmp(kind, "gone") != 0 && !lists) {
            sl_task_counter_add(c->ctx, "watch.changes", 1);
            rc = watch_entry(c, path);
        }
        if (rc != 0) {
            break;
        }
    }
    json_object_foreach(lists || rc != 0 ? NULL : unwatched, path, v)
    {
        if (under_unwatched(unwatched, path)) {
            continue; /* listed with the folder above it */
        }
        sl_task_counter_add(c->ctx, "watch.rescanned", 1);
        rc = watch_entry(c, path); /* listed again: it cannot be watched */
        if (rc != 0) {
            break;
        }
    }
    if (rc == 0) {
        rc = crawl_queue(c);
    }
    json_decref(changes);
    json_decref(unwatched);
    return rc != 0 ? rc : rescan;
}

/* The first task of a pass of a continuous run.  An SL_WORKER_* result. */
static int
crawl_pass(struct crawl *c, int fresh)
{
    int lists = fresh || strcmp(sl__bi_pass_kind(c->ctx), "reseed") == 0;
    int rc = 0;

    if (c->watch != NULL) {
        rc = watch_pass(c, lists);
        if (rc < 0) {
            sl__bi_watch_lost(c->watch); /* the retry lists the tree */
            sl_task_set_message(c->ctx, "watch: %s", sl_strerror(rc));
            return SL_WORKER_RECOVERABLE;
        }
        if (rc == 1 || fresh) {
            sl_task_counter_add(c->ctx, "watch.treeListed", 1);
        }
        lists = lists || rc == 1;
    }
    rc = lists ? crawl_root(c) : crawl_due(c);
    if (c->watch != NULL && rc != SL_WORKER_OK) {
        sl__bi_watch_lost(c->watch); /* the changes taken: the retry lists */
    } else if (c->watch != NULL && lists) {
        sl__bi_watch_listed(c->watch); /* its follow-ups list the rest */
    }
    return rc;
}

/* A follow-up task: crawl one directory record of the input (a callback of
 * sl_task_input_each).  Returns an SL_WORKER_* result. */
static int
crawl_input(void *arg, json_t *meta)
{
    struct crawl *c = arg;
    uint64_t depth = 0;
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    char *raw = NULL;
    int rc = 0;

    if (id == NULL) {
        return SL_WORKER_OK;
    }
    if (sl_worker_json_u64(json_object_get(meta, "depth"), 0, &depth) != 0) {
        depth = 0;
    }
    sl_test_delay("fileCrawler.directory"); /* a volume may go meanwhile */
    raw = sl_worker_path_unescape(id);
    rc = crawl_dir(c, raw, id, depth, json_object_get(meta, "ancestors"));
    if (rc == 0) {
        rc = crawl_queue(c);
    }
    sl_free(raw);
    if (rc != 0) {
        sl_task_set_message(c->ctx, "output: %s", sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

static int
crawler_perform(struct sl_task_ctx *ctx)
{
    struct crawl c;
    size_t n = sl_task_input_count(ctx, "directoriesToCrawl");
    int res = SL_WORKER_OK;
    int fresh = 0;

    if (crawl_init(ctx, &c) != 0) {
        sl__bi_patterns_free(&c.files);
        sl__bi_patterns_free(&c.folders);
        precheck_free(&c);
        return SL_WORKER_FATAL;
    }
    fresh = watch_init(&c);
    if (n == 0 && sl__bi_pass_kind(ctx) != NULL) {
        res = crawl_pass(&c, fresh); /* a continuous run: the pass says */
    } else if (n == 0 && sl__bi_json_true(sl_task_param(ctx, "recheckDue"))) {
        res = crawl_due(&c);
    } else if (n == 0) {
        res = crawl_root(&c);
    } else {
        res = sl_task_input_each(ctx, "directoriesToCrawl", crawl_input, &c);
    }
    if (res == SL_WORKER_OK && c.nbatch > 0) {
        int rc = precheck_flush(&c); /* the files left by the last check */

        if (rc != 0) {
            sl_task_set_message(ctx, "output: %s", sl_strerror(rc));
            res = SL_WORKER_RECOVERABLE;
        }
    }
    while (c.queue != NULL) { /* left by an error */
        struct pending *p = c.queue;

        c.queue = p->next;
        pending_free(p);
    }
    sl__bi_patterns_free(&c.files);
    sl__bi_patterns_free(&c.folders);
    precheck_free(&c);
    sl__bi_watch_put(c.watch);
    return res;
}

const struct sl_worker_type sl_worker_fileCrawler = {
    SL_WORKER_ABI_VERSION,
    "fileCrawler",
    "{\"name\": \"fileCrawler\", \"taskGenerator\": \"runOnceTrigger\","
    " \"parameters\": [{\"name\": \"dataSource\"}," SL__BI_DECL_MAPPING ","
    "  {\"name\": \"rootFolder\"},"
    "  {\"name\": \"filters\", \"optional\": true, \"type\": \"object\","
    "   \"members\": [{\"name\": \"maxFileSize\", \"type\": \"integer\"},"
    "    {\"name\": \"maxFolderDepth\", \"type\": \"integer\"},"
    "    {\"name\": \"followSymbolicLinks\", \"type\": \"boolean\"},"
    "    {\"name\": \"linksOutsideRoot\", \"type\": \"boolean\"},"
    "    {\"name\": \"filePatterns\", \"type\": \"object\","
    "     \"members\": " SL__BI_DECL_PATTERNS "},"
    "    {\"name\": \"folderPatterns\", \"type\": \"object\","
    "     \"members\": " SL__BI_DECL_PATTERNS "}]},"
    "  {\"name\": \"maxFilesPerBulk\", \"optional\": true,"
    "   \"type\": \"integer\", \"minimum\": 1},"
    "  {\"name\": \"deltaPrecheck\", \"optional\": true, \"type\": "
    "\"boolean\"},"
    "  {\"name\": \"deltaImportStrategy\", \"optional\": true,"
    "   \"values\": [\"disabled\", \"initial\", \"additive\", \"full\"],"
    "   \"default\": \"full\", \"sameForJob\": true},"
    "  {\"name\": \"entriesPerTask\", \"optional\": true, \"type\": "
    "\"integer\"}," SL__BI_DECL_RECHECK ","
    "  {\"name\": \"recheckDue\", \"optional\": true, \"type\": "
    "\"boolean\"},"
    "  {\"name\": \"watch\", \"optional\": true, \"type\": \"boolean\"},"
    "  {\"name\": \"maxWatches\", \"optional\": true, \"type\": "
    "\"integer\", \"minimum\": 1}],"
    " \"input\": [{\"name\": \"directoriesToCrawl\","
    "              \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"directoriesToCrawl\","
    "               \"type\": \"recordBulks\","
    "               \"modes\": [\"multiple\", \"optional\"]},"
    "              {\"name\": \"filesToCrawl\", \"type\": \"recordBulks\","
    "               \"modes\": [\"multiple\", \"optional\"]}]}",
    crawler_perform,
    NULL,
    NULL,
};
