/*
 * webFetcher and webExtractor (docs/workers.md "webFetcher",
 * "webExtractor"): downloads of what the webCrawler found, as web tasks
 * (web_int.h) with the webCrawler's transfers, host table and limits but
 * without robots.txt (the crawler checked).  The webFetcher completes
 * crawled records that have no content yet; the webExtractor downloads
 * compounds and extracts them like the fileExtractor (compound.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builtin/web_int.h"
#include "text/text.h"

#define SLOT_FETCH   "linksToFetch"
#define SLOT_FETCHED "fetchedLinks"
/* webExtractor */
#define SLOT_COMPOUNDS "compounds"
#define SLOT_FILES     "files"

/* ------------------------------------------------------------------------
 * Downloads.
 * --------------------------------------------------------------------- */

/* webExtractor: a downloaded compound waiting for its extraction */
struct web_ready {
    struct web_ready *next;
    json_t *meta;  /* the compound record, owned */
    int fd;        /* its spooled content, owned */
    uint64_t size; /* bytes in fd */
};

/*
 * webExtractor: write compound record @meta (borrowed; metadata only, as
 * the fileExtractor passes its compounds on) to `files`, counted as
 * @counter, then the elements of the @size bytes of the archive in @fd
 * (borrowed) with the fileExtractor's walk.  An output error fails the
 * task (recoverable).
 */
static void
extract_compound(struct web_crawl *c,
                 const json_t *meta,
                 int fd,
                 uint64_t size,
                 const char *counter)
{
    struct sl_bulk_writer *w = NULL;
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *src = json_string_value(json_object_get(meta, "_source"));
    int whole = 0;
    int rc = 0;

    if (id == NULL) {
        count(c, "links.invalid");
        return;
    }
    rc = sl_task_output_writer(c->ctx, SLOT_FILES, &w);
    if (rc == SL_ENOENT) {
        return; /* the output is not connected */
    }
    if (rc != 0) {
        sl_task_set_message(
            c->ctx, "output %s: %s", SLOT_FILES, sl_strerror(rc));
    }
    if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0) {
        sl_task_set_message(c->ctx, "temporary file: %s", sl_errno_str(errno));
        rc = SL_EIO;
    }
    if (rc == 0) {
        rc = sl__bi_compound_record(
            c->extract, w, meta, CONTENT_ATT, fd, size, &whole);
    }
    if (rc == 0) {
        count(c, counter);
    }
    if (rc == 0 && !whole) {
        rc = sl__bi_extract_fd(
            c->extract, w, id, src != NULL ? src : c->source, fd, size);
    }
    if (rc != 0) {
        c->fatal = 1; /* the task message is set */
    }
}

/* The webFetcher's output: the crawled record with the content; the
 * webExtractor's: the compound record and its elements. */
void
sl__bi_web_fetched(struct web_crawl *c, struct web_xfer *x, long status)
{
    json_t *meta = x->lk->meta;
    char mime[256];
    char cs[64];

    sl__bi_web_split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    (void)json_object_set_new(meta,
                              sl_task_mapped(c->ctx, "httpStatus"),
                              json_integer((json_int_t)status));
    (void)json_object_set_new(meta,
                              sl_task_mapped(c->ctx, "httpSize"),
                              json_integer((json_int_t)body_size(x)));
    if (mime[0] != '\0') {
        (void)json_object_set_new(
            meta, sl_task_mapped(c->ctx, "httpMimetype"), json_string(mime));
    }
    if (c->extract != NULL && c->running > 0) {
        struct web_ready *r = sl_calloc(1, sizeof(*r));
        struct web_ready **pp = &c->ready;

        r->meta = json_incref(meta);
        r->fd = x->spool;
        r->size = x->spooled;
        x->spool = -1; /* the ready list owns it now */
        while (*pp != NULL) {
            pp = &(*pp)->next;
        }
        *pp = r;
        count(c, "compounds.deferred");
        return;
    }
    if (c->extract != NULL) {
        extract_compound(c, meta, x->spool, x->spooled, "compounds.fetched");
        return;
    }
    sl__bi_web_write_page(c, SLOT_FETCHED, meta, x, "records.fetched");
}

/* Free the first compound of the ready list. */
void
sl__bi_web_ready_pop(struct web_crawl *c)
{
    struct web_ready *r = c->ready;

    c->ready = r->next;
    json_decref(r->meta);
    if (r->fd >= 0) {
        (void)close(r->fd);
    }
    sl_free(r);
}

/* Extract the compounds waiting for it (no transfer is in flight). */
void
sl__bi_web_extract_ready(struct web_crawl *c)
{
    while (c->ready != NULL) {
        if (!c->fatal) {
            extract_compound(c,
                             c->ready->meta,
                             c->ready->fd,
                             c->ready->size,
                             "compounds.fetched");
        }
        sl__bi_web_ready_pop(c);
    }
}

/* Queue the download of record @meta (borrowed, kept) from @url for the
 * webFetcher or the webExtractor; an invalid URL is counted and skipped.
 * Returns SL_WORKER_OK. */
static int
queue_fetch(struct web_crawl *c, const char *url, json_t *meta)
{
    struct web_link *lk = NULL;
    char *norm = NULL;

    if (url == NULL || sl_web_url_normalize(url, &norm) != 0) {
        count(c, "links.invalid");
        return SL_WORKER_OK;
    }
    lk = sl__bi_web_enqueue(c, norm, 0, 0, K_FETCH);
    if (lk != NULL) { /* NULL: no host key, counted links.invalid */
        lk->meta = json_incref(meta);
    }
    sl_free(norm);
    return SL_WORKER_OK;
}

/* ------------------------------------------------------------------------
 * webFetcher: the content of crawled records that have none yet.
 * --------------------------------------------------------------------- */

/* Whether a record whose first attachment is @name has its content: the
 * page (httpContent) or, with extractText, its text. */
static int
has_content(const char *name)
{
    return strcmp(name, CONTENT_ATT) == 0 || strcmp(name, TEXT_ATT) == 0;
}

/*
 * One input record (metadata as stored): with its content already (an
 * HTML page the crawler kept, or its text) it is copied as it is, without
 * decoding; without, it is decoded and queued for fetching.
 */
static int
fetch_input(void *arg, struct sl_bulk_reader *r)
{
    struct web_crawl *c = arg;
    struct sl_bulk_writer *w = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    json_t *meta = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_bulk_reader_attachment_next(r, &name, &size, &err);
    if (rc == 1 && has_content(name)) {
        /* copied as stored: no re-encoding, one copy of the bytes */
        rc = sl_task_output_writer(c->ctx, SLOT_FETCHED, &w);
        if (rc == 0) {
            rc = sl_bulk_copy_record(r, w, &err);
        }
        if (rc != 0) {
            sl_task_set_message(c->ctx,
                                "copy: %s",
                                err.message[0] ? err.message : sl_strerror(rc));
            return rc == SL_ECORRUPT || rc == SL_ETRUNCATED
                       ? SL_WORKER_FATAL
                       : SL_WORKER_RECOVERABLE;
        }
        count(c, "records.passed");
        return SL_WORKER_OK;
    }
    if (rc < 0) {
        sl_task_set_message(c->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    /* decoded only now, for the records that are fetched */
    if (sl_bulk_reader_meta(r, &meta, &err) != 0) {
        sl_task_set_message(c->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    rc = queue_fetch(c,
                     json_string_value(json_object_get(
                         meta, sl_task_mapped(c->ctx, "httpUrl"))),
                     meta);
    json_decref(meta);
    return rc;
}

/* sl__bi_share_input's test: the record has its content. */
static int
content_first(void *arg, const char *name, uint64_t size)
{
    (void)arg;
    (void)size;
    return has_content(name);
}

static int
web_fetch_perform(struct sl_task_ctx *ctx)
{
    struct web_crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = sl__bi_web_init(ctx, &c);
    if (rc != 0) {
        res = rc == SL_EINVAL ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    } else {
        c.robots = 0; /* the crawler checked; the fetcher only fetches */
        /* every record has its content (the crawler's HTML pages): the
         * input is the output, shared, not copied */
        rc = sl__bi_share_input(ctx,
                                SLOT_FETCH,
                                SLOT_FETCHED,
                                content_first,
                                NULL,
                                0,
                                "records.passed");
        if (rc < 0) {
            res = SL_WORKER_RECOVERABLE;
        } else if (rc == 0) {
            res = sl_task_input_each_raw(ctx, SLOT_FETCH, fetch_input, &c);
        }
    }
    if (res == SL_WORKER_OK) {
        rc = sl__bi_web_loop(&c);
        if (rc != 0 || c.fatal) {
            res = SL_WORKER_RECOVERABLE;
        }
    }
    sl__bi_web_cleanup(&c);
    return res;
}

const struct sl_worker_type sl_worker_webFetcher = {
    SL_WORKER_ABI_VERSION,
    "webFetcher",
    "{\"name\": \"webFetcher\","
    " \"parameters\": [{\"name\": \"dataSource\"},"
    "  " WEB_DECL_COMMON "],"
    " \"input\": [{\"name\": \"linksToFetch\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"fetchedLinks\", \"type\": \"recordBulks\"}]}",
    web_fetch_perform,
    NULL,
    NULL,
};

/* ------------------------------------------------------------------------
 * webExtractor: compounds found on the web, extracted like the
 * fileExtractor's.
 * --------------------------------------------------------------------- */

/* Copy the current attachment of @r (the compound's content) into a new
 * spool file: 0 and *fd, SL_EIO (task message set) or a reader error. */
static int
spool_attachment(struct web_crawl *c,
                 struct sl_bulk_reader *r,
                 int *fd,
                 struct sl_err *err)
{
    char *buf = sl_malloc(COPY_BUF);
    size_t n = 0;
    int rc = 0;

    *fd = sl_text_spool_open();
    if (*fd < 0) {
        sl_task_set_message(c->ctx, "temporary file: %s", sl_errno_str(errno));
        sl_free(buf);
        return SL_EIO;
    }
    while ((rc = sl_bulk_reader_attachment_read(r, buf, COPY_BUF, &n, err)) ==
               0 &&
           n > 0) {
        if (sl_write_all(*fd, buf, n) != 0) {
            sl_task_set_message(
                c->ctx, "temporary file: %s", sl_errno_str(errno));
            rc = SL_EIO;
            break;
        }
    }
    sl_free(buf);
    if (rc != 0) {
        (void)close(*fd);
        *fd = -1;
    }
    return rc;
}

/*
 * One input compound: one that has its content already (the crawler kept
 * it: no ETag or Last-Modified) is extracted from a spooled copy at once;
 * the others are queued for download (politeness, limits and timeouts as
 * the webFetcher's) and extracted when their transfer ends and no other
 * transfer of the task is in flight.
 */
static int
extract_input(void *arg, json_t *meta, struct sl_bulk_reader *r)
{
    struct web_crawl *c = arg;
    const char *url = json_string_value(
        json_object_get(meta, sl_task_mapped(c->ctx, "httpUrl")));
    const char *name = NULL;
    uint64_t size = 0;
    struct sl_err err;
    int fd = -1;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_bulk_reader_attachment_next(r, &name, &size, &err);
    if (rc == 1 && strcmp(name, CONTENT_ATT) == 0) {
        rc = spool_attachment(c, r, &fd, &err);
        if (rc == SL_EIO) {
            return SL_WORKER_RECOVERABLE;
        }
        if (rc != 0) {
            sl_task_set_message(c->ctx, "input: %s", err.message);
            return SL_WORKER_FATAL;
        }
        extract_compound(c, meta, fd, size, "compounds.passed");
        (void)close(fd);
        return c->fatal ? SL_WORKER_RECOVERABLE : SL_WORKER_OK;
    }
    if (rc < 0) {
        sl_task_set_message(c->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    return queue_fetch(c, url, meta);
}

static int
web_extract_perform(struct sl_task_ctx *ctx)
{
    struct sl_text_archive_names names = {
        sl_task_mapped(ctx, "httpUrl"),
        NULL, /* no fileName, fileFolder, fileExtension: the */
        NULL, /* textExtractor takes the last segment of the id */
        NULL,
        sl_task_mapped(ctx, "httpSize"),
        sl_task_mapped(ctx, "httpLastModified"),
        CONTENT_ATT,
        1, /* HTTP dates, as the crawler's httpLastModified */
    };
    struct sl_bulk_writer *w = NULL;
    struct web_crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = sl__bi_web_init(ctx, &c);
    if (rc != 0) {
        res = rc == SL_EINVAL ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
        goto out;
    }
    if (sl__bi_extract_new(ctx, &names, &c.extract) != 0) {
        res = SL_WORKER_FATAL;
        goto out;
    }
    rc = sl_task_output_writer(ctx, SLOT_FILES, &w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output files: %s", sl_strerror(rc));
        res = rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
        goto out;
    }
    c.robots = 0; /* the crawler checked; the extractor only fetches */
    res = sl_task_input_each_reader(ctx, SLOT_COMPOUNDS, extract_input, &c);
    if (res == SL_WORKER_OK) {
        rc = sl__bi_web_loop(&c);
        if (rc != 0 || c.fatal) {
            res = SL_WORKER_RECOVERABLE;
            if (rc == SL_ECANCELED) {
                sl_task_set_message(ctx, "canceled");
            }
        }
    }
out:
    sl__bi_web_cleanup(&c);
    sl__bi_extract_free(c.extract);
    return res;
}

const struct sl_worker_type sl_worker_webExtractor = {
    SL_WORKER_ABI_VERSION,
    "webExtractor",
    "{\"name\": \"webExtractor\","
    " \"parameters\": [{\"name\": \"dataSource\"},"
    "  " WEB_DECL_COMMON ","
    "  " SL__BI_DECL_EXTRACT_LIMITS "],"
    " \"input\": [{\"name\": \"compounds\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"files\", \"type\": \"recordBulks\"}]}",
    web_extract_perform,
    NULL,
    NULL,
};
