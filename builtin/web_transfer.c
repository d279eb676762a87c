/*
 * One transfer of a web task (web_int.h): the libcurl handles each worker
 * thread keeps, the options of a transfer, its headers, and its body:
 * kept, spooled, fed to the streaming link extractor or the sitemap
 * parser, or cut; and the body written as an attachment.
 *
 * HTML pages keep their content as attachment `httpContent` (the
 * webFetcher need not fetch them again).  Other types are fetched only up
 * to their headers when they have an ETag or Last-Modified (the delta
 * hash), else whole (the hash is their SHA-256), within maxSize.
 *
 * Memory per transfer is bounded by SPOOL_AT, not by maxSize: a body is
 * kept in memory up to SPOOL_AT bytes, then moved to an unlinked temp
 * file and written to the output from there; an HTML page is fed to the
 * streaming link extractor and the SHA-256 is taken as the bytes arrive.
 * The links of a page are held (at most LINKS_BUF_MAX bytes) until the
 * page is complete, so a page that fails or is cut gives no links.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "builtin/web_int.h"

#define SPOOL_AT          ((size_t)256 << 10) /* a bigger body goes to a file */
#define LINKS_BUF_MAX     ((size_t)2 << 20)   /* links held per page */
#define ROBOTS_MAX        ((size_t)512 << 10)
#define LOW_SPEED_SECONDS 20L
#define RETRY_AFTER_MAX_S 86400LL /* longer Retry-After: this */

/* ------------------------------------------------------------------------
 * The libcurl state of a worker thread.
 * --------------------------------------------------------------------- */

/* Each worker thread keeps one libcurl multi handle from task to task, so
 * its connection cache (keep-alive connections, DNS) outlives a task: the
 * next task on the thread reuses the connections instead of connecting
 * again (libcurl does not support sharing connections between threads,
 * hence one per thread).  It also keeps up to EASY_IDLE_MAX easy handles
 * of ended transfers for the next ones (curl_easy_reset instead of a
 * new handle per page: an easy handle is a large allocation).  Freed when
 * the thread ends. */
#define EASY_IDLE_MAX 64

struct thread_curl {
    CURLM *multi;
    CURL *idle[EASY_IDLE_MAX]; /* reset, not in the multi */
    size_t nidle;
};

static pthread_key_t g_multi_key;

static void
multi_destroy(void *p)
{
    struct thread_curl *t = p;

    while (t->nidle > 0) {
        curl_easy_cleanup(t->idle[--t->nidle]);
    }
    (void)curl_multi_cleanup(t->multi);
    sl_free(t);
}

void
sl__bi_web_transfer_init(void)
{
    if (pthread_key_create(&g_multi_key, multi_destroy) != 0) {
        sl_panic("webCrawler: pthread_key_create failed");
    }
}

/* This thread's libcurl state (made on first use), or NULL. */
static struct thread_curl *
thread_curl(void)
{
    struct thread_curl *t = pthread_getspecific(g_multi_key);

    if (t == NULL) {
        t = sl_calloc(1, sizeof(*t));
        t->multi = curl_multi_init();
        if (t->multi == NULL || pthread_setspecific(g_multi_key, t) != 0) {
            (void)curl_multi_cleanup(t->multi);
            sl_free(t);
            t = NULL;
        }
    }
    return t;
}

/* The multi handle of this thread, or NULL. */
CURLM *
sl__bi_web_multi(void)
{
    struct thread_curl *t = thread_curl();

    return t != NULL ? t->multi : NULL;
}

/* An easy handle with default options: an idle one of this thread, or a
 * new one (NULL when libcurl fails). */
static CURL *
easy_get(void)
{
    struct thread_curl *t = thread_curl();

    if (t != NULL && t->nidle > 0) {
        return t->idle[--t->nidle];
    }
    return curl_easy_init();
}

/* Done with @easy (not in a multi handle): kept for easy_get, reset, or
 * freed when this thread keeps enough. */
static void
easy_put(CURL *easy)
{
    struct thread_curl *t = thread_curl();

    if (t != NULL && t->nidle < EASY_IDLE_MAX) {
        curl_easy_reset(easy);
        t->idle[t->nidle++] = easy;
        return;
    }
    curl_easy_cleanup(easy);
}

/* ------------------------------------------------------------------------
 * Content types.
 * --------------------------------------------------------------------- */

/* The MIME type of Content-Type @ct into @mime (lower case, no
 * parameters) and its charset into @charset (may be empty). */
void
sl__bi_web_split_ctype(
    const char *ct, char *mime, size_t mcap, char *cs, size_t ccap)
{
    const char *semi = strchr(ct, ';');
    const char *p = NULL;
    size_t n = semi != NULL ? (size_t)(semi - ct) : strlen(ct);
    size_t i = 0;

    while (n > 0 && isspace((unsigned char)ct[n - 1])) {
        n--;
    }
    for (i = 0; i < n && i + 1 < mcap; i++) {
        mime[i] = (char)tolower((unsigned char)ct[i]);
    }
    mime[i] = '\0';
    cs[0] = '\0';
    p = semi != NULL ? strcasestr(semi, "charset=") : NULL;
    if (p != NULL) {
        p += 8;
        p += *p == '"' ? 1 : 0;
        for (i = 0; p[i] != '\0' && p[i] != '"' && p[i] != ';' &&
                    !isspace((unsigned char)p[i]) && i + 1 < ccap;
             i++) {
            cs[i] = p[i];
        }
        cs[i] = '\0';
    }
}

static int
is_html(const char *mime)
{
    return strcmp(mime, "text/html") == 0 ||
           strcmp(mime, "application/xhtml+xml") == 0;
}

/* Is @mime allowed by filters.contentTypes (prefixes; none: all)? */
static int
type_allowed(const struct web_crawl *c, const char *mime)
{
    const json_t *v = NULL;
    size_t i = 0;

    if (c->types == NULL) {
        return 1;
    }
    json_array_foreach(c->types, i, v)
    {
        const char *t = json_string_value(v);

        if (t != NULL && strncasecmp(mime, t, strlen(t)) == 0) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Headers.
 * --------------------------------------------------------------------- */

/* Copy header value @v (@n bytes, trimmed) into @dst. */
static void
header_value(const char *v, size_t n, char *dst, size_t cap)
{
    while (n > 0 && isspace((unsigned char)*v)) {
        v++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)v[n - 1])) {
        n--;
    }
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static size_t
on_header(char *buf, size_t size, size_t nitems, void *arg)
{
    struct web_xfer *x = arg;
    size_t n = size * nitems;
    static const struct {
        const char *name;
        size_t off;
        size_t cap;
    } known[] = {
        {"content-type:", offsetof(struct web_xfer, ctype), HEADER_MAX},
        {"etag:", offsetof(struct web_xfer, etag), HEADER_MAX},
        {"last-modified:", offsetof(struct web_xfer, lastmod), HEADER_MAX},
        {"location:", offsetof(struct web_xfer, location), HEADER_MAX * 8},
    };
    size_t i = 0;

    if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
        /* a new response (after 100 Continue): forget the last one */
        x->ctype[0] = x->etag[0] = x->lastmod[0] = x->location[0] = '\0';
        x->retry_after_ms = -1;
        x->xrobots = 0;
        return n;
    }
    if (n > 13 && strncasecmp(buf, "x-robots-tag:", 13) == 0) {
        char v[HEADER_MAX];

        header_value(buf + 13, n - 13, v, sizeof(v));
        x->xrobots |= sl_web_robots_tag(v, x->c->ua);
        return n;
    }
    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        size_t k = strlen(known[i].name);

        if (n > k && strncasecmp(buf, known[i].name, k) == 0) {
            header_value(
                buf + k, n - k, (char *)x + known[i].off, known[i].cap);
            return n;
        }
    }
    if (n > 12 && strncasecmp(buf, "retry-after:", 12) == 0) {
        char v[64];
        char *end = NULL;
        long long s = 0;

        header_value(buf + 12, n - 12, v, sizeof(v));
        s = strtoll(v, &end, 10);
        if (end != v && *end == '\0' && s >= 0) {
            /* the host table waits at most an hour anyway */
            x->retry_after_ms =
                (s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : s) * 1000;
        } else {
            /* RFC 9110 10.2.3: or an HTTP-date; one in the past means
             * now */
            time_t when = curl_getdate(v, NULL);
            time_t now = time(NULL);

            if (when != (time_t)-1) {
                int64_t d = when > now ? (int64_t)(when - now) : 0;

                x->retry_after_ms =
                    (d > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : d) * 1000;
            }
        }
    }
    return n;
}

/* ------------------------------------------------------------------------
 * Bodies.
 * --------------------------------------------------------------------- */

/* A link of an HTML page, from the link extractor while the page
 * arrives: held until the page is complete (page_links decides). */
int
sl__bi_web_on_link(void *arg, const char *url, enum sl_web_link_kind kind)
{
    struct web_xfer *x = arg;
    size_t n = strlen(url) + 1;

    if (kind == SL_WEB_LINK_CANONICAL && x->canonical == NULL) {
        x->canonical =
            sl_strdup(url); /* also when its links are not followed */
    }
    if ((x->xrobots & SL_WEB_NOFOLLOW) ||
        (x->lx != NULL && sl_web_links_nofollow(x->lx))) {
        return 0; /* X-Robots-Tag or meta robots nofollow (counted once
                   * per page; meta's reports the canonical link only) */
    }
    if (n > LINKS_BUF_MAX - x->links.len) {
        count(x->c, "links.overLimit");
        return 0;
    }
    (void)sl_buf_append(&x->links, url, n); /* within its limit */
    return 0;
}

/* The first body bytes: decide whether the body is wanted. */
static void
decide_body(struct web_xfer *x)
{
    char mime[256];
    char cs[64];
    long status = 0;

    x->body_decided = 1;
    (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    sl__bi_web_split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    if (x->lk->kind == K_PROBE) { /* its hash only */
        if (status >= 200 && status < 300) {
            x->sha = sl_sha256_new();
        }
        return;
    }
    if (x->lk->kind == K_ROBOTS || x->lk->kind == K_FETCH ||
        x->lk->kind == K_SITEMAP) {
        x->keep = status >= 200 && status < 300;
        return;
    }
    if (status < 200 || status >= 300) {
        x->keep = 0; /* error pages and redirects: not needed */
        return;
    }
    if (!type_allowed(x->c, mime)) {
        x->refused_type = 1;
        return;
    }
    if (is_html(mime) && x->c->extract_text && x->lk->kind == K_PAGE) {
        x->keep = 1;
        x->parse_at_end = 1; /* links and text in one parse: parse_page */
    } else if (is_html(mime)) {
        x->keep = 1;
        /* the links are read as the page arrives, whatever its size;
         * without the extractor (it failed to start) the page has none */
        if (sl_web_links_begin(x->lk->url,
                               cs[0] != '\0' ? cs : NULL,
                               LINKS_PER_PAGE,
                               sl__bi_web_on_link,
                               x,
                               &x->lx) == 0) {
            sl_web_links_use_cache(x->lx, x->c->url_cache);
        }
    } else if (x->etag[0] != '\0' || x->lastmod[0] != '\0') {
        x->headers_only = 1; /* the webFetcher fetches it when changed */
    } else {
        x->keep = 1; /* no validator: the content is the delta hash */
    }
    if (x->keep && ((x->etag[0] == '\0' && x->lastmod[0] == '\0') ||
                    (x->lk->dir_sha != NULL && x->lk->dir_sha[0] != '\0'))) {
        x->sha = sl_sha256_new(); /* also to compare with the probe's */
    }
}

/* Write @n bytes to the spool file of @x: 0, or -1 with the task failed
 * (a full disk: recoverable, retried later). */
static int
spool_write(struct web_xfer *x, const char *buf, size_t n)
{
    if (sl_write_all(x->spool, buf, n) != 0) {
        sl_task_set_message(
            x->c->ctx, "temporary file: %s", sl_errno_str(errno));
        x->c->fatal = 1;
        return -1;
    }
    x->spooled += n;
    return 0;
}

/*
 * Keep @n more bytes of a page or fetched resource, never more than
 * maxSize in all (then the transfer is cut).  Up to SPOOL_AT bytes stay
 * in memory; past it they move to an unlinked temp file (a compound of
 * the webExtractor goes there from the start), so a transfer holds at
 * most SPOOL_AT bytes of its body in memory whatever maxSize is.
 */
static size_t
keep_body(struct web_xfer *x, const char *buf, size_t n)
{
    if (n > x->c->max_size - body_size(x)) {
        x->too_large = 1;
        return 0;
    }
    if (x->spool < 0 && n <= SPOOL_AT - x->body.len) {
        return sl_buf_append(&x->body, buf, n) == 0 ? n : 0;
    }
    if (x->spool < 0) {
        x->spool = sl_text_spool_open();
        if (x->spool < 0) {
            sl_task_set_message(
                x->c->ctx, "temporary file: %s", sl_errno_str(errno));
            x->c->fatal = 1;
            return 0;
        }
        if (spool_write(x, x->body.data, x->body.len) != 0) {
            return 0;
        }
        sl_buf_free(&x->body); /* its bytes are in the file now */
    }
    return spool_write(x, buf, n) == 0 ? n : 0;
}

static size_t
on_body(char *buf, size_t size, size_t nmemb, void *arg)
{
    struct web_xfer *x = arg;
    size_t n = size * nmemb;

    if (!x->body_decided) {
        decide_body(x);
    }
    if (x->refused_type || x->headers_only) {
        return 0; /* cuts the transfer: CURLE_WRITE_ERROR, expected */
    }
    if (x->lk->kind == K_PROBE && x->sha != NULL) {
        if (n > x->c->max_size - x->hashed) {
            x->too_large = 1;
            return 0;
        }
        x->hashed += n;
        sl_sha256_update(x->sha, buf, n);
        return n;
    }
    if (!x->keep) {
        return n;
    }
    if (x->lk->kind == K_SITEMAP) {
        return sl__bi_web_sitemap_body(x, buf, n);
    }
    if (x->lk->kind == K_ROBOTS) {
        if (n > ROBOTS_MAX - x->body.len) {
            /* RFC 9309 2.5: the first part is parsed (the parser cuts
             * it at 500 KiB on a line end), the rest is not read */
            (void)sl_buf_append(
                &x->body, buf, ROBOTS_MAX - x->body.len); /* fits */
            x->robots_full = 1;
            return 0; /* cuts the transfer: CURLE_WRITE_ERROR, expected */
        }
        (void)sl_buf_append(&x->body, buf, n); /* within its limit */
        return n;
    }
    if (keep_body(x, buf, n) != n) {
        return 0;
    }
    if (x->sha != NULL) {
        sl_sha256_update(x->sha, buf, n);
    }
    if (x->lx != NULL &&
        sl_web_links_feed(x->lx, buf, n) != 0) { /* broken: no more links */
        sl_web_links_free(x->lx);
        x->lx = NULL;
    }
    return n;
}

struct web_xfer *
sl__bi_web_xfer_new(struct web_crawl *c, struct web_link *lk)
{
    struct web_xfer *x = sl_calloc(1, sizeof(*x));
    char *url = NULL;

    x->c = c;
    x->lk = lk;
    x->retry_after_ms = -1;
    x->spool = -1;
    if (lk->kind == K_FETCH && c->extract != NULL) {
        x->spool = sl_text_spool_open(); /* a compound: never in memory */
        if (x->spool < 0) {
            /* not a lost link: dropped, a `full` run would delete the
             * compound and its elements; the task is retried instead */
            sl_task_set_message(
                c->ctx, "temporary file: %s", sl_errno_str(errno));
            c->fatal = 1;
            sl_free(x);
            return NULL;
        }
    }
    sl_buf_init(&x->body, lk->kind == K_ROBOTS ? ROBOTS_MAX : SPOOL_AT);
    sl_buf_init(&x->links, LINKS_BUF_MAX);
    x->easy = easy_get();
    if (x->easy == NULL) {
        if (x->spool >= 0) {
            (void)close(x->spool);
        }
        sl_free(x);
        return NULL;
    }
    if (lk->kind == K_ROBOTS && lk->robots_for == NULL) {
        url = sl_asprintf("%s/robots.txt", lk->host);
    }
    (void)curl_easy_setopt(x->easy, CURLOPT_URL, url ? url : lk->url);
    sl_free(url);
    (void)curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
    (void)curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
    (void)curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
    (void)curl_easy_setopt(x->easy, CURLOPT_USERAGENT, c->ua);
    (void)curl_easy_setopt(x->easy, CURLOPT_ACCEPT_ENCODING, "");
    /* HTTP/2 where the server offers it in the TLS handshake (ALPN),
     * HTTP/1.1 otherwise; certificates and host names verified */
    (void)curl_easy_setopt(
        x->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    (void)curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYPEER, 1L);
    (void)curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca_file != NULL) {
        /* a private CA (an intranet's): trusted instead of the system's
         * bundle, verification still on; a connection is reused only by
         * transfers with the same CA file (libcurl compares them) */
        (void)curl_easy_setopt(x->easy, CURLOPT_CAINFO, c->ca_file);
    }
    (void)curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(
        x->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
    (void)curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
    (void)curl_easy_setopt(x->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    (void)curl_easy_setopt(x->easy, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_SECONDS);
    (void)curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
    (void)curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
    (void)curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
    return x;
}

const char *
sl__bi_web_body_sha(struct web_xfer *x)
{
    if (x->sha_hex[0] == '\0' && x->sha != NULL) {
        sl_sha256_final_hex(x->sha, x->sha_hex);
    }
    return x->sha_hex;
}

void
sl__bi_web_xfer_free(struct web_xfer *x)
{
    if (x != NULL) {
        if (x->easy != NULL) {
            easy_put(x->easy);
        }
        if (x->spool >= 0) {
            (void)close(x->spool);
        }
        sl_web_sitemap_free(x->sm);
        sl_web_links_free(x->lx);
        sl_text_html_free(x->ht);
        sl_sha256_free(x->sha);
        sl_buf_free(&x->body);
        sl_buf_free(&x->links);
        sl_free(x->canonical);
        sl__bi_web_link_free(x->lk);
        sl_free(x);
    }
}

/* ------------------------------------------------------------------------
 * A body as an attachment, or in pieces.
 * --------------------------------------------------------------------- */

/* Copy the body of @x from its spool file to the current attachment of
 * @w; 0 or SL_EIO (task message set) or a writer error. */
static int
copy_spool(struct web_crawl *c,
           const struct web_xfer *x,
           struct sl_bulk_writer *w)
{
    char *buf = sl_malloc(COPY_BUF);
    uint64_t left = x->spooled;
    off_t off = 0;
    int rc = 0;

    while (rc == 0 && left > 0) {
        size_t want = left < COPY_BUF ? (size_t)left : COPY_BUF;
        ssize_t n = pread(x->spool, buf, want, off);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            sl_task_set_message(c->ctx,
                                "temporary file: %s",
                                n < 0 ? sl_errno_str(errno) : "truncated");
            rc = SL_EIO;
            break;
        }
        rc = sl_bulk_writer_attachment_write(w, buf, (size_t)n);
        off += n;
        left -= (uint64_t)n;
    }
    sl_free(buf);
    return rc;
}

/*
 * Write @meta to output @slot, with (when @x is not NULL) the text of @x
 * as attachment text when extractText took it, else its body (from memory
 * or its spool file) as attachment httpContent, and count it as
 * @counter.  An unconnected slot writes nothing; an output error fails
 * the task (recoverable).
 */
void
sl__bi_web_write_page(struct web_crawl *c,
                      const char *slot,
                      const json_t *meta,
                      const struct web_xfer *x,
                      const char *counter)
{
    struct sl_bulk_writer *w = NULL;
    int rc =
        meta != NULL ? sl_task_output_writer(c->ctx, slot, &w) : SL_EINTERNAL;

    if (rc == SL_ENOENT) {
        return;
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_begin(w, meta);
    }
    if (rc == 0 && x != NULL && x->text_ok) {
        const char *text = NULL;
        const char *title = NULL;
        const char *cs = NULL;
        size_t len = 0;

        (void)sl_text_html_end(x->ht, &text, &len, &title, &cs);
        rc = sl_bulk_writer_attachment_begin(w, TEXT_ATT, len);
        if (rc == 0 && len > 0) {
            rc = sl_bulk_writer_attachment_write(w, text, len);
        }
    } else if (rc == 0 && x != NULL) {
        rc = sl_bulk_writer_attachment_begin(w, CONTENT_ATT, body_size(x));
        if (rc == 0 && x->spool >= 0) {
            rc = copy_spool(c, x, w);
        } else if (rc == 0 && x->body.len > 0) {
            rc = sl_bulk_writer_attachment_write(w, x->body.data, x->body.len);
        }
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(w);
    }
    if (rc != 0) {
        sl_task_set_message(c->ctx, "output %s: %s", slot, sl_strerror(rc));
        c->fatal = 1;
        return;
    }
    count(c, counter);
}

/* Up to @cap bytes of the body of @x from offset @off into *@p: in
 * memory it is pointed at, from the spool file it is read into @buf.
 * Returns the bytes (0 at the end), or -1 with errno set when the spool
 * file cannot be read. */
ssize_t
sl__bi_web_body_piece(const struct web_xfer *x,
                      uint64_t off,
                      char *buf,
                      size_t cap,
                      const char **p)
{
    uint64_t size = body_size(x);
    size_t n = off < size ? (size_t)(size - off < cap ? size - off : cap) : 0;
    ssize_t got = 0;

    *p = ""; /* never NULL: the head of an empty page is "" */
    if (n == 0) {
        return 0;
    }
    if (x->spool < 0) {
        *p = x->body.data + off;
        return (ssize_t)n;
    }
    *p = buf;
    do {
        got = pread(x->spool, buf, n, (off_t)off);
    } while (got < 0 && errno == EINTR);
    if (got == 0) {
        errno = EIO; /* shorter than written */
        return -1;
    }
    return got;
}
