/*
 * updatePusher (SMILA's UpdatePusher, docs/workers.md): pushes every record of
 * `recordsToPush` (attachments streamed) into the processing job `jobToPushTo`
 * of this server through the bulkbuilder, or to `remote` endpoints over HTTP
 * with failover, and records it as updated in the delta service only after the
 * push was accepted.  A record already pushed in this job run (a retried
 * task) is not pushed again.  In the completion phase of a `full` import,
 * task k of n (n = delta shards) sends deletes for the records of shard k
 * that this run did not visit, then removes their entries.
 * A record with a head (docs/bulk-format.md) is pushed without decoding
 * its metadata: the head has what the delta service needs, and the text
 * goes to the bulkbuilder as stored.
 * With `additive` and `full`, an element of a changed compound is checked
 * against the delta service first and pushed only when new or changed
 * (element_check.c); a compound is marked updated only after its
 * elements, so an up-to-date compound never stands for elements that were
 * not pushed.
 * See docs/workers.md "updatePusher".
 */
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin/builtin_int.h"
#include "bulkbuilder/bulkbuilder.h"
#include "deltaservice/deltaservice.h"

#define MARK_BATCH 500u
#define COPY_BUF   (64u * 1024u)
#define MAX_ATTACH 64u

/* Delta shards of the server, for the number of completion tasks
 * (pusher_start, pusher_partitions). */
static atomic_uint delta_shards;

struct spool {
    char name[SL_ATTACHMENT_NAME_MAX + 1];
    int fd;
    uint64_t size;
    uint64_t pos;
};

/* A record being pushed: its decoded metadata, or its head and its
 * metadata as stored (text, len: borrowed from the reader). */
struct in_rec {
    json_t *meta;
    const struct sl_record_head *head;
    const char *text;
    size_t len;
};

struct push {
    struct sl_task_ctx *ctx;
    struct sl_bb *bb;
    struct sl_delta *delta;
    enum sl_delta_strategy strategy;
    const char *job;      /* jobToPushTo, or NULL */
    const json_t *remote; /* {"endpoints": [...], "urlPath": ...} or NULL */
    size_t endpoint;      /* current endpoint (failover) */
    CURL *h;
    const char *run_id;
    const char *param_source;
    struct sl_bulk_writer *pushed; /* output pushedRecords, or NULL */
    char *buf;
    /* records to mark updated, their strings held by metas or heads */
    json_t *metas[MARK_BATCH];
    struct sl_record_head *heads[MARK_BATCH];
    struct sl_delta_rec recs[MARK_BATCH];
    size_t n;
    char *source; /* of the mark batch and of seq */
    uint64_t seq;
    struct spool att[MAX_ATTACH];
    size_t natt;
    struct sl__bi_elem_check *elems; /* element checks, or NULL */
    size_t bulk;                     /* input bulk being pushed */
    size_t idx;                      /* its record being pushed */
    int verdict; /* of its element check (SL_DELTA_*), or 0 */
    int known;   /* its source has a delta entry for it: an update */
    /* the pushed top-level compound whose mark waits until its elements
     * (the records that follow it) are pushed and marked */
    json_t *held_meta;
    struct sl_record_head *held_head;
    struct sl_delta_rec held_rec;
    char *held_source;
    int held;
};

/* ------------------------------------------------------------------------
 * Delta bookkeeping.
 * --------------------------------------------------------------------- */

static int
use_source(struct push *p, const char *source, struct sl_err *err)
{
    if (p->source != NULL && strcmp(p->source, source) == 0) {
        return 0;
    }
    sl_free(p->source);
    p->source = sl_asprintf("%s", source);
    return sl__bi_delta_run(p->ctx, p->delta, source, p->run_id, &p->seq, err);
}

static int
flush_marks(struct push *p)
{
    struct sl_err err;
    size_t i = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (p->n > 0) {
        rc = sl_delta_mark_updated(
            p->delta, p->source, p->seq, p->recs, p->n, &err);
        if (rc != 0) {
            sl_task_note_error(p->ctx, rc);
            sl_task_set_message(p->ctx, "delta service: %s", err.message);
        }
    }
    for (i = 0; i < p->n; i++) {
        json_decref(p->metas[i]);
        sl_free(p->heads[i]);
    }
    p->n = 0;
    return rc;
}

/* Add a pushed record to the mark batch (@meta: a new reference or NULL;
 * @head: taken, or NULL; @dr borrows from them), flushed when full.  The
 * batch's source is p->source. */
static int
mark_add(struct push *p,
         json_t *meta,
         struct sl_record_head *head,
         const struct sl_delta_rec *dr)
{
    p->metas[p->n] = meta;
    p->heads[p->n] = head;
    p->recs[p->n] = *dr;
    p->n++;
    return p->n == MARK_BATCH ? flush_marks(p) : 0;
}

/* Forget the held compound without marking it (its task failed: the
 * retry pushes it again). */
static void
held_drop(struct push *p)
{
    if (p->held) {
        json_decref(p->held_meta);
        sl_free(p->held_head);
        SL_FREE(p->held_source);
        p->held_meta = NULL;
        p->held_head = NULL;
        p->held = 0;
    }
}

/*
 * Mark the held compound after its elements: they come right after it
 * and share its shard, so its entry is never committed before theirs.
 * Were it committed first, a crash and a failed run would leave it up
 * to date, and the next run would keep the old entries of its unpushed
 * elements (the check of an unchanged compound marks them visited).
 */
static int
held_release(struct push *p)
{
    struct sl_err err;
    int rc = 0;

    if (!p->held) {
        return 0;
    }
    sl_err_clear(&err);
    if (p->n > 0 && strcmp(p->source, p->held_source) != 0) {
        rc = flush_marks(p);
    }
    if (rc == 0) {
        rc = use_source(p, p->held_source, &err);
        if (rc != 0) {
            sl_task_note_error(p->ctx, rc);
            sl_task_set_message(p->ctx, "delta service: %s", err.message);
        }
    }
    if (rc == 0) {
        rc = mark_add(p, p->held_meta, p->held_head, &p->held_rec);
        p->held_meta = NULL;
        p->held_head = NULL;
    }
    held_drop(p);
    return rc;
}

/* ------------------------------------------------------------------------
 * Remote pushes (libcurl).
 * --------------------------------------------------------------------- */

static char *
endpoint_url(const struct push *p, size_t i)
{
    const char *ep = json_string_value(
        json_array_get(json_object_get(p->remote, "endpoints"), i));
    const char *path = json_string_value(json_object_get(p->remote, "urlPath"));
    size_t eplen = strlen(ep);

    while (eplen > 0 && ep[eplen - 1] == '/') {
        eplen--;
    }
    while (*path == '/') {
        path++;
    }
    return sl_asprintf("%s%.*s/%s",
                       strstr(ep, "://") != NULL ? "" : "http://",
                       (int)eplen,
                       ep,
                       path);
}

static size_t
discard_body(char *data, size_t size, size_t n, void *arg)
{
    (void)data;
    (void)arg;
    return size * n;
}

static size_t
spool_read(char *buf, size_t size, size_t n, void *arg)
{
    struct spool *s = arg;
    size_t want = size * n;
    ssize_t got = 0;

    if (s->pos >= s->size) {
        return 0;
    }
    if (want > s->size - s->pos) {
        want = (size_t)(s->size - s->pos);
    }
    got = pread(s->fd, buf, want, (off_t)s->pos);
    if (got <= 0) {
        return CURL_READFUNC_ABORT;
    }
    s->pos += (uint64_t)got;
    return (size_t)got;
}

static int
spool_seek(void *arg, curl_off_t off, int origin)
{
    struct spool *s = arg;

    if (origin != SEEK_SET || off < 0) {
        return CURL_SEEKFUNC_CANTSEEK;
    }
    s->pos = (uint64_t)off;
    return CURL_SEEKFUNC_OK;
}

/*
 * One request to the current endpoint, failing over to the next ones.
 * @meta_text: JSON body (POST) or NULL with @delete_id for a DELETE.
 * Returns 0 (accepted), SL_EINVAL (the target refused the record: 4xx),
 * SL_EUPSTREAM (no endpoint accepted it; the task message says why).
 */
static int
remote_send(struct push *p, const char *meta_text, const char *delete_id)
{
    size_t n = json_array_size(json_object_get(p->remote, "endpoints"));
    size_t tried = 0;
    char errbuf[CURL_ERROR_SIZE];

    for (tried = 0; tried < n; tried++) {
        char *url = endpoint_url(p, p->endpoint);
        curl_mime *mime = NULL;
        struct curl_slist *hdr = NULL;
        long status = 0;
        CURLcode cc = CURLE_OK;
        size_t i = 0;

        curl_easy_reset(p->h);
        errbuf[0] = '\0';
        if (json_is_string(json_object_get(p->remote, "token"))) {
            char *auth = sl_asprintf(
                "Authorization: Bearer %s",
                json_string_value(json_object_get(p->remote, "token")));

            hdr = curl_slist_append(hdr, auth);
            sl_free(auth);
        }
        (void)curl_easy_setopt(p->h, CURLOPT_ERRORBUFFER, errbuf);
        (void)curl_easy_setopt(p->h, CURLOPT_NOSIGNAL, 1L);
        (void)curl_easy_setopt(p->h, CURLOPT_CONNECTTIMEOUT, 10L);
        (void)curl_easy_setopt(p->h, CURLOPT_TIMEOUT, 300L);
        (void)curl_easy_setopt(p->h, CURLOPT_WRITEFUNCTION, discard_body);
        (void)curl_easy_setopt(p->h, CURLOPT_HTTPHEADER, hdr);
        if (delete_id != NULL) {
            char *esc = curl_easy_escape(p->h, delete_id, 0);
            char *src = curl_easy_escape(p->h, p->param_source, 0);
            char *full =
                sl_asprintf("%s?_recordid=%s&_source=%s", url, esc, src);

            curl_free(esc);
            curl_free(src);
            (void)curl_easy_setopt(p->h, CURLOPT_URL, full);
            (void)curl_easy_setopt(p->h, CURLOPT_CUSTOMREQUEST, "DELETE");
            cc = curl_easy_perform(p->h);
            sl_free(full);
        } else {
            (void)curl_easy_setopt(p->h, CURLOPT_URL, url);
            if (p->natt == 0) {
                hdr = curl_slist_append(hdr, "Content-Type: application/json");
                (void)curl_easy_setopt(p->h, CURLOPT_HTTPHEADER, hdr);
                (void)curl_easy_setopt(p->h, CURLOPT_POSTFIELDS, meta_text);
            } else {
                curl_mimepart *part = NULL;

                mime = curl_mime_init(p->h);
                part = curl_mime_addpart(mime);
                (void)curl_mime_name(part, "record");
                (void)curl_mime_type(part, "application/json");
                (void)curl_mime_data(part, meta_text, CURL_ZERO_TERMINATED);
                for (i = 0; i < p->natt; i++) {
                    p->att[i].pos = 0;
                    part = curl_mime_addpart(mime);
                    (void)curl_mime_name(part, p->att[i].name);
                    (void)curl_mime_filename(part, p->att[i].name);
                    (void)curl_mime_type(part, "application/octet-stream");
                    (void)curl_mime_data_cb(part,
                                            (curl_off_t)p->att[i].size,
                                            spool_read,
                                            spool_seek,
                                            NULL,
                                            &p->att[i]);
                }
                (void)curl_easy_setopt(p->h, CURLOPT_MIMEPOST, mime);
            }
            cc = curl_easy_perform(p->h);
        }
        if (cc == CURLE_OK) {
            (void)curl_easy_getinfo(p->h, CURLINFO_RESPONSE_CODE, &status);
        }
        curl_mime_free(mime);
        curl_slist_free_all(hdr);
        if (cc == CURLE_OK && status >= 200 && status < 300) {
            sl_free(url);
            return 0;
        }
        if (cc == CURLE_OK && status >= 400 && status < 500 && status != 404 &&
            status != 408 && status != 429) {
            SL_WARN("updatePusher: %s refused a record: HTTP %ld", url, status);
            sl_free(url);
            return SL_EINVAL;
        }
        SL_WARN("updatePusher: %s: %s",
                url,
                cc != CURLE_OK ? (errbuf[0] ? errbuf : curl_easy_strerror(cc))
                               : "HTTP error");
        sl_task_set_message(p->ctx,
                            "remote push to %s failed: %s (HTTP %ld)",
                            url,
                            cc != CURLE_OK ? curl_easy_strerror(cc) : "status",
                            status);
        sl_task_counter_add(p->ctx, "remote.failovers", 1);
        sl_free(url);
        p->endpoint = (p->endpoint + 1) % n;
    }
    return SL_EUPSTREAM;
}

static void
spool_clear(struct push *p)
{
    size_t i = 0;

    for (i = 0; i < p->natt; i++) {
        (void)close(p->att[i].fd);
    }
    p->natt = 0;
}

/* Copy the attachments of the current record into unlinked temp files. */
static int
spool_attachments(struct push *p, struct sl_bulk_reader *r, struct sl_err *err)
{
    const char *tmpdir = getenv("TMPDIR");
    const char *name = NULL;
    uint64_t size = 0;
    int rc = 0;

    while ((rc = sl_bulk_reader_attachment_next(r, &name, &size, err)) == 1) {
        struct spool *s = NULL;
        char *path = NULL;
        size_t n = 0;

        if (p->natt == MAX_ATTACH) {
            return sl_err_set(
                err, SL_ETOOLARGE, "attachments", "more than %u", MAX_ATTACH);
        }
        s = &p->att[p->natt];
        path = sl_asprintf("%s/sluice-push-XXXXXX",
                           tmpdir != NULL && tmpdir[0] ? tmpdir : "/tmp");
        s->fd = mkstemp(path);
        if (s->fd < 0) {
            rc = sl_err_set(err,
                            sl_err_from_errno(errno),
                            "spool",
                            "%s: %s",
                            path,
                            sl_errno_str(errno));
            sl_free(path);
            return rc;
        }
        (void)unlink(path);
        sl_free(path);
        p->natt++;
        (void)snprintf(s->name, sizeof(s->name), "%s", name);
        s->size = size;
        while ((rc = sl_bulk_reader_attachment_read(
                    r, p->buf, COPY_BUF, &n, err)) == 0 &&
               n > 0) {
            if (write(s->fd, p->buf, n) != (ssize_t)n) {
                return sl_err_set(
                    err, SL_EIO, "spool", "write: %s", sl_errno_str(errno));
            }
        }
        if (rc != 0) {
            return rc;
        }
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Local pushes (bulkbuilder).
 * --------------------------------------------------------------------- */

static int
local_push(struct push *p,
           const struct in_rec *in,
           struct sl_bulk_reader *r,
           struct sl_err *err)
{
    struct sl_bb_rec *rec = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    int rc = in->meta != NULL
                 ? sl_bb_record_begin(p->bb, p->job, in->meta, 0, &rec, err)
                 : sl_bb_record_begin_text(
                       p->bb, p->job, in->text, in->len, in->head, &rec, err);

    if (rc != 0) {
        return rc;
    }
    while ((rc = sl_bulk_reader_attachment_next(r, &name, &size, err)) == 1) {
        size_t n = 0;

        rc = sl_bb_attachment_begin(rec, name, size, err);
        while (rc == 0 &&
               (rc = sl_bulk_reader_attachment_read(
                    r, p->buf, COPY_BUF, &n, err)) == 0 &&
               n > 0) {
            rc = sl_bb_attachment_write(rec, p->buf, n, err);
        }
        if (rc != 0) {
            break;
        }
    }
    if (rc != 0) {
        sl_bb_record_abort(rec);
        return rc;
    }
    return sl_bb_record_end(rec, err);
}

/* ------------------------------------------------------------------------
 * Records.
 * --------------------------------------------------------------------- */

/* Skip record @r, not pushed, and count it as @counter. */
static int
skip_record(struct push *p, struct sl_bulk_reader *r, const char *counter)
{
    struct sl_err err;

    sl_err_clear(&err);
    sl_task_counter_add(p->ctx, counter, 1);
    if (sl_bulk_reader_skip_attachments(r, NULL, &err) != 0) {
        sl_task_set_message(p->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    return SL_WORKER_OK;
}

/*
 * Whether record @in (delta fields @dr, source @source) is pushed: *go is
 * 0 for an element the delta service finds up to date (it marked it
 * visited) and for a record pushed in this run already (a retried task),
 * both skipped and counted.  First marks the held compound when @in is
 * not one of its elements.  Returns an SL_WORKER_* result.
 */
static int
gate(struct push *p,
     const struct in_rec *in,
     struct sl_bulk_reader *r,
     const struct sl_delta_rec *dr,
     const char *source,
     int *go)
{
    struct sl_err err;
    int verdict = 0;
    int pushed = 0;
    int rc = 0;

    sl_err_clear(&err);
    *go = 0;
    p->verdict = 0;
    p->known = -1; /* not looked up */
    if (p->held && (dr->compound_id == NULL ||
                    strcmp(dr->compound_id, p->held_rec.id) != 0)) {
        if (held_release(p) != 0) {
            return SL_WORKER_RECOVERABLE;
        }
    }
    if (p->elems != NULL) {
        rc = sl__bi_elem_check_verdict(
            p->elems, p->bulk, p->idx, in->meta, in->head, &verdict);
        if (rc != 0) {
            return rc == SL_ECORRUPT || rc == SL_ETRUNCATED
                       ? SL_WORKER_FATAL
                       : SL_WORKER_RECOVERABLE;
        }
        if (verdict == SL_DELTA_UPTODATE) {
            return skip_record(p, r, "elements.uptodate");
        }
        p->verdict = verdict;
    }
    if (source != NULL) { /* tracked */
        if (p->n > 0 && strcmp(source, p->source) != 0 && flush_marks(p) != 0) {
            return SL_WORKER_RECOVERABLE;
        }
        rc = use_source(p, source, &err);
        if (rc == 0) {
            rc = sl_delta_was_pushed_in_run(
                p->delta, source, p->seq, dr, &pushed, &p->known, &err);
        }
        if (rc != 0) {
            sl_task_note_error(p->ctx, rc);
            sl_task_set_message(p->ctx, "delta service: %s", err.message);
            return SL_WORKER_RECOVERABLE;
        }
        if (pushed) {
            return skip_record(p, r, "records.duplicate");
        }
    }
    *go = 1;
    return SL_WORKER_OK;
}

/* Send record @in to jobToPushTo or remote; 0 or SL_E* (@err). */
static int
send_record(struct push *p,
            const struct in_rec *in,
            struct sl_bulk_reader *r,
            struct sl_err *err)
{
    char *text = NULL;
    int rc = 0;

    if (p->job != NULL) {
        return local_push(p, in, r, err);
    }
    rc = spool_attachments(p, r, err);
    if (rc == 0) {
        if (in->meta != NULL) {
            text = json_dumps(in->meta, JSON_COMPACT);
        } else {
            text = sl_malloc(in->len + 1);
            memcpy(text, in->text, in->len);
            text[in->len] = '\0';
        }
        rc = remote_send(p, text, NULL);
        sl_free(text);
    }
    spool_clear(p);
    return rc;
}

/* After the push of @in: mark it updated (in the batch), or hold it when
 * it is a top-level compound, whose elements follow. */
static int
pushed_mark(struct push *p, const struct in_rec *in)
{
    json_t *meta = json_incref(in->meta);
    struct sl_record_head *head = NULL;
    struct sl_delta_rec dr;

    if (in->meta == NULL) { /* the head's strings, kept till the mark */
        head = sl_record_head_dup(in->head);
    }
    (void)sl__bi_delta_fields(in->meta, head, &dr);
    if (dr.is_compound && dr.compound_id == NULL) {
        SL_ASSERT(!p->held);
        p->held_meta = meta;
        p->held_head = head;
        p->held_rec = dr;
        p->held_source = sl_strdup(p->source);
        p->held = 1;
        return 0;
    }
    return mark_add(p, meta, head, &dr);
}

/* Is pushing record @in an update of a document the delta service knows
 * (looked up by gate), not a new one?  Untracked (no delta writes, no
 * hash): as the deltaChecker marked it. */
static int
is_update(const struct push *p, const struct in_rec *in)
{
    if (p->verdict == SL_DELTA_CHANGED) {
        return 1;
    }
    if (p->known >= 0) {
        return p->known;
    }
    return in->meta != NULL &&
           json_is_true(json_object_get(in->meta, "_update"));
}

/* Push one record; returns an SL_WORKER_* result. */
static int
push_record(struct push *p, const struct in_rec *in, struct sl_bulk_reader *r)
{
    struct sl_delta_rec dr;
    struct sl_err err;
    const char *source = sl__bi_delta_fields(in->meta, in->head, &dr);
    const char *hash = dr.hash;
    const char *doc_source = NULL;
    int go = 0;
    int res = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (source == NULL) {
        source = p->param_source;
    }
    doc_source = source;
    if (!sl_delta_strategy_writes(p->strategy) || p->delta == NULL ||
        hash == NULL || hash[0] == '\0' || dr.id == NULL) {
        source = NULL; /* not tracked */
    }
    res = gate(p, in, r, &dr, source, &go);
    if (res != SL_WORKER_OK || !go) {
        return res;
    }
    rc = send_record(p, in, r, &err);
    if (rc == SL_EINVAL) {
        SL_WARN("updatePusher: %s: refused: %s", dr.id, err.message);
        sl_task_counter_add(p->ctx, "records.invalid", 1);
        sl_task_doc(p->ctx,
                    SL_JM_DOC_FAILED,
                    doc_source,
                    dr.id,
                    "invalid",
                    err.message);
        return SL_WORKER_OK;
    }
    if (rc == SL_ECORRUPT || rc == SL_ETRUNCATED) {
        sl_task_set_message(p->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    if (rc != 0) {
        sl_task_note_error(p->ctx, rc); /* a full journal disk */
        if (err.message[0] != '\0') {
            sl_task_set_message(p->ctx,
                                "push to %s: %s",
                                p->job != NULL ? p->job : "remote",
                                err.message);
        }
        return SL_WORKER_RECOVERABLE;
    }
    sl_task_counter_add(p->ctx, "records.pushed", 1);
    sl_task_doc(p->ctx,
                is_update(p, in) ? SL_JM_DOC_CHANGED : SL_JM_DOC_NEW,
                doc_source,
                dr.id,
                NULL,
                NULL);
    if (p->pushed != NULL &&
        (in->meta != NULL ? sl_bulk_writer_record_begin(p->pushed, in->meta)
                          : sl_bulk_writer_record_begin_text(
                                p->pushed, in->text, in->len, in->head)) == 0) {
        (void)sl_bulk_writer_record_end(p->pushed);
    }
    if (source != NULL && pushed_mark(p, in) != 0) {
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

static int
push_inputs(struct push *p)
{
    size_t n = sl_task_input_count(p->ctx, "recordsToPush");
    size_t b = 0;
    int res = SL_WORKER_OK;

    for (b = 0; b < n && res == SL_WORKER_OK; b++) {
        struct sl_bulk_reader *r = NULL;
        struct sl_err err;
        struct in_rec in;
        int rc = sl_task_input_open(p->ctx, "recordsToPush", b, &r);

        p->bulk = b;
        p->idx = 0;

        sl_err_clear(&err);
        if (rc != 0) {
            sl_task_set_message(p->ctx, "input %zu: %s", b, sl_strerror(rc));
            return SL_WORKER_RECOVERABLE;
        }
        memset(&in, 0, sizeof(in));
        while (res == SL_WORKER_OK && (rc = sl_bulk_reader_next_raw(
                                           r, &in.text, &in.len, &err)) == 1) {
            /* decoded only without a usable head: _version and _visited
             * are the bulkbuilder's to set and drop */
            in.meta = NULL;
            if (!sl_bulk_reader_head(r, &in.head) ||
                (in.head->flags & (SL_HEAD_VERSION | SL_HEAD_VISITED)) != 0) {
                rc = sl_bulk_reader_meta(r, &in.meta, &err);
                if (rc != 0) {
                    break;
                }
            }
            if (sl_task_is_canceled(p->ctx)) {
                res = SL_WORKER_RECOVERABLE;
            } else {
                res = push_record(p, &in, r);
            }
            json_decref(in.meta);
            p->idx++;
        }
        sl__bi_elem_check_end(p->elems);
        sl_task_input_close(p->ctx, r);
        if (res == SL_WORKER_OK && rc != 0) {
            sl_task_set_message(p->ctx, "input %zu: %s", b, err.message);
            res = SL_WORKER_FATAL;
        }
    }
    if (res == SL_WORKER_OK && (held_release(p) != 0 || flush_marks(p) != 0)) {
        res = SL_WORKER_RECOVERABLE;
    }
    return res;
}

/* ------------------------------------------------------------------------
 * Delta-delete (completion tasks).
 * --------------------------------------------------------------------- */

static int
send_deletes(void *arg, const struct sl_delta_obsolete *e, size_t n)
{
    struct push *p = arg;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        struct sl_err err;
        int rc = 0;

        sl_err_clear(&err);
        if (sl_task_is_canceled(p->ctx)) {
            return SL_ECANCELED;
        }
        if (p->job != NULL) {
            /* from this source: the index keeps a document another source
             * still holds */
            json_t *meta = json_pack(
                "{s:s, s:s}", "_recordid", e[i].id, "_source", p->param_source);

            rc = sl_bb_add(p->bb, p->job, meta, 1, &err);
            json_decref(meta);
        } else {
            rc = remote_send(p, NULL, e[i].id);
        }
        if (rc != 0) {
            sl_task_note_error(p->ctx, rc);
            /* Even a refused delete keeps the entries of this batch: the
             * next run tries again rather than forgetting the record. */
            if (err.message[0] != '\0') {
                sl_task_set_message(p->ctx, "delete: %s", err.message);
            }
            return rc;
        }
        sl_task_counter_add(p->ctx, "records.deleted", 1);
        sl_task_doc(
            p->ctx, SL_JM_DOC_DELETED, p->param_source, e[i].id, NULL, NULL);
    }
    return 0;
}

/*
 * The run sequence below which entries go: the run's own, or in the
 * expiry after a continuous run's reseed pass (its task has expireBefore)
 * the older of the reseed's and that of the newest pass begun before
 * expireBefore: what the complete reseed did not see and no pass has seen
 * since then (docs/jobmanager.md "Continuous crawling").  0: none yet.
 */
static int
expiry_seq(struct push *p, uint64_t *seq, struct sl_err *err)
{
    const json_t *before = json_object_get(
        json_object_get(sl_task_json(p->ctx), "properties"), "expireBefore");
    uint64_t old = 0;
    int rc = 0;

    *seq = p->seq;
    if (!json_is_integer(before)) {
        return 0;
    }
    rc = sl_delta_run_before(p->delta,
                             p->param_source,
                             (int64_t)json_integer_value(before),
                             &old,
                             err);
    if (rc == 0 && old < *seq) {
        *seq = old;
    }
    return rc;
}

static int
delta_delete(struct push *p, unsigned shard)
{
    struct sl_err err;
    uint64_t removed = 0;
    uint64_t seq = 0;
    int rc = 0;

    sl_err_clear(&err);
    sl_test_delay("updatePusher.deltaDelete");
    if (!sl_delta_strategy_deletes(p->strategy) || p->delta == NULL) {
        return SL_WORKER_OK;
    }
    if (p->param_source == NULL) {
        sl_task_set_message(p->ctx,
                            "delta-delete needs the job parameter dataSource");
        return SL_WORKER_FATAL;
    }
    if (shard >= sl_delta_shards(p->delta)) {
        return SL_WORKER_OK;
    }
    rc = use_source(p, p->param_source, &err);
    if (rc == 0) {
        rc = expiry_seq(p, &seq, &err);
    }
    if (rc == 0 && seq == 0) {
        return SL_WORKER_OK; /* nothing old enough yet */
    }
    if (rc == 0) {
        rc = sl_delta_obsolete_scan(p->delta,
                                    p->param_source,
                                    seq,
                                    shard,
                                    0,
                                    send_deletes,
                                    p,
                                    &removed,
                                    &err);
    }
    if (rc != 0) {
        sl_task_note_error(p->ctx, rc);
        if (err.message[0] != '\0') {
            sl_task_set_message(p->ctx, "delta-delete: %s", err.message);
        }
        return SL_WORKER_RECOVERABLE;
    }
    sl_task_counter_add(p->ctx, "entries.removed", (double)removed);
    return SL_WORKER_OK;
}

static int check_remote(const json_t *remote);

int
sl__bi_push_gone(struct sl_task_ctx *ctx,
                 const char *source,
                 const char *id,
                 uint64_t seq,
                 uint64_t *removed)
{
    struct push p;
    struct sl_err err;
    uint64_t n = 0;
    unsigned shard = 0;
    int rc = 0;

    memset(&p, 0, sizeof(p));
    p.ctx = ctx;
    p.bb = sl_task_services(ctx)->bulkbuilder;
    p.delta = sl_task_services(ctx)->delta;
    p.job = sl_task_param_str(ctx, "jobToPushTo");
    p.remote = sl_task_param(ctx, "remote");
    p.param_source = source;
    *removed = 0;
    if (sl__bi_strategy(json_object_get(sl_task_json(ctx), "parameters"),
                        &p.strategy,
                        NULL) != 0 ||
        !sl_delta_strategy_deletes(p.strategy)) {
        return SL_ENOTREADY; /* additive, initial: nothing is deleted */
    }
    if (p.delta == NULL || (p.job != NULL ? p.bb == NULL : p.remote == NULL)) {
        return SL_ENOTREADY; /* left to the expiry */
    }
    if (p.job == NULL &&
        (check_remote(p.remote) != 0 || (p.h = curl_easy_init()) == NULL)) {
        return SL_EINVAL;
    }
    sl_err_clear(&err);
    for (shard = 0; rc == 0 && shard < sl_delta_shards(p.delta); shard++) {
        rc = sl_delta_gone_scan(
            p.delta, source, id, seq, shard, send_deletes, &p, &n, &err);
        *removed += n;
    }
    if (rc != 0 && err.message[0] != '\0') {
        sl_task_set_message(ctx, "delete %s: %s", id, err.message);
    }
    if (p.h != NULL) {
        curl_easy_cleanup(p.h);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * The worker.
 * --------------------------------------------------------------------- */

static int
check_remote(const json_t *remote)
{
    const json_t *eps = json_object_get(remote, "endpoints");
    const json_t *e = NULL;
    size_t i = 0;

    if (!json_is_array(eps) || json_array_size(eps) == 0 ||
        !json_is_string(json_object_get(remote, "urlPath"))) {
        return SL_EINVAL;
    }
    json_array_foreach(eps, i, e)
    {
        if (!json_is_string(e) || json_string_length(e) == 0) {
            return SL_EINVAL;
        }
    }
    return 0;
}

static int
pusher_perform(struct sl_task_ctx *ctx)
{
    struct push *p = sl_calloc(1, sizeof(*p));
    struct sl_err err;
    unsigned part = 0;
    int res = SL_WORKER_OK;

    sl_err_clear(&err);
    p->ctx = ctx;
    p->bb = sl_task_services(ctx)->bulkbuilder;
    p->delta = sl_task_services(ctx)->delta;
    p->job = sl_task_param_str(ctx, "jobToPushTo");
    p->remote = sl_task_param(ctx, "remote");
    p->run_id = json_string_value(json_object_get(
        json_object_get(sl_task_json(ctx), "properties"), "jobRunId"));
    p->param_source = sl_task_param_str(ctx, "dataSource");
    if (sl__bi_strategy(json_object_get(sl_task_json(ctx), "parameters"),
                        &p->strategy,
                        &err) != 0) {
        sl_task_set_message(ctx, "deltaImportStrategy: %s", err.message);
        res = SL_WORKER_FATAL;
        goto out;
    }
    if (p->job == NULL && (p->remote == NULL || check_remote(p->remote))) {
        sl_task_set_message(ctx,
                            "updatePusher needs jobToPushTo or remote "
                            "{\"endpoints\": [..], \"urlPath\": ..}");
        res = SL_WORKER_FATAL;
        goto out;
    }
    if ((p->job != NULL && p->bb == NULL) ||
        (sl_delta_strategy_writes(p->strategy) &&
         (p->delta == NULL || p->run_id == NULL))) {
        sl_task_set_message(ctx,
                            "updatePusher needs the bulkbuilder and the delta "
                            "service: run it inside `sluice serve`");
        res = SL_WORKER_FATAL;
        goto out;
    }
    if (p->job == NULL) {
        p->h = curl_easy_init();
        if (p->h == NULL) {
            sl_task_set_message(ctx, "curl_easy_init failed");
            res = SL_WORKER_RECOVERABLE;
            goto out;
        }
    }
    p->buf = sl_malloc(COPY_BUF);
    if (sl_task_completion(ctx, &part, NULL)) {
        res = delta_delete(p, part);
    } else {
        if (sl_task_output_writer(ctx, "pushedRecords", &p->pushed) != 0) {
            p->pushed = NULL;
        }
        if (sl_delta_strategy_reads(p->strategy) &&
            sl__bi_elem_check_new(ctx,
                                  p->delta,
                                  "recordsToPush",
                                  p->run_id,
                                  p->param_source,
                                  &p->elems) != 0) {
            p->elems = NULL;
        }
        res = push_inputs(p);
    }
out:
    held_drop(p); /* a failed task: pushed again by the retry */
    (void)flush_marks(p);
    sl__bi_elem_check_free(p->elems);
    if (p->h != NULL) {
        curl_easy_cleanup(p->h);
    }
    sl_free(p->buf);
    sl_free(p->source);
    sl_free(p);
    return res;
}

int
sl_worker_start_check(void *jm,
                      const char *job,
                      const char *worker,
                      const json_t *params,
                      struct sl_err *err)
{
    const char *target = NULL;
    const json_t *remote = NULL;
    struct sl_err why;
    int rc = 0;

    if (worker == NULL || strcmp(worker, "updatePusher") != 0) {
        return 0;
    }
    target = json_string_value(json_object_get(params, "jobToPushTo"));
    remote = json_object_get(params, "remote");
    if (target == NULL && remote == NULL) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "parameters.jobToPushTo",
                          "job '%s': the updatePusher needs the parameter "
                          "jobToPushTo or remote",
                          job);
    }
    if (target == NULL) {
        return check_remote(remote) == 0
                   ? 0
                   : sl_err_set(err,
                                SL_EINVAL,
                                "parameters.remote",
                                "job '%s': remote must be {\"endpoints\": "
                                "[\"host:port\", ...], \"urlPath\": "
                                "\"smila/job/<job>/record\"}",
                                job);
    }
    sl_err_clear(&why);
    rc = sl_jm_bulk_source_ready(jm, target, SL_BB_WORKER, &why);
    if (rc != 0) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "parameters.jobToPushTo",
                          "job '%s' pushes to job '%s', which cannot take "
                          "records: %s",
                          job,
                          target,
                          why.message);
    }
    return 0;
}

void
sl_worker_run_end(void *bb,
                  const char *job,
                  const char *worker,
                  const json_t *params)
{
    const char *target =
        json_string_value(json_object_get(params, "jobToPushTo"));
    struct sl_err err;

    if (worker != NULL && strcmp(worker, "fileCrawler") == 0) {
        sl__bi_watch_end(job); /* its watcher, if it had one */
        return;
    }
    if (bb == NULL || worker == NULL || strcmp(worker, "updatePusher") != 0 ||
        target == NULL) {
        return;
    }
    sl_err_clear(&err);
    if (sl_bb_flush(bb, target, &err) != 0) {
        /* the bulk is sealed by age or size later, nothing is lost */
        SL_WARN("job %s ended: sealing the open bulk of job %s: %s",
                job,
                target,
                err.message);
    }
}

/* The pool's start hook: the shards of the in-process delta service
 * (a REST pool has none: the count is left as it is). */
static int
pusher_start(const struct sl_worker_services *services, struct sl_err *err)
{
    (void)err;
    if (services->delta != NULL) {
        atomic_store(&delta_shards, sl_delta_shards(services->delta));
    }
    return 0;
}

/* One completion task per delta shard for `full` imports, else one (which
 * does nothing). */
static unsigned
pusher_partitions(const json_t *params)
{
    enum sl_delta_strategy st = SL_DELTA_STRATEGY_FULL;
    unsigned n = atomic_load(&delta_shards);

    if (sl__bi_strategy(params, &st, NULL) != 0) {
        return 1;
    }
    return sl_delta_strategy_deletes(st) && n > 0 ? n : 1;
}

const struct sl_worker_type sl_worker_updatePusher = {
    SL_WORKER_ABI_VERSION,
    "updatePusher",
    "{\"name\": \"updatePusher\","
    " \"modes\": [\"requestsCompletion\"],"
    " \"parameters\": [{\"name\": \"jobToPushTo\", \"optional\": true,"
    "   \"references\": \"jobs\"},"
    "  {\"name\": \"remote\", \"optional\": true, \"type\": \"object\","
    "   \"members\": [{\"name\": \"endpoints\", \"type\": \"array\","
    "     \"optional\": false, \"items\": {\"type\": \"string\"}},"
    "    {\"name\": \"urlPath\", \"optional\": false},"
    "    {\"name\": \"token\"}]},"
    "  {\"name\": \"dataSource\", \"optional\": true},"
    "  {\"name\": \"deltaImportStrategy\", \"optional\": true,"
    "   \"values\": [\"disabled\", \"initial\", \"additive\", \"full\"],"
    "   \"default\": \"full\", \"sameForJob\": true}],"
    " \"input\": [{\"name\": \"recordsToPush\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"pushedRecords\", \"type\": \"recordBulks\","
    "   \"modes\": [\"optional\"]}]}",
    pusher_perform,
    pusher_partitions,
    pusher_start,
};
