/*
 * webCrawler (SMILA's WebCrawler, docs/workers.md "webCrawler"): crawls web
 * pages with libcurl's multi interface.  The first task of a runOnce run
 * starts at `startUrl`; each task takes a bulk of links (input
 * `linksToCrawl`: the crawler's own, or in standard mode records pushed
 * to the job's bulkbuilder, by `httpUrl` or else `_recordid`),
 * fetches them and writes one record per page to `crawledRecords` and the
 * links it found to `linksToCrawl` (follow-up tasks, in parallel).
 *
 * Every link is marked visited (delta service, per source and run) before
 * it is fetched, so cycles and links found by several tasks are fetched
 * once, also across a restart.  The transfers, politeness and robots.txt
 * are the web tasks' (web_int.h: web_task.c, web_transfer.c,
 * web_robots.c), shared with the webFetcher and the webExtractor
 * (web_fetcher.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "builtin/web_int.h"
#include "deltaservice/deltaservice.h"

#define SLOT_RECORDS "crawledRecords"
/* The start task writes its first linksPerBulk links in RAMP_BULKS bulks
 * (ramp-up): the pages the start URLs link to, often the hubs of a site,
 * are then crawled by several tasks in parallel instead of one. */
#define RAMP_BULKS 8u
/* New links of a task's pages are marked visited (test-and-set) in
 * batches before they are written (flush_visits): linksPerBulk of them
 * (the batch a task reading them visited before), at least VISIT_BATCH
 * and at most VISIT_BATCH_MAX (a bound on what a task holds). */
#define VISIT_BATCH     128u
#define VISIT_BATCH_MAX 1024u
/* The attribute of a written link that says its writer marked it
 * visited in the run it carries (the delta service's run sequence). */
#define ATTR_VISITED "_visited"

/* ------------------------------------------------------------------------
 * Links.
 * --------------------------------------------------------------------- */

/* Links for the current linksToCrawl bulk: linksPerBulk, or in the
 * start task's first RAMP_BULKS bulks an eighth of it, rounded up. */
static uint64_t
bulk_limit(const struct web_crawl *c)
{
    if (c->ramp && c->links_bulks < RAMP_BULKS) {
        return c->links_per_bulk / RAMP_BULKS +
               (c->links_per_bulk % RAMP_BULKS != 0); /* no overflow */
    }
    return c->links_per_bulk;
}

/* Write a link record of @url at @depth to linksToCrawl (with @once:
 * each URL once per task; the visited links drop the rest in the next
 * task; sitemaps do without, their URLs would fill the task's memory).
 * With @marked the link was marked visited for this task (flush_visits):
 * the record says so (ATTR_VISITED), and the next task fetches it
 * without normalising and visiting it again. */
void
sl__bi_web_emit_link(
    struct web_crawl *c, const char *url, uint64_t depth, int once, int marked)
{
    struct sl_bulk_writer *w = NULL;
    json_t *meta = NULL;
    int rc = 0;

    if (!c->links_connected ||
        (once && json_object_get(c->emitted, url) != NULL)) {
        return;
    }
    if (c->links_in_bulk >= bulk_limit(c)) {
        rc = sl_task_output_next(c->ctx, SLOT_LINKS);
        c->links_in_bulk = 0;
        c->links_bulks++;
    }
    if (rc == 0) {
        rc = sl_task_output_writer(c->ctx, SLOT_LINKS, &w);
    }
    if (rc == SL_ENOENT) {
        c->links_connected = 0;
        return;
    }
    meta = json_pack("{s:s, s:s, s:s, s:I}",
                     "_recordid",
                     url,
                     "_source",
                     c->source,
                     sl_task_mapped(c->ctx, "httpUrl"),
                     url,
                     sl_task_mapped(c->ctx, "httpDepth"),
                     (json_int_t)depth);
    if (marked && meta != NULL) {
        (void)json_object_set_new(
            meta, ATTR_VISITED, json_integer((json_int_t)c->seq));
    }
    if (rc == 0 && meta != NULL) {
        rc = sl_bulk_writer_record_begin(w, meta);
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(w);
    }
    json_decref(meta);
    if (rc != 0) {
        sl_task_set_message(
            c->ctx, "output %s: %s", SLOT_LINKS, sl_strerror(rc));
        c->fatal = 1;
        return;
    }
    if (once) {
        (void)json_object_set_new(c->emitted, url, json_true());
    }
    c->links_in_bulk++;
    count(c, "links.found");
}

/* Forget the links held for a visit (vpend), keeping the arrays. */
void
sl__bi_web_drop_pending(struct web_crawl *c)
{
    while (c->nvpend > 0) {
        sl_free((char *)c->vpend[--c->nvpend].url);
    }
}

/*
 * Mark the links collected by page_links visited, for this task's owner,
 * and write those the run had not visited (test-and-set, one batch).  A
 * link is so written once per run, by the first task to find it; a
 * retried task (same owner) writes the links its lost attempt had marked
 * again.  An error fails the task (its outputs are not committed, and
 * the retry marks them again).
 */
static void
flush_visits(struct web_crawl *c)
{
    struct sl_err err;
    size_t i = 0;

    if (c->nvpend == 0) {
        return;
    }
    sl_err_clear(&err);
    if (!c->fatal && c->links_connected &&
        sl_delta_visit(
            c->delta, c->source, c->seq, c->owner, c->vpend, c->nvpend, &err) !=
            0) {
        sl_task_note_error(c->ctx, err.code); /* a full shard: retried */
        sl_task_set_message(c->ctx, "visited links: %s", err.message);
        c->fatal = 1;
    }
    for (i = 0; i < c->nvpend; i++) {
        if (c->fatal || !c->links_connected) {
            /* not written: the task fails (its retry, with the same
             * owner, marks them again) or has nowhere to write them
             * (nothing was marked then) */
        } else if (c->vpend[i].first > 0) {
            sl__bi_web_emit_link(c, c->vpend[i].url, c->vdepth[i], 0, 1);
        } else {
            (void)json_object_set_new(
                c->emitted, c->vpend[i].url, json_false());
            count(c,
                  c->vpend[i].result != 0 ? "links.invalid"
                                          : "links.alreadyVisited");
        }
    }
    sl__bi_web_drop_pending(c);
}

/* The links of the page of @x (with filters and depth passed) that are
 * new to this task go to linksToCrawl.  Those the run has visited already
 * are dropped first (a read-only test that answers as a visit by this
 * task's owner would: a retried task gets its lost attempt's links); with
 * the delta service the rest is marked visited in batches (flush_visits)
 * before it is written, so that the next tasks get each new URL once,
 * already normalised and visited.  On a page of a site's template most
 * links are visited: not writing them saves a record written, read and
 * refused for each. */
static void
page_links(struct web_crawl *c, struct web_xfer *x)
{
    const char *p = x->links.data;
    const char *end = p + x->links.len;
    struct sl_delta_link *dl = NULL;
    uint64_t depth = x->lk->depth + 1;
    size_t n = 0;
    size_t i = 0;

    if (c->no_links) {
        return;
    }
    for (; p != NULL && p < end; p += strlen(p) + 1) {
        n++;
    }
    dl = sl_calloc(n > 0 ? n : 1, sizeof(*dl));
    n = 0;
    for (p = x->links.data; p != NULL && p < end; p += strlen(p) + 1) {
        if (sl__bi_web_link_passes(c, p, depth) &&
            json_object_get(c->emitted, p) == NULL) {
            dl[n].url = p;
            dl[n++].first = 1;
        }
    }
    if (c->delta != NULL && n > 0 && c->links_connected) {
        struct sl_err err;

        sl_err_clear(&err);
        if (sl_delta_visited_test(
                c->delta, c->source, c->seq, c->owner, dl, n, &err) != 0) {
            for (i = 0; i < n; i++) { /* the visit decides */
                dl[i].first = 1;
            }
        }
    }
    for (i = 0; i < n && !c->fatal; i++) {
        /* this task fetches what it visited (its input links and redirect
         * targets): for its own owner the test says first */
        if (!dl[i].first || json_object_get(c->seen, dl[i].url) != NULL) {
            if (json_object_get(c->emitted, dl[i].url) == NULL) {
                /* known from now on: not tested again in this task */
                (void)json_object_set_new(c->emitted, dl[i].url, json_false());
                count(c, "links.alreadyVisited");
            }
        } else if (c->delta == NULL || !c->links_connected) {
            sl__bi_web_emit_link(c, dl[i].url, depth, 1, 0);
        } else if (json_object_get(c->emitted, dl[i].url) == NULL) {
            /* pending: not collected again from another page */
            (void)json_object_set_new(c->emitted, dl[i].url, json_true());
            if (c->vpend == NULL) {
                c->vcap = c->links_per_bulk < VISIT_BATCH ? VISIT_BATCH
                          : c->links_per_bulk > VISIT_BATCH_MAX
                              ? VISIT_BATCH_MAX
                              : (size_t)c->links_per_bulk;
                c->vpend = sl_calloc(c->vcap, sizeof(*c->vpend));
                c->vdepth = sl_calloc(c->vcap, sizeof(*c->vdepth));
            }
            memset(&c->vpend[c->nvpend], 0, sizeof(c->vpend[0]));
            c->vpend[c->nvpend].url = sl_strdup(dl[i].url);
            c->vdepth[c->nvpend++] = depth;
            if (c->nvpend == c->vcap) {
                flush_visits(c);
            }
        }
    }
    sl_free(dl);
}

/* Take @url out of the links held for a visit (vpend), if it is there:
 * 1 if it was. */
static int
unpend(struct web_crawl *c, const char *url)
{
    size_t i = 0;

    for (i = 0; i < c->nvpend; i++) {
        if (strcmp(c->vpend[i].url, url) == 0) {
            (void)json_object_del(c->emitted, url);
            sl_free((char *)c->vpend[i].url);
            c->nvpend--;
            c->vpend[i] = c->vpend[c->nvpend];
            c->vdepth[i] = c->vdepth[c->nvpend];
            return 1;
        }
    }
    return 0;
}

/* Mark @lk visited in this run: 1 when this task is the first, 0 when it
 * was visited already (dropped), negative on a service error. */
int
sl__bi_web_visit(struct web_crawl *c, struct web_link *lk)
{
    struct sl_delta_link dl;
    struct sl_err err;
    int rc = 0;

    if (json_object_get(c->seen, lk->url) != NULL) {
        return 0; /* this task has it already (a redirect loop) */
    }
    /* A link of this task's pages: held for a visit, this redirect takes
     * it over (at the redirect's depth); written already, the next task
     * fetches it. */
    if (json_is_true(json_object_get(c->emitted, lk->url)) &&
        !unpend(c, lk->url)) {
        return 0;
    }
    (void)json_object_set_new(c->seen, lk->url, json_true());
    if (c->delta == NULL) {
        return 1;
    }
    sl_err_clear(&err);
    memset(&dl, 0, sizeof(dl));
    dl.url = lk->url;
    rc = sl_delta_visit(c->delta, c->source, c->seq, c->owner, &dl, 1, &err);
    if (rc != 0) {
        sl_task_note_error(c->ctx, rc);
        sl_task_set_message(c->ctx, "visited links: %s", err.message);
        return rc;
    }
    return dl.first > 0;
}

/* ------------------------------------------------------------------------
 * Pages.
 * --------------------------------------------------------------------- */

/*
 * Is the resource @url of MIME type @mime (lower case, no parameters) a
 * compound the webExtractor extracts?  By the type; when it is missing or
 * only application/octet-stream, by the extension of the URL's path (the
 * fileCrawler's list, sl_worker_is_archive_name).
 */
static int
is_compound(const char *mime, const char *url)
{
    static const char *const types[] = {
        "application/zip",
        "application/x-zip-compressed",
        "application/java-archive",
        "application/x-tar",
        "application/x-gtar",
        "application/x-compressed-tar",
        "application/gzip",
        "application/x-gzip",
        "application/x-bzip2",
        "application/x-xz",
        "application/x-7z-compressed",
        "application/x-cpio",
        "application/x-iso9660-image",
        "application/vnd.rar",
        "application/x-rar-compressed",
        "application/mbox",
        "message/rfc822",
    };
    char *path = NULL;
    char *q = NULL;
    size_t i = 0;
    int yes = 0;

    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(mime, types[i]) == 0) {
            return 1;
        }
    }
    if (mime[0] != '\0' && strcmp(mime, "application/octet-stream") != 0) {
        return 0;
    }
    if (sl_web_url_path_query(url, &path) != 0) {
        return 0;
    }
    q = strchr(path, '?');
    if (q != NULL) {
        *q = '\0';
    }
    yes = sl_worker_is_archive_name(path);
    sl_free(path);
    return yes;
}

/*
 * The URL the record of page @x goes under (docs/workers.md "webCrawler",
 * "One document per page"): the page's own, or the URL its
 * <link rel="canonical"> names when that is another URL on the same
 * scheme, host and port that the crawl could fetch (within the URL
 * filters, not disallowed by robots.txt as far as it is known), so that
 * the page and its canonical URL are one document whichever is fetched,
 * and whether or not the canonical URL itself answers; without a
 * canonical link, an index page's directory URL when it answered the same
 * (web_index.c).  Borrowed from @x.
 */
static const char *
record_url(struct web_crawl *c, struct web_xfer *x)
{
    char *a = NULL;
    char *b = NULL;
    int same = 0;

    if (x->canonical == NULL) { /* an index page may be its directory's */
        const char *dir = sl__bi_web_index_url(c, x);

        return dir != NULL ? dir : x->lk->url;
    }
    if (strcmp(x->canonical, x->lk->url) == 0) {
        return x->lk->url;
    }
    same = sl_web_url_host_key(x->canonical, &a) == 0 &&
           sl_web_url_host_key(x->lk->url, &b) == 0 && strcmp(a, b) == 0;
    sl_free(a);
    sl_free(b);
    if (!same) {
        count(c, "records.canonicalOtherHost");
        return x->lk->url;
    }
    /* the page's own depth passed: only the URL filters and robots.txt
     * are left (no link is dropped here, so nothing is counted) */
    if (!sl__bi_patterns_pass(&c->urls, x->canonical) ||
        !sl__bi_web_robots_allows(c, x->canonical)) {
        count(c, "records.canonicalRefused");
        return x->lk->url;
    }
    count(c, "records.canonical");
    return x->canonical;
}

/* Write the record of a fetched page. */
static void
emit_record(struct web_crawl *c, struct web_xfer *x, long status)
{
    const char *url = record_url(c, x);
    char mime[256];
    char cs[64];
    char hash[80];
    json_t *meta = NULL;

    sl__bi_web_split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    if (x->etag[0] != '\0') {
        (void)snprintf(hash, sizeof(hash), "etag:%.70s", x->etag);
    } else if (x->lastmod[0] != '\0') {
        (void)snprintf(hash, sizeof(hash), "lm:%.70s", x->lastmod);
    } else {
        char hex[65];

        if (x->sha != NULL) { /* taken as the body arrived */
            (void)snprintf(hex, sizeof(hex), "%s", sl__bi_web_body_sha(x));
        } else {
            sl_sha256_hex(x->body.data ? x->body.data : "", x->body.len, hex);
        }
        (void)snprintf(hash, sizeof(hash), "sha256:%s", hex);
    }
    meta = json_pack("{s:s, s:s, s:s, s:i, s:s, s:I, s:I, s:s}",
                     "_recordid",
                     url,
                     "_source",
                     c->source,
                     sl_task_mapped(c->ctx, "httpUrl"),
                     url,
                     sl_task_mapped(c->ctx, "httpStatus"),
                     (int)status,
                     sl_task_mapped(c->ctx, "httpMimetype"),
                     mime,
                     sl_task_mapped(c->ctx, "httpSize"),
                     (json_int_t)body_size(x),
                     sl_task_mapped(c->ctx, "httpDepth"),
                     (json_int_t)x->lk->depth,
                     "_deltaHash",
                     hash);
    if (meta != NULL && cs[0] != '\0') {
        (void)json_object_set_new(
            meta, sl_task_mapped(c->ctx, "httpCharset"), json_string(cs));
    }
    if (meta != NULL && x->lastmod[0] != '\0') {
        (void)json_object_set_new(meta,
                                  sl_task_mapped(c->ctx, "httpLastModified"),
                                  json_string(x->lastmod));
    }
    if (meta != NULL && x->keep && x->text_ok) {
        /* what the textExtractor sets (write_record) */
        const char *text = NULL;
        const char *title = NULL;
        const char *tcs = NULL;
        const char *slash = strrchr(url, '/'); /* the record's URL */
        size_t len = 0;

        if (sl_text_html_end(x->ht, &text, &len, &title, &tcs)) {
            count(c, "records.textTruncated");
        }
        (void)json_object_set_new(meta, "mimeType", json_string(x->text_mime));
        if (tcs[0] != '\0') {
            (void)json_object_set_new(meta, "charset", json_string(tcs));
        }
        /* the page's <title>, else the last segment of the URL */
        (void)json_object_set_new(meta,
                                  "title",
                                  json_string(title[0] != '\0' ? title
                                              : slash != NULL  ? slash + 1
                                                               : url));
        count(c, "records.textExtracted");
    }
    if (meta != NULL && is_compound(mime, x->lk->url)) {
        /* the deltaChecker routes it to the webExtractor */
        (void)json_object_set_new(meta, "_isCompound", json_true());
        count(c, "records.compounds");
    }
    sl__bi_web_write_page(
        c, SLOT_RECORDS, meta, x->keep ? x : NULL, "records.crawled");
    json_decref(meta);
}

/* Whether the text of page @x (MIME type @mime, first @n bytes @head) is
 * taken in its link parse: a textual HTML head, no noindex (no record),
 * and no external converter of the textExtractor for the type (it would
 * be bypassed). */
static int
takes_text(struct web_crawl *c,
           struct web_xfer *x,
           const char *mime,
           const char *head,
           size_t n)
{
    return !(x->xrobots & SL_WEB_NOINDEX) &&
           sl_text_html_applies(mime, head, n, x->text_mime) &&
           json_object_get(sl_task_services(c->ctx)->converters,
                           x->text_mime) == NULL;
}

/*
 * extractText: the links and the text of HTML page @x in one parse, now
 * that all of it is here (in memory or spooled).  The charset is chosen
 * from the first SL_TEXT_CHUNK bytes as the textExtractor chooses it,
 * so the text is what it would extract.  Leaves the extractor in x->lx
 * for sl__bi_web_page_done; without one (it failed to start) the page has no
 * links and keeps httpContent.  A spool file that cannot be read fails the task
 * (recoverable), as writing the record from it would.
 */
static void
parse_page(struct web_crawl *c, struct web_xfer *x)
{
    char mime[256];
    char cs[64];
    /* a buffer only for a spooled page; one in memory is fed in place */
    char *buf = x->spool >= 0 ? sl_malloc(SL_TEXT_CHUNK) : NULL;
    const char *chunk = NULL;
    struct sl_web_tap tap;
    uint64_t off = 0;
    ssize_t n = 0;
    int text = 0;

    sl__bi_web_split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    n = sl__bi_web_body_piece(x, 0, buf, SL_TEXT_CHUNK, &chunk);
    text = n >= 0 && takes_text(c, x, mime, chunk, (size_t)n);
    /* without the text, the charset as without extractText */
    if (n < 0 || sl_web_links_begin(x->lk->url,
                                    !text && cs[0] != '\0' ? cs : NULL,
                                    LINKS_PER_PAGE,
                                    sl__bi_web_on_link,
                                    x,
                                    &x->lx) != 0) {
        x->lx = NULL;
    } else {
        sl_web_links_use_cache(x->lx, c->url_cache);
    }
    if (text && x->lx != NULL) {
        x->ht = sl_text_html_new(c->max_text);
        sl_text_html_begin(x->ht,
                           sl_web_links_parser(x->lx),
                           chunk,
                           (size_t)n,
                           cs[0] != '\0' ? cs : NULL,
                           &c->ud,
                           &tap);
        sl_web_links_tap(x->lx, &tap);
    }
    while (n > 0 && x->lx != NULL) {
        if (sl_web_links_feed(x->lx, chunk, (size_t)n) != 0) {
            break; /* failed: sl_web_links_end says so */
        }
        off += (uint64_t)n;
        n = sl__bi_web_body_piece(x, off, buf, SL_TEXT_CHUNK, &chunk);
    }
    if (n < 0) {
        sl_task_set_message(c->ctx, "temporary file: %s", sl_errno_str(errno));
        c->fatal = 1;
        sl_web_links_free(x->lx); /* a part of the page: no links, no text */
        x->lx = NULL;
    }
    sl_free(buf);
}

/* A page or resource @x answered 2xx: its links, and its record unless
 * a robots directive says noindex. */
void
sl__bi_web_page_done(struct web_crawl *c, struct web_xfer *x, long status)
{
    if (x->lk->kind == K_PAGE && x->lk->depth == 0) {
        c->start_ok++;
    }
    if (x->parse_at_end) {
        parse_page(c, x);
    }
    if (x->lx != NULL) {
        /* an HTML page, fed to the extractor as it arrived (with
         * extractText: by parse_page, when it was complete), at any
         * depth: <meta name="robots"> may say noindex; links past
         * maxCrawlDepth are dropped, links.tooDeep */
        struct sl_web_links_summary sum;

        memset(&sum, 0, sizeof(sum));
        /* reports the head links; a failed extractor stopped the parse,
         * so its text is only a part of the page: not taken */
        x->text_ok = sl_web_links_end(x->lx, &sum) == 0 && x->ht != NULL;
        x->lx = NULL;
        if (sum.meta_nofollow || (x->xrobots & SL_WEB_NOFOLLOW)) {
            count(c, "pages.nofollow");
        }
        if (sum.meta_noindex) {
            x->xrobots |= SL_WEB_NOINDEX;
        }
        page_links(c, x);
    }
    if (x->xrobots & SL_WEB_NOINDEX) {
        /* meta robots or X-Robots-Tag noindex: no record, so never
         * indexed, and with `full` an indexed copy is delta-deleted as
         * not seen in this run; its links were followed (unless
         * nofollow) */
        count(c, "records.noindex");
        return;
    }
    emit_record(c, x, status);
}

/* ------------------------------------------------------------------------
 * Parameters and perform.
 * --------------------------------------------------------------------- */

/* The start URLs: parameter startUrl, a string or a list. */
static int
start_links(struct web_crawl *c, struct sl_delta_link **dl, size_t *n)
{
    const json_t *su = sl_task_param(c->ctx, "startUrl");
    const json_t *v = NULL;
    size_t i = 0;

    *dl = NULL;
    *n = 0;
    if (json_is_string(su)) {
        *dl = sl_calloc(1, sizeof(**dl));
        (*dl)[(*n)++].url = json_string_value(su);
    } else if (json_is_array(su) && json_array_size(su) > 0) {
        *dl = sl_calloc(json_array_size(su), sizeof(**dl));
        json_array_foreach(su, i, v)
        {
            if (!json_is_string(v)) {
                break;
            }
            (*dl)[(*n)++].url = json_string_value(v);
        }
    }
    if (*n == 0 || (json_is_array(su) && *n != json_array_size(su))) {
        sl_free(*dl);
        *dl = NULL;
        sl_task_set_message(c->ctx,
                            "startUrl: a URL or a list of URLs (required "
                            "when the webCrawler starts the run)");
        return SL_EINVAL;
    }
    return 0;
}

/* Queue the links of this task: drops those the filters or the depth
 * refuse (before they are marked visited), marks the others visited in
 * one batch and queues those this task is the first to visit.  A link
 * with @marked set (NULL: none) was marked visited by the task that
 * wrote it and is queued as it is. */
static int
queue_links(struct web_crawl *c,
            struct sl_delta_link *dl,
            size_t n,
            uint64_t *depth,
            unsigned char *marked)
{
    struct sl_delta_link *v = NULL;
    struct sl_err err;
    size_t i = 0;
    size_t j = 0;
    size_t k = 0;
    int rc = 0;

    for (i = 0; i < n; i++) {
        uint64_t d = depth != NULL ? depth[i] : 0;

        if (sl__bi_web_link_passes(c, dl[i].url, d)) {
            dl[j] = dl[i];
            if (depth != NULL) {
                depth[j] = d;
            }
            if (marked != NULL) {
                marked[j] = marked[i];
            }
            j++;
        } else if (d == 0 && c->start_failed++ == 0) {
            (void)snprintf(c->start_why,
                           sizeof(c->start_why),
                           "%.512s: refused by filters.urlPatterns",
                           dl[i].url);
        }
    }
    n = j;
    sl_err_clear(&err);
    if (c->delta != NULL && n > 0) {
        v = sl_calloc(n, sizeof(*v));
        for (i = 0; i < n; i++) {
            if (marked != NULL && marked[i]) {
                dl[i].first = 1;
                dl[i].result = 0;
            } else {
                v[k++] = dl[i];
            }
        }
        rc = k > 0 ? sl_delta_visit(
                         c->delta, c->source, c->seq, c->owner, v, k, &err)
                   : 0;
        for (i = 0, k = 0; rc == 0 && i < n; i++) {
            if (marked == NULL || !marked[i]) {
                dl[i] = v[k++];
            }
        }
        sl_free(v);
        if (rc != 0) {
            sl_task_note_error(c->ctx, rc);
            sl_task_set_message(c->ctx, "visited links: %s", err.message);
            return rc;
        }
    }
    for (i = 0; i < n; i++) {
        if (dl[i].result == 0 && json_object_get(c->seen, dl[i].url) != NULL) {
            count(c, "links.alreadyVisited"); /* twice in this task */
            continue;
        }
        if (c->delta != NULL && dl[i].first <= 0) {
            count(c,
                  dl[i].result != 0 ? "links.invalid" : "links.alreadyVisited");
            continue;
        }
        (void)json_object_set_new(c->seen, dl[i].url, json_true());
        (void)sl__bi_web_enqueue(
            c, dl[i].url, depth != NULL ? depth[i] : 0, 0, K_PAGE);
    }
    return 0;
}

/* The due pass of a continuous run: the pages whose next check is due,
 * instead of the start URLs, at depth 1 (0 when that is the limit); their
 * links are not followed: new pages are found by the next reseed. */

struct due_links {
    struct sl_delta_link *dl;
    char **urls;
    uint64_t *depth;
    size_t n;
    uint64_t at;
};

static int
due_collect(void *ctx, const char *id, uint64_t due_ms)
{
    struct due_links *d = ctx;

    (void)due_ms;
    d->urls[d->n] = sl_strdup(id);
    d->dl[d->n].url = d->urls[d->n];
    d->depth[d->n] = d->at;
    d->n++;
    return 0;
}

void
sl__bi_web_due_gone(struct web_crawl *c, const char *url)
{
    count(c, "links.dueGone");
    sl__bi_recheck_moved_on(c->ctx, &c->rk, c->delta, c->source, url);
}

static int
due_links(struct web_crawl *c)
{
    struct due_links d;
    struct sl_err err;
    size_t found = 0;
    size_t i = 0;
    int rc = 0;

    if (c->delta == NULL) {
        sl_task_set_message(c->ctx, "a due pass needs the delta service");
        return SL_WORKER_FATAL;
    }
    d.dl = sl_calloc(SL__BI_DUE_PER_TASK, sizeof(*d.dl));
    d.urls = sl_calloc(SL__BI_DUE_PER_TASK, sizeof(*d.urls));
    d.depth = sl_calloc(SL__BI_DUE_PER_TASK, sizeof(*d.depth));
    d.n = 0;
    d.at = c->max_depth > 0 ? 1 : 0;
    c->no_links = 1;
    if (sl__bi_recheck_init(c->ctx, &c->rk) != 0) {
        c->rk.on = 0; /* the deltaChecker reports it */
    }
    sl_err_clear(&err);
    rc = sl_delta_recheck_due(c->delta,
                              c->source,
                              (uint64_t)sl__bi_task_now(c->ctx),
                              SL__BI_DUE_PER_TASK,
                              due_collect,
                              &d,
                              &found,
                              &err);
    if (rc == 0) {
        sl_task_counter_add(c->ctx, "links.due", (double)d.n);
        rc = queue_links(c, d.dl, d.n, d.depth, NULL);
    } else {
        sl_task_set_message(c->ctx, "due pass: %s", err.message);
    }
    for (i = 0; i < d.n; i++) {
        sl_free(d.urls[i]);
    }
    sl_free(d.urls);
    sl_free(d.dl);
    sl_free(d.depth);
    return rc == 0 ? SL_WORKER_OK : SL_WORKER_RECOVERABLE;
}

/* The links of the input bulks: normalised, with their depth; a link its
 * writer marked visited in this run (ATTR_VISITED) is taken as written
 * (normalised then). */
static int
input_links(struct web_crawl *c)
{
    size_t nin = sl_task_input_count(c->ctx, SLOT_LINKS);
    size_t b = 0;
    int rc = 0;

    for (b = 0; b < nin && rc == 0; b++) {
        struct sl_bulk_reader *r = NULL;
        struct sl_delta_link *dl = NULL;
        uint64_t *depth = NULL;
        unsigned char *marked = NULL;
        char **urls = NULL;
        size_t n = 0;
        size_t cap = 0;
        json_t *meta = NULL;
        struct sl_err err;

        sl_err_clear(&err);
        rc = sl_task_input_open(c->ctx, SLOT_LINKS, b, &r);
        if (rc != 0) {
            sl_task_set_message(c->ctx, "input %zu: %s", b, sl_strerror(rc));
            return SL_WORKER_RECOVERABLE;
        }
        while ((rc = sl_bulk_reader_next_meta(r, &meta, &err)) == 1) {
            const char *u = json_string_value(
                json_object_get(meta, sl_task_mapped(c->ctx, "httpUrl")));
            const json_t *mark = json_object_get(meta, ATTR_VISITED);
            int pre = c->delta != NULL && json_is_integer(mark) &&
                      (uint64_t)json_integer_value(mark) == c->seq;
            char *norm = NULL;
            uint64_t d = 0;

            if (u == NULL) { /* a start URL pushed as {"_recordid": url} */
                u = json_string_value(json_object_get(meta, "_recordid"));
            }
            rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
            if (rc == 0 && u != NULL &&
                (pre ? (norm = sl_strdup(u)) != NULL
                     : sl_web_url_normalize(u, &norm) == 0)) {
                if (sl_worker_json_u64(
                        json_object_get(meta,
                                        sl_task_mapped(c->ctx, "httpDepth")),
                        0,
                        &d) != 0) {
                    d = 0;
                }
                if (n == cap) {
                    cap = cap ? 2 * cap : 64;
                    urls = sl_realloc(urls, cap * sizeof(*urls));
                    depth = sl_realloc(depth, cap * sizeof(*depth));
                    marked = sl_realloc(marked, cap);
                }
                urls[n] = norm;
                marked[n] = (unsigned char)pre;
                depth[n++] = d;
            } else if (rc == 0) {
                count(c, "links.invalid");
            }
            json_decref(meta);
            if (rc != 0) {
                break;
            }
        }
        if (rc < 0) {
            sl_task_set_message(c->ctx, "input %zu: %s", b, err.message);
            rc = SL_WORKER_FATAL;
        } else {
            size_t i = 0;

            sl_task_input_close(c->ctx, r);
            dl = sl_calloc(n > 0 ? n : 1, sizeof(*dl));
            for (i = 0; i < n; i++) {
                dl[i].url = urls[i];
            }
            rc = queue_links(c, dl, n, depth, marked) == 0
                     ? 0
                     : SL_WORKER_RECOVERABLE;
        }
        while (n > 0) {
            sl_free(urls[--n]);
        }
        sl_free(urls);
        sl_free(depth);
        sl_free(marked);
        sl_free(dl);
    }
    return rc;
}

/* 1 when the run's completion deletes what it did not visit (strategy
 * full, also by default); an invalid strategy is the deltaChecker's to
 * report, and counts as full here. */
static int
strategy_deletes(struct sl_task_ctx *ctx)
{
    enum sl_delta_strategy s = SL_DELTA_STRATEGY_FULL;

    if (sl__bi_strategy(
            json_object_get(sl_task_json(ctx), "parameters"), &s, NULL) != 0) {
        return 1;
    }
    return sl_delta_strategy_deletes(s);
}

static int
web_crawl_perform(struct sl_task_ctx *ctx)
{
    struct web_crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = sl__bi_web_init(ctx, &c);
    if (rc != 0) {
        res = rc == SL_EINVAL ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
        goto out;
    }
    if (sl_task_input_count(ctx, SLOT_LINKS) == 0 &&
        sl__bi_pass_kind(ctx) != NULL &&
        strcmp(sl__bi_pass_kind(ctx), "due") == 0) {
        res = due_links(&c);
    } else if (sl_task_input_count(ctx, SLOT_LINKS) == 0) {
        struct sl_delta_link *dl = NULL;
        char **norm = NULL;
        size_t n = 0;
        size_t i = 0;

        c.ramp = 1;
        rc = start_links(&c, &dl, &n);
        if (rc != 0) {
            res = SL_WORKER_FATAL;
            goto out;
        }
        norm = sl_calloc(n, sizeof(*norm));
        for (i = 0; i < n && rc == 0; i++) {
            rc = sl_web_url_normalize(dl[i].url, &norm[i]);
            if (rc != 0) {
                sl_task_set_message(
                    ctx, "startUrl '%s': %s", dl[i].url, sl_strerror(rc));
            }
            dl[i].url = norm[i];
        }
        if (rc == 0) {
            rc = queue_links(&c, dl, n, NULL, NULL);
            res = rc == 0 ? SL_WORKER_OK : SL_WORKER_RECOVERABLE;
        } else {
            res = SL_WORKER_FATAL;
        }
        for (i = 0; i < n; i++) {
            sl_free(norm[i]);
        }
        sl_free(norm);
        sl_free(dl);
    } else {
        res = input_links(&c);
    }
    if (res == SL_WORKER_OK) {
        rc = sl__bi_web_loop(&c);
        if (rc == 0) {
            flush_visits(&c);
            /* marked, not yet committed: web_crash.sh kills the server here */
            sl_test_delay("webCrawler.linksWritten");
        }
        if (rc != 0 || c.fatal) {
            res = SL_WORKER_RECOVERABLE;
            if (rc == SL_ECANCELED) {
                sl_task_set_message(ctx, "canceled");
            }
        }
    }
    if (res == SL_WORKER_OK && c.start_failed > 0 && !c.no_links &&
        (c.start_ok == 0 || (c.start_transient > 0 && strategy_deletes(ctx)))) {
        /* a fatal error: the run ends FAILED without its completion, so
         * a delta-delete cannot take every page of the source (or what
         * only the failed start URLs reach) because a start page or its
         * host was down */
        if (c.start_ok == 0) {
            sl_task_set_message(ctx,
                                "no start URL could be crawled (%u failed; "
                                "%s): run failed, nothing deleted",
                                c.start_failed,
                                c.start_why);
        } else {
            sl_task_set_message(ctx,
                                "%u of %u start URLs could not be crawled "
                                "(%s): with deltaImportStrategy full the run "
                                "fails, nothing deleted",
                                c.start_failed,
                                c.start_failed + c.start_ok,
                                c.start_transient_why[0] != '\0'
                                    ? c.start_transient_why
                                    : c.start_why);
        }
        res = SL_WORKER_FATAL;
    }
out:
    sl__bi_web_cleanup(&c);
    return res;
}

const struct sl_worker_type sl_worker_webCrawler = {
    SL_WORKER_ABI_VERSION,
    "webCrawler",
    "{\"name\": \"webCrawler\", \"taskGenerator\": \"runOnceTrigger\","
    " \"parameters\": [{\"name\": \"dataSource\"},"
    "  {\"name\": \"startUrl\", \"optional\": true, \"type\": \"any\"},"
    "  {\"name\": \"linksPerBulk\", \"optional\": true, \"type\": \"integer\","
    "   \"minimum\": 1},"
    "  {\"name\": \"followSitemaps\", \"optional\": true,"
    "   \"type\": \"boolean\"},"
    "  {\"name\": \"mergeIndexPages\", \"optional\": true,"
    "   \"type\": \"boolean\"},"
    "  {\"name\": \"extractText\", \"optional\": true, \"type\": \"boolean\"},"
    "  {\"name\": \"maxTextBytes\", \"optional\": true, \"type\": \"integer\","
    "   \"maximum\": 16777216},"
    "  " WEB_DECL_COMMON ","
    "  {\"name\": \"deltaImportStrategy\", \"optional\": true,"
    "   \"values\": [\"disabled\", \"initial\", \"additive\", \"full\"],"
    "   \"default\": \"full\", \"sameForJob\": true}],"
    " \"input\": [{\"name\": \"linksToCrawl\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"linksToCrawl\", \"type\": \"recordBulks\","
    "   \"modes\": [\"multiple\", \"optional\"]},"
    "  {\"name\": \"crawledRecords\", \"type\": \"recordBulks\","
    "   \"modes\": [\"optional\"]}]}",
    web_crawl_perform,
    NULL,
    NULL,
};
