/*
 * webCrawler (SMILA's WebCrawler, docs/workers.md "webCrawler"): crawls web
 * pages with libcurl's multi interface.  The first task of a runOnce run
 * starts at `startUrl`; each task takes a bulk of links (input
 * `linksToCrawl`: the crawler's own, or in standard mode records pushed
 * to the job's bulkbuilder, by `httpUrl` or else `_recordid`),
 * fetches them and writes one record per page to `crawledRecords` and the
 * links it found to `linksToCrawl` (follow-up tasks, in parallel).
 *
 * Politeness is decided when a transfer is started, never by sleeping:
 * the process-wide host table (web/ sl_web_hosts) grants a host or says
 * how long to wait, and the task goes on with other hosts meanwhile; the
 * only wait is curl_multi_poll until the next transfer ends or the next
 * host is due.  robots.txt is fetched once per host and run and kept in a
 * process-wide cache.  Every link is marked visited (delta service,
 * per source and run) before it is fetched, so cycles and links found by
 * several tasks are fetched once, also across a restart.
 *
 * Redirects are not followed by libcurl: a 3xx becomes a new link of the
 * same depth (counted against maxRedirects), so the target goes through
 * the scheme check, the URL filters, robots.txt, politeness and the
 * visited links like any other link, and a redirect loop ends at the
 * visited check.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"
#include "text/text.h"
#include "web/web.h"

#define SLOT_LINKS    "linksToCrawl"
#define SLOT_RECORDS  "crawledRecords"
#define CONTENT_ATT   "httpContent"
#define SLOT_FETCH    "linksToFetch"
#define SLOT_FETCHED  "fetchedLinks"
#define COPY_BUF      ((size_t)64 << 10)
#define SPOOL_AT      ((size_t)256 << 10) /* a bigger body goes to a file */
#define LINKS_BUF_MAX ((size_t)2 << 20)   /* links held per page */

/* webExtractor */
#define SLOT_COMPOUNDS "compounds"
#define SLOT_FILES     "files"

#define DEFAULT_LINKS_PER_BULK 100u
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
#define ATTR_VISITED           "_visited"
#define DEFAULT_MAX_SIZE       ((uint64_t)10 << 20)
#define TEXT_ATT               "text"
#define DEFAULT_MAX_REDIRECTS  5u
#define DEFAULT_DELAY_MS       1000
#define DEFAULT_PARALLEL       8u /* transfers in flight per task */
#define MAX_PARALLEL           64u
#define MAX_RETRIES            3u /* of a URL answered 429/503 */
#define ROBOTS_MAX             ((size_t)512 << 10)
#define CONNECT_TIMEOUT_MS     10000L
#define TOTAL_TIMEOUT_MS       60000L
#define LOW_SPEED_SECONDS      20L
#define HOSTS_MAX              100000u
#define ROBOTS_CACHE_MAX       10000u
#define LINKS_PER_PAGE         10000u
#define HEADER_MAX             1024u
#define BUSY_HOST_POLL_MS      5
#define ROBOTS_POLL_MS         20   /* waiting for another task's robots.txt */
#define SITEMAPS_PER_TASK      100u /* sitemap fetches a task queues */
#define SITEMAP_LINKS_PER_TASK 10000u  /* sitemap URLs a task writes */
#define RETRY_AFTER_MAX_S      86400LL /* longer Retry-After: this */
#define ROBOTS_MAX_REDIRECTS   5u      /* RFC 9309 2.3.1.2 */
#define GATED_MAX              16u     /* refused hosts a pass remembers */
#define DEFAULT_UA             "Sluice/0.1 (+https://example.invalid/sluice)"

/* ------------------------------------------------------------------------
 * Process-wide state: the host table and the robots.txt cache.
 * --------------------------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static struct sl_web_hosts *g_hosts;
static pthread_mutex_t g_robots_mu = PTHREAD_MUTEX_INITIALIZER;
/* "<source> <seq> <hostkey>" -> a struct robots_entry pointer (integer) */
static json_t *g_robots;
/* "<source> <seq> <hostkey>" -> the task (its struct crawl, as an
 * integer) fetching that robots.txt now: other tasks that need it wait
 * for its answer instead of fetching it again (once per host and run,
 * also when parallel tasks meet a new host at the same time).  A struct
 * crawl lives on its worker thread's stack, so one thread's tasks share
 * an address: claims are made inside crawl_loop only and dropped when it
 * returns (robots_release), before the next task can reuse it. */
static json_t *g_robots_claims;

/* A cached robots.txt: the rules, and the sitemaps it names (resolved
 * URLs) for the tasks that find it cached (a retry of the task that
 * fetched it must queue them again, cached_sitemaps). */
struct robots_entry {
    struct sl_web_robots *r;
    json_t *sitemaps; /* array of strings, or NULL */
    int down;         /* unreachable: disallow all for the run */
};

static void
robots_entry_free(struct robots_entry *e)
{
    if (e != NULL) {
        sl_web_robots_free(e->r);
        json_decref(e->sitemaps);
        sl_free(e);
    }
}

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

static void
global_init(void)
{
    (void)curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)sl_web_hosts_new(HOSTS_MAX, &g_hosts);
    g_robots = json_object();
    g_robots_claims = json_object();
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
static CURLM *
thread_multi(void)
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

/* The robots of @key: 1 and *allowed (and, with @down, whether it was
 * unreachable) when known, 0 when not yet.  With @sitemaps: a new copy of
 * the sitemaps it names there (or NULL), for the caller to json_decref. */
static int
robots_lookup(const char *key,
              const char *path,
              int *allowed,
              int *down,
              json_t **sitemaps)
{
    const json_t *v = NULL;
    int known = 0;

    if (sitemaps != NULL) {
        *sitemaps = NULL;
    }
    (void)pthread_mutex_lock(&g_robots_mu);
    v = json_object_get(g_robots, key);
    if (v != NULL) {
        const struct robots_entry *e =
            (const struct robots_entry *)(uintptr_t)json_integer_value(v);

        known = 1;
        if (path != NULL) {
            *allowed = sl_web_robots_allowed(e->r, path);
        }
        if (down != NULL) {
            *down = e->down;
        }
        if (sitemaps != NULL && e->sitemaps != NULL) {
            *sitemaps = json_deep_copy(e->sitemaps);
        }
    }
    (void)pthread_mutex_unlock(&g_robots_mu);
    return known;
}

/* Keep @r and @sitemaps (both taken over; @sitemaps may be NULL) for
 * @key, @down when robots.txt was unreachable; the cache forgets
 * everything when full (robots.txt is then claimed and fetched again). */
static void
robots_store(const char *key,
             struct sl_web_robots *r,
             json_t *sitemaps,
             int down)
{
    struct robots_entry *e = sl_calloc(1, sizeof(*e));
    const char *k = NULL;
    json_t *v = NULL;

    e->r = r;
    e->sitemaps = sitemaps;
    e->down = down;
    (void)pthread_mutex_lock(&g_robots_mu);
    if (json_object_size(g_robots) >= ROBOTS_CACHE_MAX) {
        json_object_foreach(g_robots, k, v)
        {
            robots_entry_free(
                (struct robots_entry *)(uintptr_t)json_integer_value(v));
        }
        json_object_clear(g_robots);
    }
    v = json_object_get(g_robots, key);
    if (v != NULL) {
        robots_entry_free(e); /* another task was faster */
    } else {
        (void)json_object_set_new(
            g_robots, key, json_integer((json_int_t)(uintptr_t)e));
    }
    (void)json_object_del(g_robots_claims, key); /* known now */
    (void)pthread_mutex_unlock(&g_robots_mu);
}

enum robots_claim {
    CLAIM_OTHER = 0, /* another task fetches it */
    CLAIM_KNOWN = 1, /* cached meanwhile */
    CLAIM_NEW = 2,   /* claimed now: the caller fetches it */
    CLAIM_MINE = 3,  /* claimed before by the caller: its fetch is on */
};

/* Whether the task @owner is to fetch the robots.txt of @key. */
static enum robots_claim
robots_claim(const char *key, const void *owner)
{
    json_int_t me = (json_int_t)(uintptr_t)owner;
    enum robots_claim r = CLAIM_NEW;
    const json_t *v = NULL;

    (void)pthread_mutex_lock(&g_robots_mu);
    if (json_object_get(g_robots, key) != NULL) {
        r = CLAIM_KNOWN;
    } else if ((v = json_object_get(g_robots_claims, key)) == NULL) {
        (void)json_object_set_new(g_robots_claims, key, json_integer(me));
    } else {
        r = json_integer_value(v) == me ? CLAIM_MINE : CLAIM_OTHER;
    }
    (void)pthread_mutex_unlock(&g_robots_mu);
    return r;
}

/* The task @owner ends: the robots.txt fetches it claimed and did not
 * answer (canceled, failed) may be claimed by others. */
static void
robots_release(const void *owner)
{
    json_int_t me = (json_int_t)(uintptr_t)owner;
    const char *k = NULL;
    json_t *v = NULL;
    void *tmp = NULL;

    (void)pthread_mutex_lock(&g_robots_mu);
    json_object_foreach_safe(g_robots_claims, tmp, k, v)
    {
        if (json_integer_value(v) == me) {
            (void)json_object_del(g_robots_claims, k);
        }
    }
    (void)pthread_mutex_unlock(&g_robots_mu);
}

/* ------------------------------------------------------------------------
 * Task state.
 * --------------------------------------------------------------------- */

enum kind { K_PAGE, K_ROBOTS, K_FETCH, K_SITEMAP };

struct link {
    struct link *next;
    char *url;          /* normalised */
    char *host;         /* host key */
    uint64_t depth;     /* httpDepth */
    unsigned redirects; /* redirects followed to get here */
    unsigned retries;   /* after 429/503 */
    enum kind kind;
    int64_t not_before; /* monotonic ms */
    int admitted;       /* passed the filters, depth and robots.txt */
    json_t *meta;       /* K_FETCH: the record to complete */
    /* K_ROBOTS after a redirect: the host key whose robots.txt this is
     * (url is the redirect target, host its host key); else NULL */
    char *robots_for;
};

struct xfer {
    struct crawl *c;
    struct link *lk;
    CURL *easy;
    struct sl_buf body;
    char ctype[HEADER_MAX];
    char etag[HEADER_MAX];
    char lastmod[HEADER_MAX];
    char location[HEADER_MAX * 8];
    int64_t retry_after_ms;
    unsigned xrobots; /* X-Robots-Tag: SL_WEB_NOINDEX, SL_WEB_NOFOLLOW */
    int body_decided; /* the first body byte arrived */
    int keep;         /* the body is kept */
    int headers_only; /* the transfer was cut after the headers */
    int too_large;
    int refused_type;
    int robots_full; /* K_ROBOTS: ROBOTS_MAX bytes kept, the rest not read */
    /* the body past SPOOL_AT (a compound of the webExtractor: all of
     * it) goes to this unlinked temp file, or -1 while in memory */
    int spool;
    uint64_t spooled; /* bytes written to it */
    /* K_SITEMAP: the parser the body is fed to, and its first error */
    struct sl_web_sitemap *sm;
    int sm_rc;
    int sm_full; /* cut at SITEMAP_LINKS_PER_TASK */
    /* K_PAGE, HTML: the link extractor fed as the body arrives, and the
     * links it found (URL NUL, repeated) held until the page is done */
    struct sl_web_links *lx;
    struct sl_buf links;
    /* K_PAGE without ETag or Last-Modified: the SHA-256 of the body */
    struct sl_sha256 *sha;
    /* K_PAGE, HTML, extractText: links and text are taken in one parse
     * when the page is done (parse_page); the text, and whether it is
     * complete (the record then carries it instead of httpContent) */
    int parse_at_end;
    struct sl_text_html *ht;
    int text_ok;
    char text_mime[SL_TEXT_MIME_MAX];
};

/* webExtractor: a downloaded compound waiting for its extraction */
struct ready {
    struct ready *next;
    json_t *meta;  /* the compound record, owned */
    int fd;        /* its spooled content, owned */
    uint64_t size; /* bytes in fd */
};

struct crawl {
    struct sl_task_ctx *ctx;
    const char *source;
    uint64_t seq;   /* run sequence of the source */
    uint64_t owner; /* of the visited marks: from the task's input */
    struct sl_delta *delta;
    struct sl_web_politeness pol;
    int robots;
    const char *ua;
    const char *ca_file; /* caFile: trusted CAs instead of the system's */
    uint64_t max_depth;
    uint64_t max_size;
    uint64_t links_per_bulk;
    uint64_t max_redirects;
    uint64_t timeout_ms;         /* timeoutMs: a whole transfer */
    uint64_t connect_timeout_ms; /* connectTimeoutMs */
    int follow_redirects;
    int follow_sitemaps;    /* followSitemaps */
    int extract_text;       /* extractText */
    uint64_t max_text;      /* maxTextBytes */
    struct uchardet *ud;    /* charset detection, created on first use */
    unsigned sitemaps;      /* sitemap fetches queued by this task */
    uint64_t sitemap_links; /* sitemap URLs written by this task */
    json_t *types;          /* allowed content types, or NULL: all */
    struct sl__bi_patterns urls;
    unsigned parallel;
    CURLM *multi;
    struct link *pending;               /* waiting to start */
    unsigned running;                   /* transfers in flight */
    struct xfer *act[MAX_PARALLEL];     /* them, NULL in free places */
    struct sl_web_url_cache *url_cache; /* link resolutions of the task */
    json_t *emitted; /* links written or to be written (pending in vpend)
                        by this task (true), or found visited (false) */
    json_t *seen;    /* links this task visits (its owner marks repeat) */
    /* new links of this task's pages, to be marked visited before they
     * are written (at most vcap; flush_visits) */
    struct sl_delta_link *vpend;
    uint64_t *vdepth;
    size_t nvpend;
    size_t vcap; /* the batch */
    uint64_t links_in_bulk;
    uint64_t links_bulks; /* linksToCrawl bulks begun by this task */
    int ramp;             /* the start task: RAMP_BULKS small bulks first */
    int links_connected;
    int fatal; /* output failed */
    /* webExtractor: downloads are extracted with this */
    struct sl__bi_extract *extract;
    /* webExtractor: compounds downloaded while other transfers were in
     * flight, in the order they were deferred; extracted once none is (their
     * wall-clock timeouts would run during the extraction).  No transfer starts
     * while one waits, so there are at most `parallel` of them. */
    struct ready *ready;
    /* the start URLs of this task (links of depth 0): crawled (a 2xx
     * answer) and failed, with the first failure; none crawled and some
     * failed, or with strategy full one without an answer, fails the task
     * (web_crawl_perform) */
    unsigned start_ok;
    unsigned start_failed;
    unsigned start_transient; /* of start_failed: no answer (start_failed) */
    char start_why[1024];     /* the first failure */
    /* the first transient one when it came after another failure, else "" */
    char start_transient_why[1024];
    json_t *robots_waited; /* hosts whose robots.txt another task fetched */
    int robots_wait;       /* a link waits for another task's robots.txt */
};

static void
link_free(struct link *lk)
{
    if (lk != NULL) {
        sl_free(lk->url);
        sl_free(lk->host);
        sl_free(lk->robots_for);
        json_decref(lk->meta);
        sl_free(lk);
    }
}

static void
count(struct crawl *c, const char *name)
{
    sl_task_counter_add(c->ctx, name, 1);
}

/* Link @lk could not be crawled because of @fmt.  @transient: a failure
 * that says nothing about the page (a network error, 5xx, 429/503 given
 * up, robots.txt unreachable), as against an answer (4xx, robots.txt
 * disallows, the filters refuse): it makes the task incomplete, so the
 * run deletes nothing.  A start URL (a page link of depth 0) is also
 * counted, the first reason kept for the task message. */
static void start_failed(struct crawl *c,
                         const struct link *lk,
                         int transient,
                         const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));

static void
start_failed(
    struct crawl *c, const struct link *lk, int transient, const char *fmt, ...)
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
static struct link *
enqueue(struct crawl *c,
        const char *url,
        uint64_t depth,
        unsigned redirects,
        enum kind kind)
{
    struct link *lk = sl_calloc(1, sizeof(*lk));

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

/* ------------------------------------------------------------------------
 * Outputs.
 * --------------------------------------------------------------------- */

/* Links for the current linksToCrawl bulk: linksPerBulk, or in the
 * start task's first RAMP_BULKS bulks an eighth of it, rounded up. */
static uint64_t
bulk_limit(const struct crawl *c)
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
static void
emit_link(
    struct crawl *c, const char *url, uint64_t depth, int once, int marked)
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

/* The MIME type of Content-Type @ct into @mime (lower case, no
 * parameters) and its charset into @charset (may be empty). */
static void
split_ctype(const char *ct, char *mime, size_t mcap, char *cs, size_t ccap)
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
type_allowed(const struct crawl *c, const char *mime)
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

/*
 * Whether a link to @url at @depth passes filters.urlPatterns and
 * filters.maxCrawlDepth (counted when not).  Checked before a link is
 * written to linksToCrawl and before it is marked visited: a link
 * dropped after its visit would make the URL "already visited" for a
 * shorter path that reaches it later in the run.
 */
static int
link_passes(struct crawl *c, const char *url, uint64_t depth)
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

/* A link of an HTML page, from the link extractor while the page
 * arrives: held until the page is complete (page_links decides). */
static int
on_link(void *arg, const char *url, enum sl_web_link_kind kind)
{
    struct xfer *x = arg;
    size_t n = strlen(url) + 1;

    (void)kind;
    if (x->xrobots & SL_WEB_NOFOLLOW) {
        return 0; /* X-Robots-Tag: nofollow (counted once per page) */
    }
    if (n > LINKS_BUF_MAX - x->links.len) {
        count(x->c, "links.overLimit");
        return 0;
    }
    (void)sl_buf_append(&x->links, url, n); /* within its limit */
    return 0;
}

/* Forget the links held for a visit (vpend), keeping the arrays. */
static void
drop_pending(struct crawl *c)
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
flush_visits(struct crawl *c)
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
            emit_link(c, c->vpend[i].url, c->vdepth[i], 0, 1);
        } else {
            (void)json_object_set_new(
                c->emitted, c->vpend[i].url, json_false());
            count(c,
                  c->vpend[i].result != 0 ? "links.invalid"
                                          : "links.alreadyVisited");
        }
    }
    drop_pending(c);
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
page_links(struct crawl *c, struct xfer *x)
{
    const char *p = x->links.data;
    const char *end = p + x->links.len;
    struct sl_delta_link *dl = NULL;
    uint64_t depth = x->lk->depth + 1;
    size_t n = 0;
    size_t i = 0;

    for (; p != NULL && p < end; p += strlen(p) + 1) {
        n++;
    }
    dl = sl_calloc(n > 0 ? n : 1, sizeof(*dl));
    n = 0;
    for (p = x->links.data; p != NULL && p < end; p += strlen(p) + 1) {
        if (link_passes(c, p, depth) &&
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
            emit_link(c, dl[i].url, depth, 1, 0);
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

static uint64_t
body_size(const struct xfer *x)
{
    return x->spool >= 0 ? x->spooled : (uint64_t)x->body.len;
}

/* Copy the body of @x from its spool file to the current attachment of
 * @w; 0 or SL_EIO (task message set) or a writer error. */
static int
copy_spool(struct crawl *c, const struct xfer *x, struct sl_bulk_writer *w)
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
static void
write_page(struct crawl *c,
           const char *slot,
           const json_t *meta,
           const struct xfer *x,
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

/* Write the record of a fetched page. */
static void
emit_record(struct crawl *c, struct xfer *x, long status)
{
    char mime[256];
    char cs[64];
    char hash[80];
    json_t *meta = NULL;

    split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    if (x->etag[0] != '\0') {
        (void)snprintf(hash, sizeof(hash), "etag:%.70s", x->etag);
    } else if (x->lastmod[0] != '\0') {
        (void)snprintf(hash, sizeof(hash), "lm:%.70s", x->lastmod);
    } else {
        char hex[65];

        if (x->sha != NULL) { /* taken as the body arrived */
            sl_sha256_final_hex(x->sha, hex);
        } else {
            sl_sha256_hex(x->body.data ? x->body.data : "", x->body.len, hex);
        }
        (void)snprintf(hash, sizeof(hash), "sha256:%s", hex);
    }
    meta = json_pack("{s:s, s:s, s:s, s:i, s:s, s:I, s:I, s:s}",
                     "_recordid",
                     x->lk->url,
                     "_source",
                     c->source,
                     sl_task_mapped(c->ctx, "httpUrl"),
                     x->lk->url,
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
        const char *slash = strrchr(x->lk->url, '/');
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
                                                               : x->lk->url));
        count(c, "records.textExtracted");
    }
    if (meta != NULL && is_compound(mime, x->lk->url)) {
        /* the deltaChecker routes it to the webExtractor */
        (void)json_object_set_new(meta, "_isCompound", json_true());
        count(c, "records.compounds");
    }
    write_page(c, SLOT_RECORDS, meta, x->keep ? x : NULL, "records.crawled");
    json_decref(meta);
}

/* ------------------------------------------------------------------------
 * Transfers.
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
    struct xfer *x = arg;
    size_t n = size * nitems;
    static const struct {
        const char *name;
        size_t off;
        size_t cap;
    } known[] = {
        {"content-type:", offsetof(struct xfer, ctype), HEADER_MAX},
        {"etag:", offsetof(struct xfer, etag), HEADER_MAX},
        {"last-modified:", offsetof(struct xfer, lastmod), HEADER_MAX},
        {"location:", offsetof(struct xfer, location), HEADER_MAX * 8},
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
 * Sitemaps (followSitemaps): those robots.txt lists are fetched once per
 * host and run by the task that fetched its robots.txt; their URLs become
 * links of depth 1 in linksToCrawl, so the next tasks apply the visited
 * links, the filters, the depth and robots.txt to them like to any link.
 * --------------------------------------------------------------------- */

/*
 * Test and set @key ("sitemap:<url>", "sitemaps-of:<host>") in this run's
 * visited links for this task's owner (so a retry of the task gets 1
 * again): 1 first, 0 not.  A service error fails the task (recoverable:
 * the sitemaps must not be lost) and returns it.
 */
static int
visit_key(struct crawl *c, const char *key)
{
    struct sl_delta_link dl;
    struct sl_err err;
    int rc = 0;

    if (json_object_get(c->seen, key) != NULL) {
        return 0;
    }
    if (c->delta != NULL) {
        sl_err_clear(&err);
        memset(&dl, 0, sizeof(dl));
        dl.url = key;
        rc =
            sl_delta_visit(c->delta, c->source, c->seq, c->owner, &dl, 1, &err);
        if (rc != 0) {
            sl_task_note_error(c->ctx, rc);
            sl_task_set_message(
                c->ctx, "visited links: %s: %s", key, err.message);
            c->fatal = 1;
            return rc;
        }
    }
    (void)json_object_set_new(c->seen, key, json_true());
    return c->delta == NULL || dl.first > 0;
}

/*
 * Queue sitemap @url (normalised; @level 0: listed by robots.txt, 1: by a
 * sitemap index) unless this run fetched it already: the visited links
 * remember "sitemap:<url>", apart from the page of that URL, so a retried
 * or restarted task does not fetch it twice and a page link to it does
 * not stop it.  At most SITEMAPS_PER_TASK per task, and none once the
 * task wrote SITEMAP_LINKS_PER_TASK sitemap URLs.
 */
static void
queue_sitemap(struct crawl *c, const char *url, uint64_t level)
{
    char *key = NULL;
    int first = 0;

    if (c->sitemaps >= SITEMAPS_PER_TASK) {
        count(c, "sitemaps.skipped");
        return;
    }
    if (c->sitemap_links >= SITEMAP_LINKS_PER_TASK) {
        count(c, "sitemaps.truncated");
        return;
    }
    key = sl_asprintf("sitemap:%s", url);
    first = visit_key(c, key);
    sl_free(key);
    if (first != 1) {
        return; /* fetched in this run already, or the task failed */
    }
    c->sitemaps++;
    (void)enqueue(c, url, level, 0, K_SITEMAP); /* NULL: counted */
}

/*
 * The sitemaps robots.txt of @host names (@urls, resolved; borrowed), once
 * per host, run and owner: the task that fetched robots.txt queues them,
 * and so does a retry of it that finds robots.txt in the process's cache
 * (its owner is the same, "sitemaps-of:<host>" is first again), while
 * other tasks skip them with one look-up.
 */
static void
host_sitemaps(struct crawl *c, const char *host, const json_t *urls)
{
    char *key = sl_asprintf("sitemaps-of:%s", host);
    size_t i = 0;
    int first = 0;

    if (json_array_size(urls) > 0) {
        first = visit_key(c, key);
    } else {
        (void)json_object_set_new(c->seen, key, json_true());
    }
    sl_free(key);
    for (i = 0; first == 1 && i < json_array_size(urls) && !c->fatal; i++) {
        queue_sitemap(c, json_string_value(json_array_get(urls, i)), 0);
    }
}

/* A page of @host whose robots.txt is cached: on the first of this task,
 * the sitemaps robots.txt named (host_sitemaps). */
static void
cached_sitemaps(struct crawl *c, const char *robots_key, const char *host)
{
    char *key = sl_asprintf("sitemaps-of:%s", host);
    json_t *urls = NULL;
    int fresh = json_object_get(c->seen, key) == NULL;

    sl_free(key);
    if (!fresh) {
        return;
    }
    (void)robots_lookup(robots_key, NULL, NULL, NULL, &urls);
    host_sitemaps(c, host, urls);
    json_decref(urls);
}

/* A loc of a sitemap: a page becomes a link of depth 1 (filtered by
 * urlPatterns as links of pages are), a sitemap of an index is queued. */
static int
on_sitemap_loc(void *arg, const char *url, const char *lastmod, int nested)
{
    struct xfer *x = arg;

    (void)lastmod;
    if (x->c->fatal) {
        return SL_EIO;
    }
    if (nested) {
        if (x->lk->depth == 0) { /* an index listed by robots.txt */
            queue_sitemap(x->c, url, 1);
        } else {
            count(x->c, "sitemaps.skipped"); /* an index in an index */
        }
        return 0;
    }
    if (!link_passes(x->c, url, 1)) {
        return 0;
    }
    if (x->c->sitemap_links >= SITEMAP_LINKS_PER_TASK) {
        x->sm_full = 1; /* the rest of this sitemap is not read */
        return SL_ETOOLARGE;
    }
    emit_link(x->c, url, 1, 0, 0);
    x->c->sitemap_links++;
    count(x->c, "links.fromSitemaps");
    return 0;
}

/* Body bytes of a sitemap: fed to the streaming parser (never buffered);
 * a parse error cuts the transfer. */
static size_t
sitemap_body(struct xfer *x, const char *buf, size_t n)
{
    if (x->sm == NULL && x->sm_rc == 0) {
        x->sm_rc =
            sl_web_sitemap_begin(x->lk->url, 0, on_sitemap_loc, x, &x->sm);
    }
    if (x->sm_rc == 0) {
        x->sm_rc = sl_web_sitemap_feed(x->sm, buf, n);
    }
    return x->sm_rc == 0 ? n : 0;
}

/* A sitemap transfer ended with @code and HTTP @status. */
static void
sitemap_done(struct crawl *c, struct xfer *x, CURLcode code, long status)
{
    struct sl_web_sitemap_summary sum;
    const char *why = NULL;
    char what[32];
    int rc = x->sm_rc;

    memset(&sum, 0, sizeof(sum));
    if (x->sm != NULL) {
        int end = sl_web_sitemap_end(x->sm, &sum);

        x->sm = NULL;
        rc = rc != 0 ? rc : end;
    }
    if (x->sm_full) {
        SL_INFO("webCrawler: sitemap %s: cut after %u sitemap URLs in "
                "this task",
                x->lk->url,
                SITEMAP_LINKS_PER_TASK);
        count(c, "sitemaps.truncated");
        return;
    }
    if (x->sm_rc != 0) {
        why = sl_strerror(x->sm_rc);
    } else if (code != CURLE_OK) {
        why = curl_easy_strerror(code);
    } else if (status < 200 || status >= 300) {
        (void)snprintf(what, sizeof(what), "HTTP %ld", status);
        why = what;
    } else if (rc != 0 || sum.reported + sum.invalid + sum.refused == 0) {
        why = rc != 0 ? sl_strerror(rc) : "empty";
    }
    if (why != NULL) {
        SL_WARN("webCrawler: sitemap %s: %s", x->lk->url, why);
        count(c, "sitemaps.failed");
        return;
    }
    count(c, "sitemaps.fetched");
}

/* The first body bytes: decide whether the body is wanted. */
static void
decide_body(struct xfer *x)
{
    char mime[256];
    char cs[64];
    long status = 0;

    x->body_decided = 1;
    (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
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
                               on_link,
                               x,
                               &x->lx) == 0) {
            sl_web_links_use_cache(x->lx, x->c->url_cache);
        }
    } else if (x->etag[0] != '\0' || x->lastmod[0] != '\0') {
        x->headers_only = 1; /* the webFetcher fetches it when changed */
    } else {
        x->keep = 1; /* no validator: the content is the delta hash */
    }
    if (x->keep && x->etag[0] == '\0' && x->lastmod[0] == '\0') {
        x->sha = sl_sha256_new();
    }
}

/* Write @n bytes to the spool file of @x: 0, or -1 with the task failed
 * (a full disk: recoverable, retried later). */
static int
spool_write(struct xfer *x, const char *buf, size_t n)
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
keep_body(struct xfer *x, const char *buf, size_t n)
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
    struct xfer *x = arg;
    size_t n = size * nmemb;

    if (!x->body_decided) {
        decide_body(x);
    }
    if (x->refused_type || x->headers_only) {
        return 0; /* cuts the transfer: CURLE_WRITE_ERROR, expected */
    }
    if (!x->keep) {
        return n;
    }
    if (x->lk->kind == K_SITEMAP) {
        return sitemap_body(x, buf, n);
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

static struct xfer *
xfer_new(struct crawl *c, struct link *lk)
{
    struct xfer *x = sl_calloc(1, sizeof(*x));
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

static void
xfer_free(struct xfer *x)
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
        link_free(x->lk);
        sl_free(x);
    }
}

/*
 * webExtractor: write compound record @meta (borrowed; metadata only, as
 * the fileExtractor passes its compounds on) to `files`, counted as
 * @counter, then the elements of the @size bytes of the archive in @fd
 * (borrowed) with the fileExtractor's walk.  An output error fails the
 * task (recoverable).
 */
static void
extract_compound(struct crawl *c,
                 const json_t *meta,
                 int fd,
                 uint64_t size,
                 const char *counter)
{
    struct sl_bulk_writer *w = NULL;
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *src = json_string_value(json_object_get(meta, "_source"));
    int rc = 0;

    if (id == NULL) {
        count(c, "links.invalid");
        return;
    }
    write_page(c, SLOT_FILES, meta, NULL, counter);
    if (c->fatal) {
        return;
    }
    rc = sl_task_output_writer(c->ctx, SLOT_FILES, &w);
    if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0) {
        sl_task_set_message(c->ctx, "temporary file: %s", sl_errno_str(errno));
        rc = SL_EIO;
    }
    if (rc == 0) {
        rc = sl__bi_extract_fd(
            c->extract, w, id, src != NULL ? src : c->source, fd, size);
    }
    if (rc != 0) {
        c->fatal = 1; /* the task message is set */
    }
}

/* The webFetcher's output: the crawled record with the content; the
 * webExtractor's: the compound record and its elements. */
static void
emit_fetched(struct crawl *c, struct xfer *x, long status)
{
    json_t *meta = x->lk->meta;
    char mime[256];
    char cs[64];

    split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
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
        struct ready *r = sl_calloc(1, sizeof(*r));
        struct ready **pp = &c->ready;

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
    write_page(c, SLOT_FETCHED, meta, x, "records.fetched");
}

/* Free the first compound of the ready list. */
static void
ready_pop(struct crawl *c)
{
    struct ready *r = c->ready;

    c->ready = r->next;
    json_decref(r->meta);
    if (r->fd >= 0) {
        (void)close(r->fd);
    }
    sl_free(r);
}

/* Extract the compounds waiting for it (no transfer is in flight). */
static void
extract_ready(struct crawl *c)
{
    while (c->ready != NULL) {
        if (!c->fatal) {
            extract_compound(c,
                             c->ready->meta,
                             c->ready->fd,
                             c->ready->size,
                             "compounds.fetched");
        }
        ready_pop(c);
    }
}

/*
 * robots.txt of @host answered @x with a redirect from @from: queue its
 * target as the next robots.txt fetch of @host, at most
 * ROBOTS_MAX_REDIRECTS in a row (RFC 9309 2.3.1.2), to any host and
 * through the host table like any request.  0 when queued; SL_E* when
 * not: SL_ETOOLARGE (too many, or no Location), SL_EINVAL (a target
 * that is no http(s) URL).
 */
static int
robots_redirect(struct crawl *c,
                struct xfer *x,
                const char *host,
                const char *from)
{
    struct link *lk = NULL;
    char *to = NULL;

    if (x->lk->redirects >= ROBOTS_MAX_REDIRECTS || x->location[0] == '\0') {
        return SL_ETOOLARGE;
    }
    if (sl_web_url_resolve(from, x->location, &to) != 0) {
        return SL_EINVAL;
    }
    lk = enqueue(c, to, 0, x->lk->redirects + 1, K_ROBOTS);
    sl_free(to);
    if (lk == NULL) {
        return SL_EINVAL; /* no host key */
    }
    lk->robots_for = sl_strdup(host);
    count(c, "robots.redirected");
    return 0;
}

/* robots.txt of @x's host arrived (or failed: @status 0). */
static void
robots_done(struct crawl *c, struct xfer *x, long status)
{
    /* the host whose robots.txt this is, and the URL that answered */
    const char *host =
        x->lk->robots_for != NULL ? x->lk->robots_for : x->lk->host;
    char *from = x->lk->robots_for != NULL
                     ? sl_strdup(x->lk->url)
                     : sl_asprintf("%s/robots.txt", x->lk->host);
    struct sl_web_robots *r = NULL;
    json_t *sitemaps = NULL;
    char *key =
        sl_asprintf("%s %llu %s", c->source, (unsigned long long)c->seq, host);
    int down = 0;
    int rc = 0;

    if (status >= 300 && status < 400 &&
        robots_redirect(c, x, host, from) == 0) {
        sl_free(key);
        sl_free(from);
        return; /* the target is queued; pages keep waiting for it */
    }
    if (status >= 300 && status < 400 &&
        x->lk->redirects >= ROBOTS_MAX_REDIRECTS) {
        /* RFC 9309 2.3.1.2: more than five redirects, the crawler may
         * take robots.txt as unavailable (allow all, as for a 4xx) */
        r = sl_web_robots_new_allow_all();
        count(c, "robots.tooManyRedirects");
    } else if (status >= 200 && status < 300) {
        rc = sl_web_robots_parse(
            x->body.data ? x->body.data : "", x->body.len, c->ua, &r);
        if (rc != 0) {
            r = sl_web_robots_new_allow_all();
        }
        count(c, "robots.fetched");
    } else if (status >= 400 && status < 500) {
        r = sl_web_robots_new_allow_all(); /* RFC 9309: unavailable */
        count(c, "robots.missing");
    } else {
        /* 5xx, a bad redirect, or no answer: unreachable, disallow for
         * the run (RFC 9309 2.3.1.4), never allow all on a failure */
        r = sl_web_robots_new_disallow_all();
        count(c, "robots.unreachable");
        down = 1;
    }
    if (r != NULL && c->follow_sitemaps) {
        size_t i = 0;

        sitemaps = json_array();
        for (i = 0; i < sl_web_robots_sitemap_count(r); i++) {
            char *u = NULL;

            if (sl_web_url_resolve(from, sl_web_robots_sitemap(r, i), &u) ==
                0) {
                (void)json_array_append_new(sitemaps, json_string(u));
            } else {
                count(c, "sitemaps.invalid");
            }
            sl_free(u);
        }
        host_sitemaps(c, host, sitemaps);
    }
    if (r != NULL) {
        double delay = sl_web_robots_crawl_delay(r);

        if (delay > 0) {
            sl_web_hosts_crawl_delay(g_hosts, host, delay, sl_mono_ms());
        }
        robots_store(key, r, sitemaps, down); /* also a retry's cache hit */
    }
    sl_free(key);
    sl_free(from);
}

/* The robots.txt fetch for @host (borrowed) could not be queued or
 * started: unreachable for the run (disallow all), as robots_done takes
 * no answer, so that the host's pages do not wait for it until the lease
 * ends. */
static void
robots_give_up(struct crawl *c, const char *host)
{
    char *key =
        sl_asprintf("%s %llu %s", c->source, (unsigned long long)c->seq, host);

    count(c, "robots.unreachable");
    robots_store(key, sl_web_robots_new_disallow_all(), NULL, 1);
    sl_free(key);
}

static void page_done(struct crawl *c, struct xfer *x, long status);

/* A transfer ended with @code. */
static void
finish(struct crawl *c, struct xfer *x, CURLcode code)
{
    long status = 0;
    int cut =
        code == CURLE_WRITE_ERROR &&
        (x->headers_only || x->refused_type || x->too_large || x->robots_full);

    (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK && !cut) {
        status = status > 0 && code == CURLE_FILESIZE_EXCEEDED ? status : 0;
    }
    sl_web_hosts_release(g_hosts,
                         x->lk->host,
                         &c->pol,
                         sl_mono_ms(),
                         (int)status,
                         x->retry_after_ms);
    if (x->lk->kind == K_ROBOTS) {
        if (code != CURLE_OK && !cut) {
            SL_WARN("webCrawler: %s%s: %s (robots.txt unreachable: "
                    "disallow all for the run)",
                    x->lk->url,
                    x->lk->robots_for == NULL ? "/robots.txt" : "",
                    curl_easy_strerror(code));
        }
        robots_done(c,
                    x,
                    code == CURLE_OK ||
                            (code == CURLE_WRITE_ERROR && x->robots_full)
                        ? status
                        : 0);
        return;
    }
    if (x->lk->kind == K_SITEMAP) {
        sitemap_done(c, x, code, status);
        return;
    }
    if (code == CURLE_FILESIZE_EXCEEDED || x->too_large) {
        SL_WARN("webCrawler: %s: larger than maxSize", x->lk->url);
        count(c, "links.skipped.tooLarge");
        start_failed(c, x->lk, 0, "larger than filters.maxSize");
        return;
    }
    if (x->refused_type) {
        count(c, "links.skipped.contentType");
        start_failed(c, x->lk, 0, "content type not in filters.contentTypes");
        return;
    }
    if (code != CURLE_OK && !cut) {
        SL_WARN("webCrawler: %s: %s", x->lk->url, curl_easy_strerror(code));
        count(c, "links.failed.network");
        start_failed(c, x->lk, 1, "%s", curl_easy_strerror(code));
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
            count(c, "links.failed.throttled");
            start_failed(c, x->lk, 1, "HTTP %ld, given up", status);
        }
        return;
    }
    if (x->lk->kind == K_FETCH && status >= 200 && status < 300) {
        emit_fetched(c, x, status);
        return;
    }
    if (x->lk->kind == K_FETCH && status >= 300 && status < 400) {
        SL_WARN("webFetcher: %s: HTTP %ld (moved since the crawl)",
                x->lk->url,
                status);
        count(c, "links.failed.redirect");
        return;
    }
    if (status >= 300 && status < 400 && x->location[0] != '\0') {
        char *to = NULL;

        if (!c->follow_redirects || x->lk->redirects >= c->max_redirects) {
            count(c, "links.skipped.redirects");
            start_failed(
                c, x->lk, 0, "HTTP %ld, redirect not followed", status);
            return;
        }
        if (sl_web_url_resolve(x->lk->url, x->location, &to) != 0) {
            count(c, "links.skipped.badRedirect");
            start_failed(c, x->lk, 0, "HTTP %ld, bad redirect", status);
            return;
        }
        count(c, "links.redirected");
        /* same depth; the filters apply now, visited and robots when it
         * starts */
        if (!link_passes(c, to, x->lk->depth)) {
            start_failed(
                c, x->lk, 0, "redirect to %.512s, refused by filters", to);
        } else {
            struct link *lk =
                enqueue(c, to, x->lk->depth, x->lk->redirects + 1, K_PAGE);

            if (lk != NULL) {        /* NULL: invalid, counted */
                lk->not_before = -1; /* marks: visit check needed */
            }
        }
        sl_free(to);
        return;
    }
    if (status < 200 || status >= 300) {
        SL_WARN("webCrawler: %s: HTTP %ld", x->lk->url, status);
        count(c, status >= 500 ? "links.failed.server" : "links.failed.client");
        start_failed(c, x->lk, status >= 500, "HTTP %ld", status);
        return;
    }
    page_done(c, x, status);
}

/* Up to @cap bytes of the body of @x from offset @off into *@p: in
 * memory it is pointed at, from the spool file it is read into @buf.
 * Returns the bytes (0 at the end), or -1 with errno set when the spool
 * file cannot be read. */
static ssize_t
body_piece(
    const struct xfer *x, uint64_t off, char *buf, size_t cap, const char **p)
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

/* Whether the text of page @x (MIME type @mime, first @n bytes @head) is
 * taken in its link parse: a textual HTML head, no noindex (no record),
 * and no external converter of the textExtractor for the type (it would
 * be bypassed). */
static int
takes_text(struct crawl *c,
           struct xfer *x,
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
 * for page_done; without one (it failed to start) the page has no links
 * and keeps httpContent.  A spool file that cannot be read fails the task
 * (recoverable), as writing the record from it would.
 */
static void
parse_page(struct crawl *c, struct xfer *x)
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

    split_ctype(x->ctype, mime, sizeof(mime), cs, sizeof(cs));
    n = body_piece(x, 0, buf, SL_TEXT_CHUNK, &chunk);
    text = n >= 0 && takes_text(c, x, mime, chunk, (size_t)n);
    /* without the text, the charset as without extractText */
    if (n < 0 || sl_web_links_begin(x->lk->url,
                                    !text && cs[0] != '\0' ? cs : NULL,
                                    LINKS_PER_PAGE,
                                    on_link,
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
        n = body_piece(x, off, buf, SL_TEXT_CHUNK, &chunk);
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
static void
page_done(struct crawl *c, struct xfer *x, long status)
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
 * Scheduling.
 * --------------------------------------------------------------------- */

/* Take @url out of the links held for a visit (vpend), if it is there:
 * 1 if it was. */
static int
unpend(struct crawl *c, const char *url)
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
static int
visit(struct crawl *c, struct link *lk)
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

/* Whether @lk may be fetched by robots.txt (0: not yet known, a
 * robots.txt fetch is queued, by this task or another; the filters and
 * the depth were checked before it was marked visited, link_passes).
 * @unknown: hosts found without robots.txt in this pass of schedule()
 * (made on first use): their further links wait without a lookup.
 * Returns 1 (go), 0 (dropped, counted) or 2 (wait for robots.txt). */
static int
admissible(struct crawl *c, struct link *lk, json_t **unknown)
{
    char *key = NULL;
    char *path = NULL;
    int allowed = 1;
    int down = 0;
    int known = 0;

    if (!c->robots) {
        return 1;
    }
    if (*unknown != NULL && json_object_get(*unknown, lk->host) != NULL) {
        return 2;
    }
    key = sl_asprintf(
        "%s %llu %s", c->source, (unsigned long long)c->seq, lk->host);
    if (sl_web_url_path_query(lk->url, &path) != 0) {
        path = sl_strdup("/");
    }
    known = robots_lookup(key, path, &allowed, &down, NULL);
    if (!known) {
        enum robots_claim claim = robots_claim(key, c);

        if (claim == CLAIM_KNOWN) { /* answered since the lookup */
            known = robots_lookup(key, path, &allowed, &down, NULL);
        } else if (claim == CLAIM_NEW) {
            if (enqueue(c, lk->host, 0, 0, K_ROBOTS) == NULL) {
                robots_give_up(c, lk->host); /* known in the next pass */
            }
        } else if (claim == CLAIM_OTHER) {
            c->robots_wait = 1; /* its answer wakes no poll here */
            if (json_object_get(c->robots_waited, lk->host) == NULL) {
                (void)json_object_set_new(
                    c->robots_waited, lk->host, json_true());
                count(c, "robots.waited");
            }
        }
    }
    sl_free(path);
    if (known && c->follow_sitemaps) {
        cached_sitemaps(c, key, lk->host);
    }
    sl_free(key);
    if (!known) {
        if (*unknown == NULL) {
            *unknown = json_object();
        }
        (void)json_object_set_new(*unknown, lk->host, json_true());
        return 2;
    }
    if (!allowed) {
        count(c, "links.disallowedByRobots");
        start_failed(c,
                     lk,
                     down,
                     down ? "robots.txt of %s unreachable (disallow all)"
                          : "disallowed by robots.txt of %s",
                     lk->host);
        return 0;
    }
    return 1;
}

/* Transfers of this task to @host in flight. */
static unsigned
held_of(const struct crawl *c, const char *host)
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
schedule(struct crawl *c, int64_t *wake_ms)
{
    json_t *unknown = NULL; /* hosts whose robots.txt is not known yet */
    struct link **pp = &c->pending;
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
     * end first (crawl_loop) */
    while (*pp != NULL && c->running < c->parallel && !c->fatal &&
           c->ready == NULL) {
        struct link *lk = *pp;
        struct xfer *x = NULL;
        int64_t wait = 0;
        int ok = 1;

        if (lk->kind == K_SITEMAP &&
            c->sitemap_links >= SITEMAP_LINKS_PER_TASK) {
            count(c, "sitemaps.truncated"); /* the task wrote its share */
            *pp = lk->next;
            link_free(lk);
            continue;
        }
        if (lk->kind == K_PAGE) {
            if (lk->not_before < 0) { /* a redirect target, not yet seen */
                ok = visit(c, lk);
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
                const struct link *head = c->pending;

                ok = admissible(c, lk, &unknown);
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
                link_free(lk);
                continue;
            }
            if (ok == 2) { /* its robots.txt is queued at the head */
                pp = &lk->next;
                continue;
            }
        }
        if (refused_before(gated, ngated, lk->host)) {
            pp = &lk->next; /* its host said no in this pass already */
            continue;
        }
        if (sl_web_hosts_acquire_share(
                g_hosts, lk->host, &c->pol, now, held_of(c, lk->host), &wait) !=
            0) {
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
        x = xfer_new(c, lk);
        if (x == NULL || curl_multi_add_handle(c->multi, x->easy) != CURLM_OK) {
            sl_web_hosts_release(
                g_hosts, lk->host, &c->pol, sl_mono_ms(), 0, -1);
            if (lk->kind == K_ROBOTS) { /* also a redirect hop */
                robots_give_up(
                    c, lk->robots_for != NULL ? lk->robots_for : lk->host);
            }
            if (x != NULL) {
                xfer_free(x);
            } else {
                link_free(lk);
            }
            if (!c->fatal) { /* else the task fails (recoverable) */
                count(c, "links.failed.internal");
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

/* Run transfers until nothing is pending or running. */
static int
crawl_loop(struct crawl *c)
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
            struct xfer *x = NULL;

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
            xfer_free(x);
            ended++;
        }
        if (c->running == 0 && c->ready != NULL) {
            extract_ready(c);
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
    robots_release(c);
    return rc;
}

/* ------------------------------------------------------------------------
 * Parameters and perform.
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

static int
crawl_init(struct sl_task_ctx *ctx, struct crawl *c)
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
    c->pol.delay_ms = (int64_t)delay;
    c->pol.max_connections = (unsigned)maxc;
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
    if (g_hosts == NULL) {
        sl_task_set_message(ctx, "webCrawler: no host table");
        return SL_EINTERNAL;
    }
    c->delta = sl_task_services(ctx)->delta;
    run_id = json_string_value(json_object_get(
        json_object_get(sl_task_json(ctx), "properties"), "jobRunId"));
    if (c->delta != NULL) {
        sl_err_clear(&err);
        rc = sl_delta_run_for(
            c->delta, c->source, run_id ? run_id : "", &c->seq, &err);
        if (rc != 0) {
            sl_task_note_error(ctx, rc);
            sl_task_set_message(ctx, "delta service: %s", err.message);
            return rc;
        }
    }
    c->owner = task_owner(ctx);
    c->multi = thread_multi();
    c->emitted = json_object();
    c->url_cache = sl_web_url_cache_new(0);
    c->seen = json_object();
    c->robots_waited = json_object();
    return c->multi != NULL ? 0 : SL_EINTERNAL;
}

/* The start URLs: parameter startUrl, a string or a list. */
static int
start_links(struct crawl *c, struct sl_delta_link **dl, size_t *n)
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
queue_links(struct crawl *c,
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

        if (link_passes(c, dl[i].url, d)) {
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
        (void)enqueue(c, dl[i].url, depth != NULL ? depth[i] : 0, 0, K_PAGE);
    }
    return 0;
}

/* The links of the input bulks: normalised, with their depth; a link its
 * writer marked visited in this run (ATTR_VISITED) is taken as written
 * (normalised then). */
static int
input_links(struct crawl *c)
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

/* Free what a task of either worker holds (also after an early error). */
static void
crawl_cleanup(struct crawl *c)
{
    size_t i = 0;

    while (c->pending != NULL) {
        struct link *lk = c->pending;

        c->pending = lk->next;
        link_free(lk);
    }
    while (c->ready != NULL) {
        ready_pop(c);
    }
    for (i = 0; i < MAX_PARALLEL; i++) {
        struct xfer *x = c->act[i]; /* still running after a cancel */

        if (x != NULL) {
            (void)curl_multi_remove_handle(c->multi, x->easy);
            sl_web_hosts_release(
                g_hosts, x->lk->host, &c->pol, sl_mono_ms(), 0, -1);
            xfer_free(x);
            c->act[i] = NULL;
        }
    }
    drop_pending(c);
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

/* 1 when the run's completion deletes what it did not visit (strategy
 * full, also by default); an invalid strategy is the deltaChecker's to
 * report, and counts as full here. */
static int
strategy_deletes(struct sl_task_ctx *ctx)
{
    const char *name = sl_task_param_str(ctx, "deltaImportStrategy");
    enum sl_delta_strategy s = SL_DELTA_STRATEGY_FULL;

    if (name != NULL && sl_delta_strategy_parse(name, &s, NULL) != 0) {
        return 1;
    }
    return sl_delta_strategy_deletes(s);
}

static int
web_crawl_perform(struct sl_task_ctx *ctx)
{
    struct crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = crawl_init(ctx, &c);
    if (rc != 0) {
        res = rc == SL_EINVAL ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
        goto out;
    }
    if (sl_task_input_count(ctx, SLOT_LINKS) == 0) {
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
        rc = crawl_loop(&c);
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
    if (res == SL_WORKER_OK && c.start_failed > 0 &&
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
    crawl_cleanup(&c);
    return res;
}

/*
 * The parameters crawl_init reads for all three web workers, declared once
 * (docs/workers.md); the bounds are crawl_init's.
 */
#define WEB_DECL_COMMON                                                        \
    "{\"name\": \"timeoutMs\", \"optional\": true, \"type\": \"integer\","     \
    " \"minimum\": 1, \"maximum\": 3600000},"                                  \
    "{\"name\": \"connectTimeoutMs\", \"optional\": true, \"type\": "          \
    "\"integer\","                                                             \
    " \"minimum\": 1, \"maximum\": 3600000},"                                  \
    "{\"name\": \"caFile\", \"optional\": true},"                              \
    "{\"name\": \"filters\", \"optional\": true, \"type\": \"object\","        \
    " \"members\": [{\"name\": \"maxCrawlDepth\", \"type\": \"integer\"},"     \
    "  {\"name\": \"urlPatterns\", \"type\": \"object\","                      \
    "   \"members\": " SL__BI_DECL_PATTERNS "},"                               \
    "  {\"name\": \"followRedirects\", \"type\": \"boolean\"},"                \
    "  {\"name\": \"maxRedirects\", \"type\": \"integer\"},"                   \
    "  {\"name\": \"maxSize\", \"type\": \"integer\", \"minimum\": 1},"        \
    "  {\"name\": \"contentTypes\", \"type\": \"array\","                      \
    "   \"items\": {\"type\": \"string\"}}]},"                                 \
    "{\"name\": \"politeness\", \"optional\": true, \"type\": \"object\","     \
    " \"members\": [{\"name\": \"delayMs\", \"type\": \"integer\","            \
    "   \"maximum\": 3600000},"                                                \
    "  {\"name\": \"maxConnectionsPerHost\", \"type\": \"integer\","           \
    "   \"minimum\": 1, \"maximum\": 64},"                                     \
    "  {\"name\": \"respectRobots\", \"type\": \"boolean\"},"                  \
    "  {\"name\": \"userAgent\"},"                                             \
    "  {\"name\": \"parallelTransfers\", \"type\": \"integer\","               \
    "   \"minimum\": 1, \"maximum\": 64}]}," SL__BI_DECL_MAPPING

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

/* ------------------------------------------------------------------------
 * webFetcher: the content of crawled records that have none yet.
 * --------------------------------------------------------------------- */

/* Queue the download of record @meta (borrowed, kept) from @url for the
 * webFetcher or the webExtractor; an invalid URL is counted and skipped.
 * Returns SL_WORKER_OK. */
static int
queue_fetch(struct crawl *c, const char *url, json_t *meta)
{
    struct link *lk = NULL;
    char *norm = NULL;

    if (url == NULL || sl_web_url_normalize(url, &norm) != 0) {
        count(c, "links.invalid");
        return SL_WORKER_OK;
    }
    lk = enqueue(c, norm, 0, 0, K_FETCH);
    if (lk != NULL) { /* NULL: no host key, counted links.invalid */
        lk->meta = json_incref(meta);
    }
    sl_free(norm);
    return SL_WORKER_OK;
}

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
    struct crawl *c = arg;
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
    struct crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = crawl_init(ctx, &c);
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
        rc = crawl_loop(&c);
        if (rc != 0 || c.fatal) {
            res = SL_WORKER_RECOVERABLE;
        }
    }
    crawl_cleanup(&c);
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
spool_attachment(struct crawl *c,
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
    struct crawl *c = arg;
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
    struct crawl c;
    int res = SL_WORKER_OK;
    int rc = 0;

    rc = crawl_init(ctx, &c);
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
        rc = crawl_loop(&c);
        if (rc != 0 || c.fatal) {
            res = SL_WORKER_RECOVERABLE;
            if (rc == SL_ECANCELED) {
                sl_task_set_message(ctx, "canceled");
            }
        }
    }
out:
    crawl_cleanup(&c);
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
