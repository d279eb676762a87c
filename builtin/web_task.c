/*
 * A task of the web workers (web_int.h): its setup from the parameters
 * the three of them share, its queue of links, the scheduling of its
 * transfers and the loop that runs them, what an ended transfer leads to,
 * and the clean-up.
 *
 * Politeness is decided when a transfer is started, never by sleeping:
 * the process's table of throttle bins (core/ sl_throttle) grants a host or
 * says how long to wait, and the task goes on with other hosts meanwhile; the
 * only wait is curl_multi_poll until the next transfer ends or the next
 * host is due.  robots.txt is fetched once per host and run and kept in a
 * process-wide cache (web_robots.c).
 *
 * Redirects are not followed by libcurl: a 3xx becomes a new link of the
 * same depth (counted against maxRedirects), so the target goes through
 * the scheme check, the URL filters, robots.txt, politeness and the
 * visited links like any other link, and a redirect loop ends at the
 * visited check.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builtin/web_int.h"
#include "deltaservice/deltaservice.h"

#define DEFAULT_LINKS_PER_BULK 100u
#define DEFAULT_MAX_SIZE       ((uint64_t)10 << 20)
#define DEFAULT_MAX_REDIRECTS  5u
#define DEFAULT_DELAY_MS       1000
#define DEFAULT_PARALLEL       8u /* transfers in flight per task */
#define MAX_RETRIES            3u /* of a URL answered 429/503 */
#define CONNECT_TIMEOUT_MS     10000L
#define TOTAL_TIMEOUT_MS       60000L
#define BUSY_HOST_POLL_MS      5
#define ROBOTS_POLL_MS         20  /* waiting for another task's robots.txt */
#define GATED_MAX              16u /* refused hosts a pass remembers */
#define DEFAULT_UA             "Sluice/0.1 (+https://example.invalid/sluice)"

/* ------------------------------------------------------------------------
 * Process-wide state: the robots.txt cache and the threads' libcurl
 * state (the host table is the process's throttle table, core/).
 * --------------------------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void
global_init(void)
{
    (void)curl_global_init(CURL_GLOBAL_DEFAULT);
    sl__bi_web_robots_init();
    sl__bi_web_transfer_init();
}

void
sl__bi_web_limits(const struct web_crawl *c,
                  const char *host,
                  struct sl_throttle_limits *l)
{
    *l = c->pol;
    sl_throttle_limits_for(host, c->throttle, l);
}

/* Release a granted request to @host of @c: the bin's outcome from the
 * HTTP @status (0: no answer). */
static void
host_release(struct web_crawl *c,
             const char *host,
             long status,
             int64_t retry_after_ms)
{
    struct sl_throttle_limits l;

    sl__bi_web_limits(c, host, &l);
    sl_throttle_release(sl_throttle_process(),
                        host,
                        &l,
                        sl_mono_ms(),
                        status == 429 || status == 503  ? SL_THROTTLE_SLOW_DOWN
                        : status >= 200 && status < 500 ? SL_THROTTLE_ANSWERED
                                                        : SL_THROTTLE_NO_ANSWER,
                        retry_after_ms);
}

/* ------------------------------------------------------------------------
 * Links.
 * --------------------------------------------------------------------- */

void
sl__bi_web_link_free(struct web_link *lk)
{
    if (lk != NULL) {
        sl_free(lk->url);
        sl_free(lk->host);
        sl_free(lk->robots_for);
        json_decref(lk->meta);
        sl__bi_web_link_free(lk->page);
        sl_free(lk->dir_url);
        sl_free(lk->dir_sha);
        sl_free(lk);
    }
}

/* Report page @lk to the run's document history, after @counter:
 * "links.failed.network" is a failed document ("network"),
 * "links.skipped.tooLarge" a skipped one ("tooLarge"). */
static void
web_doc(struct web_crawl *c,
        const struct web_link *lk,
        const char *counter,
        const char *message)
{
    int failed = strncmp(counter, "links.failed.", 13) == 0;
    const char *reason = counter + (failed ? 13 : 6);

    if (strncmp(counter, "links.skipped.", 14) == 0) {
        reason = counter + 14;
    }
    sl_task_doc(c->ctx,
                failed ? SL_JM_DOC_FAILED : SL_JM_DOC_SKIPPED,
                c->source,
                lk->url,
                reason,
                message);
}

/* Link @lk could not be crawled because of @fmt: counted as @counter
 * ("links.failed.*" or "links.skipped.*" and the like), reported to the
 * run's document history (a failed or a skipped document, the reason the
 * counter's last part).  @transient: a failure
 * that says nothing about the page (a network error, 5xx, 429/503 given
 * up, robots.txt unreachable), as against an answer (4xx, robots.txt
 * disallows, the filters refuse): it makes the task incomplete, so the
 * run deletes nothing.  A start URL (a page link of depth 0) is also
 * counted, the first reason kept for the task message. */
void
sl__bi_web_start_failed(struct web_crawl *c,
                        const struct web_link *lk,
                        const char *counter,
                        int transient,
                        const char *fmt,
                        ...)
{
    char why[sizeof(c->start_why)];
    va_list ap;
    int n = 0;

    n = snprintf(why, sizeof(why), "%.512s: ", lk->url);
    if (n > 0 && (size_t)n < sizeof(why)) {
        va_start(ap, fmt);
        (void)vsnprintf(why + n, sizeof(why) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    if (counter != NULL) {
        count(c, counter);
    }
    if (counter != NULL && (lk->kind == K_PAGE || lk->kind == K_FETCH)) {
        web_doc(
            c, lk, counter, n > 0 && (size_t)n < sizeof(why) ? why + n : NULL);
    }
    if (transient) {
        /* any link: the page (and what only it links to) may well still
         * exist, so the run must not delete what it did not see */
        sl_task_set_incomplete(c->ctx, "%s", why);
    }
    if (lk->kind != K_PAGE || lk->depth != 0) {
        return;
    }
    c->start_failed++;
    c->start_transient += transient ? 1 : 0;
    if (c->start_failed == 1) {
        memcpy(c->start_why, why, sizeof(why));
    } else if (transient && c->start_transient == 1) {
        memcpy(c->start_transient_why, why, sizeof(why));
    }
}

/* Queue @url (normalised) at @depth.  Returns the new link (borrowed,
 * owned by the pending list) or NULL when @url has no host key (counted
 * links.invalid, nothing queued). */
struct web_link *
sl__bi_web_enqueue(struct web_crawl *c,
                   const char *url,
                   uint64_t depth,
                   unsigned redirects,
                   enum web_kind kind)
{
    struct web_link *lk = sl_calloc(1, sizeof(*lk));

    if (sl_web_url_host_key(url, &lk->host) != 0) {
        sl_free(lk);
        count(c, "links.invalid");
        return NULL;
    }
    lk->url = sl_strdup(url);
    lk->depth = depth;
    lk->redirects = redirects;
    lk->kind = kind;
    lk->next = c->pending;
    c->pending = lk;
    return lk;
}

/*
 * Whether a link to @url at @depth passes filters.urlPatterns and
 * filters.maxCrawlDepth (counted when not).  Checked before a link is
 * written to linksToCrawl and before it is marked visited: a link
 * dropped after its visit would make the URL "already visited" for a
 * shorter path that reaches it later in the run.
 */
int
sl__bi_web_link_passes(struct web_crawl *c, const char *url, uint64_t depth)
{
    if (!sl__bi_patterns_pass(&c->urls, url)) {
        count(c, "links.filtered");
        return 0;
    }
    if (depth > c->max_depth) {
        count(c, "links.tooDeep");
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * Scheduling.
 * --------------------------------------------------------------------- */

/* Transfers of this task to @host in flight. */
static unsigned
held_of(const struct web_crawl *c, const char *host)
{
    unsigned n = 0;

    for (size_t i = 0; i < MAX_PARALLEL; i++) {
        if (c->act[i] != NULL && strcmp(c->act[i]->lk->host, host) == 0) {
            n++;
        }
    }
    return n;
}

/* Whether @host is one of the @n hosts in @gated. */
static int
refused_before(const char *const *gated, size_t n, const char *host)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(gated[i], host) == 0) {
            return 1;
        }
    }
    return 0;
}

/*
 * Start what may start now: robots.txt fetches first, then pages whose
 * host the table grants.  *wake_ms is set to the earliest time a waiting
 * link may start (-1: only a transfer's end can change anything).
 */
static int
schedule(struct web_crawl *c, int64_t *wake_ms)
{
    json_t *unknown = NULL; /* hosts whose robots.txt is not known yet */
    struct web_link **pp = &c->pending;
    int64_t now = sl_mono_ms();
    /* hosts the table refused in this pass (borrowed from their links,
     * which stay queued during the pass); when full, the table is asked
     * again for the others */
    const char *gated[GATED_MAX];
    size_t ngated = 0;
    int queued_ahead = 0;

    *wake_ms = -1;
    c->robots_wait = 0;
    /* a compound waiting for its extraction: let the transfers in flight
     * end first (sl__bi_web_loop) */
    while (*pp != NULL && c->running < c->parallel && !c->fatal &&
           c->ready == NULL) {
        struct web_link *lk = *pp;
        struct web_xfer *x = NULL;
        struct sl_throttle_limits lim;
        int64_t wait = 0;
        int ok = 1;

        if (lk->kind == K_SITEMAP &&
            c->sitemap_links >= SITEMAP_LINKS_PER_TASK) {
            count(c, "sitemaps.truncated"); /* the task wrote its share */
            *pp = lk->next;
            sl__bi_web_link_free(lk);
            continue;
        }
        if (lk->kind == K_PAGE) {
            if (lk->not_before < 0) { /* a redirect target, not yet seen */
                ok = sl__bi_web_visit(c, lk);
                if (ok < 0) {
                    json_decref(unknown);
                    return ok;
                }
                lk->not_before = 0;
                if (ok == 0) {
                    count(c, "links.alreadyVisited");
                }
            }
            if (ok == 1 && !lk->admitted) {
                const struct web_link *head = c->pending;

                ok = sl__bi_web_admissible(c, lk, &unknown);
                lk->admitted = ok == 1;
                /* it queued robots.txt or sitemaps at the head, behind
                 * this pass: the next pass must come at once, not after
                 * a poll that no transfer may end (200 ms) */
                queued_ahead |= c->pending != head;
                while (*pp != lk) {
                    pp = &(*pp)->next;
                }
            }
            if (ok == 0) {
                *pp = lk->next;
                sl__bi_web_link_free(lk);
                continue;
            }
            if (ok == 2) { /* its robots.txt is queued at the head */
                pp = &lk->next;
                continue;
            }
            if (ok == 1) { /* an index page: its directory URL first */
                struct web_link *probe = sl__bi_web_probe_for(c, lk);

                if (probe != NULL) {
                    probe->next = lk->next;
                    lk->next = NULL;
                    *pp = probe;
                    continue;
                }
            }
        }
        if (refused_before(gated, ngated, lk->host)) {
            pp = &lk->next; /* its host said no in this pass already */
            continue;
        }
        sl__bi_web_limits(c, lk->host, &lim);
        if (sl_throttle_acquire(sl_throttle_process(),
                                lk->host,
                                &lim,
                                now,
                                held_of(c, lk->host),
                                &wait) != 0) {
            if (ngated < GATED_MAX) {
                gated[ngated++] = lk->host;
            }
            if (wait < 0 && c->running == 0) {
                /* another task's transfers fill the host: its releases
                 * do not wake this poll, so look again soon */
                wait = BUSY_HOST_POLL_MS;
            }
            if (wait > 0 && (*wake_ms < 0 || now + wait < *wake_ms)) {
                *wake_ms = now + wait;
            }
            pp = &lk->next;
            continue;
        }
        *pp = lk->next;
        lk->next = NULL;
        x = sl__bi_web_xfer_new(c, lk);
        if (x == NULL || curl_multi_add_handle(c->multi, x->easy) != CURLM_OK) {
            host_release(c, lk->host, 0, -1);
            if (lk->kind == K_ROBOTS) { /* also a redirect hop */
                sl__bi_web_robots_give_up(
                    c, lk->robots_for != NULL ? lk->robots_for : lk->host);
            }
            if (lk->kind == K_PROBE) { /* its page is fetched unprobed */
                sl__bi_web_probe_abandon(c, lk);
            } else if (!c->fatal) { /* else the task fails (recoverable) */
                count(c, "links.failed.internal");
            }
            if (x != NULL) {
                sl__bi_web_xfer_free(x);
            } else {
                sl__bi_web_link_free(lk);
            }
            continue;
        }
        for (size_t i = 0; i < MAX_PARALLEL; i++) {
            if (c->act[i] == NULL) {
                c->act[i] = x;
                break;
            }
        }
        c->running++;
    }
    if (queued_ahead && c->running < c->parallel) {
        *wake_ms = now;
    }
    if (c->robots_wait && (*wake_ms < 0 || *wake_ms > now + ROBOTS_POLL_MS)) {
        /* the other task's answer wakes no poll of this one */
        *wake_ms = now + ROBOTS_POLL_MS;
    }
    json_decref(unknown);
    return 0;
}

/* ------------------------------------------------------------------------
 * Ended transfers.
 * --------------------------------------------------------------------- */

/* A transfer of a probe, a robots.txt or a sitemap ended: 1 (done), or 0
 * for a page or a download. */
static int
finish_aux(struct web_crawl *c,
           struct web_xfer *x,
           CURLcode code,
           long status,
           int cut)
{
    if (x->lk->kind == K_PROBE) {
        sl__bi_web_probe_done(c, x, code == CURLE_OK ? status : 0);
        return 1;
    }
    if (x->lk->kind == K_ROBOTS) {
        if (code != CURLE_OK && !cut) {
            SL_WARN("webCrawler: %s%s: %s (robots.txt unreachable: "
                    "disallow all for the run)",
                    x->lk->url,
                    x->lk->robots_for == NULL ? "/robots.txt" : "",
                    curl_easy_strerror(code));
        }
        sl__bi_web_robots_done(
            c,
            x,
            code == CURLE_OK || (code == CURLE_WRITE_ERROR && x->robots_full)
                ? status
                : 0);
        return 1;
    }
    if (x->lk->kind == K_SITEMAP) {
        sl__bi_web_sitemap_done(c, x, code, status);
        return 1;
    }
    return 0;
}

/* A transfer ended with @code. */
static void
finish(struct web_crawl *c, struct web_xfer *x, CURLcode code)
{
    long status = 0;
    int cut =
        code == CURLE_WRITE_ERROR &&
        (x->headers_only || x->refused_type || x->too_large || x->robots_full);

    (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK && !cut) {
        status = status > 0 && code == CURLE_FILESIZE_EXCEEDED ? status : 0;
    }
    host_release(c, x->lk->host, status, x->retry_after_ms);
    if (finish_aux(c, x, code, status, cut)) {
        return;
    }
    if (code == CURLE_FILESIZE_EXCEEDED || x->too_large) {
        SL_WARN("webCrawler: %s: larger than maxSize", x->lk->url);
        sl__bi_web_start_failed(c,
                                x->lk,
                                "links.skipped.tooLarge",
                                0,
                                "larger than filters.maxSize");
        return;
    }
    if (x->refused_type) {
        sl__bi_web_start_failed(c,
                                x->lk,
                                "links.skipped.contentType",
                                0,
                                "content type not in filters.contentTypes");
        return;
    }
    if (code != CURLE_OK && !cut) {
        SL_WARN("webCrawler: %s: %s", x->lk->url, curl_easy_strerror(code));
        sl__bi_web_start_failed(c,
                                x->lk,
                                "links.failed.network",
                                1,
                                "%s",
                                curl_easy_strerror(code));
        return;
    }
    if (status == 429 || status == 503) {
        if (x->lk->retries < MAX_RETRIES) {
            x->lk->retries++;
            x->lk->next = c->pending;
            c->pending = x->lk; /* the host table says when */
            x->lk = NULL;
            count(c, "links.retried");
        } else {
            SL_WARN("webCrawler: %s: HTTP %ld, given up", x->lk->url, status);
            sl__bi_web_start_failed(c,
                                    x->lk,
                                    "links.failed.throttled",
                                    1,
                                    "HTTP %ld, given up",
                                    status);
        }
        return;
    }
    if (x->lk->kind == K_FETCH && status >= 200 && status < 300) {
        sl__bi_web_fetched(c, x, status);
        return;
    }
    if (x->lk->kind == K_FETCH && status >= 300 && status < 400) {
        SL_WARN("webFetcher: %s: HTTP %ld (moved since the crawl)",
                x->lk->url,
                status);
        count(c, "links.failed.redirect");
        web_doc(c, x->lk, "links.failed.redirect", "moved since the crawl");
        return;
    }
    if (status >= 300 && status < 400 && x->location[0] != '\0') {
        char *to = NULL;

        if (!c->follow_redirects || x->lk->redirects >= c->max_redirects) {
            sl__bi_web_start_failed(c,
                                    x->lk,
                                    "links.skipped.redirects",
                                    0,
                                    "HTTP %ld, redirect not followed",
                                    status);
            return;
        }
        if (sl_web_url_resolve(x->lk->url, x->location, &to) != 0) {
            sl__bi_web_start_failed(c,
                                    x->lk,
                                    "links.skipped.badRedirect",
                                    0,
                                    "HTTP %ld, bad redirect",
                                    status);
            return;
        }
        count(c, "links.redirected");
        /* same depth; the filters apply now, visited and robots when it
         * starts */
        if (!sl__bi_web_link_passes(c, to, x->lk->depth)) {
            sl__bi_web_start_failed(c,
                                    x->lk,
                                    "links.skipped.redirectFiltered",
                                    0,
                                    "redirect to %.512s, refused by filters",
                                    to);
        } else {
            struct web_link *lk = sl__bi_web_enqueue(
                c, to, x->lk->depth, x->lk->redirects + 1, K_PAGE);

            if (lk != NULL) {        /* NULL: invalid, counted */
                lk->not_before = -1; /* marks: visit check needed */
            }
        }
        sl_free(to);
        return;
    }
    if (status < 200 || status >= 300) {
        SL_WARN("webCrawler: %s: HTTP %ld", x->lk->url, status);
        if (c->no_links && (status == 404 || status == 410)) {
            sl__bi_web_due_gone(c, x->lk->url);
        }
        sl__bi_web_start_failed(c,
                                x->lk,
                                status >= 500 ? "links.failed.server"
                                              : "links.failed.client",
                                status >= 500,
                                "HTTP %ld",
                                status);
        return;
    }
    sl__bi_web_page_done(c, x, status);
}

/* Run transfers until nothing is pending or running. */
int
sl__bi_web_loop(struct web_crawl *c)
{
    int rc = 0;

    while ((c->pending != NULL || c->running > 0) && !c->fatal) {
        int64_t wake = -1;
        int still = 0;
        int timeout = 200;
        CURLMsg *m = NULL;
        int left = 0;
        unsigned ended = 0;

        if (sl_task_is_canceled(c->ctx)) {
            rc = SL_ECANCELED;
            break;
        }
        rc = schedule(c, &wake);
        if (rc != 0) {
            break;
        }
        (void)curl_multi_perform(c->multi, &still);
        while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
            struct web_xfer *x = NULL;

            if (m->msg != CURLMSG_DONE) {
                continue;
            }
            (void)curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &x);
            (void)curl_multi_remove_handle(c->multi, m->easy_handle);
            c->running--;
            for (size_t i = 0; i < MAX_PARALLEL; i++) {
                if (c->act[i] == x) {
                    c->act[i] = NULL;
                }
            }
            finish(c, x, m->data.result);
            sl__bi_web_xfer_free(x);
            ended++;
        }
        if (c->running == 0 && c->ready != NULL) {
            sl__bi_web_extract_ready(c);
        }
        if (c->pending == NULL && c->running == 0) {
            break;
        }
        if (ended > 0 && c->pending != NULL) {
            /* places and hosts were freed since schedule() looked:
             * start what may start now instead of sleeping on a wake
             * time computed before */
            continue;
        }
        if (wake >= 0) {
            int64_t d = wake - sl_mono_ms();

            timeout = d < 1 ? 1 : d > 200 ? 200 : (int)d;
        }
        (void)curl_multi_poll(c->multi, NULL, 0, timeout, NULL);
    }
    sl__bi_web_robots_release(c);
    return rc;
}

/* ------------------------------------------------------------------------
 * Set-up and clean-up.
 * --------------------------------------------------------------------- */

/*
 * The owner of this task's visited marks: a hash of its input objects
 * (the start task: of "start"), which a retry of the task keeps while
 * its id changes.  So a retry fetches again what a lost attempt marked,
 * and two different tasks never fetch one URL twice.
 */
static uint64_t
task_owner(const struct sl_task_ctx *ctx)
{
    const json_t *in = json_object_get(
        json_object_get(sl_task_json(ctx), "input"), SLOT_LINKS);
    uint64_t h = 14695981039346656037ull;
    const json_t *v = NULL;
    const char *p = "start";
    size_t i = 0;

    json_array_foreach(in, i, v)
    {
        p = json_string_value(json_object_get(v, "id"));
        for (; p != NULL && *p != '\0'; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        }
        h = (h ^ 0xff) * 1099511628211ull;
        p = NULL;
    }
    for (; p != NULL && *p != '\0'; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    }
    return h != 0 ? h : 1;
}

int
sl__bi_web_init(struct sl_task_ctx *ctx, struct web_crawl *c)
{
    const json_t *filters = sl_task_param(ctx, "filters");
    const json_t *pol = sl_task_param(ctx, "politeness");
    const json_t *v = NULL;
    uint64_t delay = DEFAULT_DELAY_MS;
    uint64_t maxc = 1;
    uint64_t par = DEFAULT_PARALLEL;
    const char *run_id = NULL;
    struct sl_err err;
    int rc = 0;

    memset(c, 0, sizeof(*c));
    c->ctx = ctx;
    /* known before any link is held for a visit (page_links, visit) */
    c->links_connected = sl_task_output_connected(ctx, SLOT_LINKS);
    c->source = sl_task_param_str(ctx, "dataSource");
    if (c->source == NULL || c->source[0] == '\0') {
        sl_task_set_message(ctx, "parameter dataSource is required");
        return SL_EINVAL;
    }
    if ((filters != NULL && !json_is_object(filters)) ||
        (pol != NULL && !json_is_object(pol))) {
        sl_task_set_message(ctx, "filters and politeness must be objects");
        return SL_EINVAL;
    }
    if (sl_task_param_u64(
            ctx, "linksPerBulk", DEFAULT_LINKS_PER_BULK, &c->links_per_bulk) !=
            0 ||
        c->links_per_bulk == 0 ||
        sl_worker_json_u64(json_object_get(filters, "maxCrawlDepth"),
                           UINT64_MAX,
                           &c->max_depth) != 0 ||
        sl_worker_json_u64(json_object_get(filters, "maxSize"),
                           DEFAULT_MAX_SIZE,
                           &c->max_size) != 0 ||
        c->max_size == 0 || c->max_size > SIZE_MAX / 2 ||
        sl_worker_json_u64(json_object_get(filters, "maxRedirects"),
                           DEFAULT_MAX_REDIRECTS,
                           &c->max_redirects) != 0 ||
        sl_worker_json_u64(
            json_object_get(pol, "delayMs"), DEFAULT_DELAY_MS, &delay) != 0 ||
        sl_worker_json_u64(
            json_object_get(pol, "maxConnectionsPerHost"), 1, &maxc) != 0 ||
        maxc == 0 || maxc > MAX_PARALLEL ||
        sl_task_param_u64(ctx, "timeoutMs", TOTAL_TIMEOUT_MS, &c->timeout_ms) !=
            0 ||
        c->timeout_ms == 0 || c->timeout_ms > 3600000 ||
        sl_task_param_u64(ctx,
                          "connectTimeoutMs",
                          CONNECT_TIMEOUT_MS,
                          &c->connect_timeout_ms) != 0 ||
        c->connect_timeout_ms == 0 || c->connect_timeout_ms > 3600000 ||
        sl_worker_json_u64(json_object_get(pol, "parallelTransfers"),
                           DEFAULT_PARALLEL,
                           &par) != 0 ||
        par == 0 || par > MAX_PARALLEL || delay > 3600000) {
        sl_task_set_message(ctx,
                            "linksPerBulk, filters.maxCrawlDepth, "
                            "filters.maxSize, filters.maxRedirects, "
                            "politeness.delayMs, timeoutMs, "
                            "connectTimeoutMs, "
                            "politeness.maxConnectionsPerHost and "
                            "politeness.parallelTransfers must be numbers "
                            "in range");
        return SL_EINVAL;
    }
    c->pol.gap_ms = (int64_t)delay;
    c->pol.max_inflight = (unsigned)maxc;
    c->throttle = sl_task_param(ctx, "throttle");
    c->parallel = (unsigned)par;
    v = json_object_get(filters, "followRedirects");
    c->follow_redirects =
        !(json_is_false(v) ||
          (json_is_string(v) && strcmp(json_string_value(v), "false") == 0));
    v = json_object_get(pol, "respectRobots");
    c->robots =
        !(json_is_false(v) ||
          (json_is_string(v) && strcmp(json_string_value(v), "false") == 0));
    v = sl_task_param(ctx, "extractText");
    c->extract_text = sl__bi_json_true(v);
    /* as the textExtractor reads it; only with extractText */
    if (c->extract_text && sl__bi_max_text(ctx, &c->max_text) != 0) {
        return SL_EINVAL;
    }
    v = sl_task_param(ctx, "followSitemaps");
    c->follow_sitemaps = sl__bi_json_true(v);
    v = sl_task_param(ctx, "mergeIndexPages");
    c->merge_index = !json_is_false(v); /* default true */
    c->ua = json_string_value(json_object_get(pol, "userAgent"));
    if (c->ua == NULL || c->ua[0] == '\0') {
        c->ua = DEFAULT_UA;
    }
    v = sl_task_param(ctx, "caFile");
    if (v != NULL && (!json_is_string(v) || json_string_length(v) == 0 ||
                      access(json_string_value(v), R_OK) != 0)) {
        sl_task_set_message(ctx,
                            "caFile: the path of a readable PEM file of CA "
                            "certificates");
        return SL_EINVAL;
    }
    c->ca_file = json_string_value(v);
    v = json_object_get(filters, "contentTypes");
    if (v != NULL && !json_is_array(v)) {
        sl_task_set_message(ctx, "filters.contentTypes: an array of prefixes");
        return SL_EINVAL;
    }
    c->types = (json_t *)v;
    rc = sl__bi_patterns_init(ctx, filters, "urlPatterns", &c->urls);
    if (rc != 0) {
        return rc;
    }
    (void)pthread_once(&global_once, global_init);
    c->delta = sl_task_services(ctx)->delta;
    run_id = json_string_value(json_object_get(
        json_object_get(sl_task_json(ctx), "properties"), "jobRunId"));
    if (c->delta != NULL) {
        sl_err_clear(&err);
        rc = sl__bi_delta_run(
            ctx, c->delta, c->source, run_id ? run_id : "", &c->seq, &err);
        if (rc != 0) {
            sl_task_note_error(ctx, rc);
            sl_task_set_message(ctx, "delta service: %s", err.message);
            return rc;
        }
    }
    c->owner = task_owner(ctx);
    c->multi = sl__bi_web_multi();
    c->emitted = json_object();
    c->url_cache = sl_web_url_cache_new(0);
    c->seen = json_object();
    c->robots_waited = json_object();
    return c->multi != NULL ? 0 : SL_EINTERNAL;
}

/* Free what a task of either worker holds (also after an early error). */
void
sl__bi_web_cleanup(struct web_crawl *c)
{
    size_t i = 0;

    while (c->pending != NULL) {
        struct web_link *lk = c->pending;

        c->pending = lk->next;
        sl__bi_web_link_free(lk);
    }
    while (c->ready != NULL) {
        sl__bi_web_ready_pop(c);
    }
    for (i = 0; i < MAX_PARALLEL; i++) {
        struct web_xfer *x = c->act[i]; /* still running after a cancel */

        if (x != NULL) {
            (void)curl_multi_remove_handle(c->multi, x->easy);
            host_release(c, x->lk->host, 0, -1);
            sl__bi_web_xfer_free(x);
            c->act[i] = NULL;
        }
    }
    sl__bi_web_drop_pending(c);
    sl_free(c->vpend);
    sl_free(c->vdepth);
    c->vpend = NULL;
    c->vdepth = NULL;
    c->multi = NULL; /* the thread's: kept with its idle connections */
    sl__bi_patterns_free(&c->urls);
    json_decref(c->emitted);
    sl_web_url_cache_free(c->url_cache);
    c->url_cache = NULL;
    json_decref(c->seen);
    json_decref(c->robots_waited);
    c->emitted = c->seen = c->robots_waited = NULL;
    sl_text_ud_free(c->ud);
    c->ud = NULL;
}
