/*
 * Private to the web workers of builtin/ (docs/workers.md "webCrawler",
 * "webFetcher", "webExtractor"): a task of any of the three, its links and
 * its transfers, shared by
 *   web_task.c      a task's set-up from its parameters, its queue of
 *                   links, the scheduling under the process-wide host
 *                   table (politeness), the loop over libcurl's multi
 *                   handle, what an ended transfer leads to, the clean-up;
 *   web_transfer.c  one transfer: the libcurl handles each thread keeps,
 *                   the headers, the body (kept, spooled, fed to the link
 *                   extractor or the sitemap parser), the body written as
 *                   an attachment;
 *   web_robots.c    the process-wide robots.txt cache, robots.txt
 *                   fetches, the admission of a link by robots.txt, the
 *                   sitemaps it lists;
 *   web_crawler.c   the webCrawler: links, pages and their records;
 *   web_fetcher.c   the webFetcher and the webExtractor: downloads of
 *                   crawled records and compounds.
 * A task (struct web_crawl) lives on the stack of the worker thread that
 * performs it.
 */
#ifndef SL_BUILTIN_WEB_INT_H_INCLUDED
#define SL_BUILTIN_WEB_INT_H_INCLUDED

#include <stdint.h>
#include <sys/types.h>

#include <curl/curl.h>

#include "builtin/builtin_int.h"
#include "text/text.h"
#include "web/web.h"

struct sl_delta_link;
struct web_ready;

/* Slots and attributes of more than one of the web workers. */
#define SLOT_LINKS  "linksToCrawl"
#define CONTENT_ATT "httpContent"
#define TEXT_ATT    "text"

#define COPY_BUF               ((size_t)64 << 10)
#define MAX_PARALLEL           64u   /* transfers in flight per task, at most */
#define HEADER_MAX             1024u /* bytes kept of a header's value */
#define LINKS_PER_PAGE         10000u
#define SITEMAP_LINKS_PER_TASK 10000u /* sitemap URLs a task writes */

/* What a link is fetched for: a page to crawl (webCrawler), a robots.txt,
 * a download (webFetcher, webExtractor), a sitemap, the directory URL of
 * an index page (mergeIndexPages: its body's hash only). */
enum web_kind { K_PAGE, K_ROBOTS, K_FETCH, K_SITEMAP, K_PROBE };

/* A link of a task: pending (struct web_crawl's list) or in a transfer. */
struct web_link {
    struct web_link *next;
    char *url;          /* normalised */
    char *host;         /* host key */
    uint64_t depth;     /* httpDepth */
    unsigned redirects; /* redirects followed to get here */
    unsigned retries;   /* after 429/503 */
    enum web_kind kind;
    int64_t not_before; /* monotonic ms */
    int admitted;       /* passed the filters, depth and robots.txt */
    json_t *meta;       /* K_FETCH: the record to complete */
    /* K_ROBOTS after a redirect: the host key whose robots.txt this is
     * (url is the redirect target, host its host key); else NULL */
    char *robots_for;
    /* K_PROBE: the index page waiting for it (owned).  K_PAGE of an index
     * page: its directory URL and the SHA-256 (hex) of what that URL
     * answered, "" when it answered no 2xx page; both NULL when not
     * probed (web_index.c) */
    struct web_link *page;
    char *dir_url;
    char *dir_sha;
    int probe_checked; /* sl__bi_web_probe_for looked at it */
};

/* A transfer in flight (web_transfer.c). */
struct web_xfer {
    struct web_crawl *c;
    struct web_link *lk;
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
    /* the first <link rel="canonical"> of the page, normalised, or NULL:
     * on the page's own host, the page's record is written under it */
    char *canonical;
    /* K_PAGE without ETag or Last-Modified, an index page compared with
     * its directory URL, a K_PROBE: the SHA-256 of the body, and its hex
     * once final (sl__bi_web_body_sha) */
    struct sl_sha256 *sha;
    char sha_hex[65];
    uint64_t hashed; /* K_PROBE: body bytes hashed (at most maxSize) */
    /* K_PAGE, HTML, extractText: links and text are taken in one parse
     * when the page is done (parse_page); the text, and whether it is
     * complete (the record then carries it instead of httpContent) */
    int parse_at_end;
    struct sl_text_html *ht;
    int text_ok;
    char text_mime[SL_TEXT_MIME_MAX];
};

/* A task of one of the three web workers: its parameters (sl__bi_web_init),
 * its links and transfers, and what each worker keeps of it. */
struct web_crawl {
    struct sl_task_ctx *ctx;
    const char *source;
    uint64_t seq;   /* run sequence of the source */
    uint64_t owner; /* of the visited marks: from the task's input */
    struct sl_delta *delta;
    struct sl_throttle_limits pol; /* politeness: before the rules */
    const json_t *throttle;        /* the job's throttle rules, or NULL */
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
    int merge_index;        /* mergeIndexPages */
    int extract_text;       /* extractText */
    uint64_t max_text;      /* maxTextBytes */
    struct uchardet *ud;    /* charset detection, created on first use */
    unsigned sitemaps;      /* sitemap fetches queued by this task */
    uint64_t sitemap_links; /* sitemap URLs written by this task */
    json_t *types;          /* allowed content types, or NULL: all */
    struct sl__bi_patterns urls;
    unsigned parallel;
    CURLM *multi;
    struct web_link *pending;           /* waiting to start */
    unsigned running;                   /* transfers in flight */
    struct web_xfer *act[MAX_PARALLEL]; /* them, NULL in free places */
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
    int no_links; /* a continuous run's due pass: links are not followed */
    struct sl__bi_recheck rk; /* a due pass: the job's next checks */
    int links_connected;
    int fatal; /* output failed */
    /* webExtractor: downloads are extracted with this */
    struct sl__bi_extract *extract;
    /* webExtractor: compounds downloaded while other transfers were in
     * flight, in the order they were deferred; extracted once none is (their
     * wall-clock timeouts would run during the extraction).  No transfer starts
     * while one waits, so there are at most `parallel` of them. */
    struct web_ready *ready;
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

/* Count one of @name in the task's counters. */
static inline void
count(struct web_crawl *c, const char *name)
{
    sl_task_counter_add(c->ctx, name, 1);
}

/* Bytes of the body of @x kept so far (in memory or spooled). */
static inline uint64_t
body_size(const struct web_xfer *x)
{
    return x->spool >= 0 ? x->spooled : (uint64_t)x->body.len;
}

/*
 * The parameters sl__bi_web_init reads for all three web workers,
 * declared once (docs/workers.md); the bounds are sl__bi_web_init's.
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
    "   \"minimum\": 1, \"maximum\": 64}]}," SL__BI_DECL_THROTTLE              \
    "," SL__BI_DECL_MAPPING

/* ------------------------------------------------------------------------
 * web_task.c: a task's links, its loop, its set-up and clean-up.
 * --------------------------------------------------------------------- */

/** The limits of a request of @p c to @p host: its politeness tightened
 * by the throttle rules of the server and of the job that match. */
void sl__bi_web_limits(const struct web_crawl *c,
                       const char *host,
                       struct sl_throttle_limits *l);
/** Free @p lk; NULL-safe. */
void sl__bi_web_link_free(struct web_link *lk);
/** Link @p lk could not be crawled because of @p fmt, counted as
 * @p counter and reported as a document (web_task.c). */
void sl__bi_web_start_failed(struct web_crawl *c,
                             const struct web_link *lk,
                             const char *counter,
                             int transient,
                             const char *fmt,
                             ...) __attribute__((format(printf, 5, 6)));
/** In a due pass: page @p url answered 404 or 410; its next check moves
 * on as unchanged, so it is not fetched on every pass until the expiry
 * (web_crawler.c). */
void sl__bi_web_due_gone(struct web_crawl *c, const char *url);
/** Queue @p url (normalised) at @p depth: the new link (owned by the
 * pending list), or NULL when @p url has no host key (counted). */
struct web_link *sl__bi_web_enqueue(struct web_crawl *c,
                                    const char *url,
                                    uint64_t depth,
                                    unsigned redirects,
                                    enum web_kind kind);
/** 1 when a link to @p url at @p depth passes filters.urlPatterns and
 * filters.maxCrawlDepth, else 0 (counted). */
int
sl__bi_web_link_passes(struct web_crawl *c, const char *url, uint64_t depth);
/** Set up @p c for task @p ctx from the parameters the three workers
 * share: 0, SL_EINVAL (task message set) or another SL_E* code.  Call
 * sl__bi_web_cleanup also after an error. */
int sl__bi_web_init(struct sl_task_ctx *ctx, struct web_crawl *c);
/** Run transfers until nothing is pending or running: 0, SL_ECANCELED
 * or a delta service error (task message set); c->fatal may be set. */
int sl__bi_web_loop(struct web_crawl *c);
/** Free what the task holds. */
void sl__bi_web_cleanup(struct web_crawl *c);

/* ------------------------------------------------------------------------
 * web_transfer.c: one transfer.
 * --------------------------------------------------------------------- */

/** Make the process-wide key of the threads' libcurl state (once). */
void sl__bi_web_transfer_init(void);
/** The libcurl multi handle this thread keeps from task to task, or
 * NULL. */
CURLM *sl__bi_web_multi(void);
/** The MIME type of Content-Type @p ct into @p mime (lower case, no
 * parameters) and its charset into @p cs (may be empty). */
void sl__bi_web_split_ctype(
    const char *ct, char *mime, size_t mcap, char *cs, size_t ccap);
/** The link extractor's callback for an HTML page (@p arg: its struct
 * web_xfer): the link is held until the page is complete. */
int sl__bi_web_on_link(void *arg, const char *url, enum sl_web_link_kind kind);
/** A transfer of @p lk (taken over), set up but not started, or NULL
 * (c->fatal set when a temporary file failed). */
struct web_xfer *sl__bi_web_xfer_new(struct web_crawl *c, struct web_link *lk);
/** Free @p x and its link; NULL-safe. */
void sl__bi_web_xfer_free(struct web_xfer *x);
/** Write @p meta to output @p slot with the text or the body of @p x
 * (NULL: none) as attachment, counted as @p counter; an output error
 * sets c->fatal. */
void sl__bi_web_write_page(struct web_crawl *c,
                           const char *slot,
                           const json_t *meta,
                           const struct web_xfer *x,
                           const char *counter);
/** The hex SHA-256 of the body of @p x (its sha, made final once). */
const char *sl__bi_web_body_sha(struct web_xfer *x);
/** Up to @p cap bytes of the body of @p x from @p off: their count (0 at
 * the end) and *@p p, or -1 with errno set. */
ssize_t sl__bi_web_body_piece(const struct web_xfer *x,
                              uint64_t off,
                              char *buf,
                              size_t cap,
                              const char **p);

/* ------------------------------------------------------------------------
 * web_robots.c: robots.txt and sitemaps.
 * --------------------------------------------------------------------- */

/** Make the process-wide robots.txt cache (once). */
void sl__bi_web_robots_init(void);
/** The task @p owner ends: drop the robots.txt fetches it claimed. */
void sl__bi_web_robots_release(const void *owner);
/** Body bytes of a sitemap transfer, fed to its parser: @p n, or 0 to
 * cut the transfer. */
size_t sl__bi_web_sitemap_body(struct web_xfer *x, const char *buf, size_t n);
/** A sitemap transfer ended with @p code and HTTP @p status. */
void sl__bi_web_sitemap_done(struct web_crawl *c,
                             struct web_xfer *x,
                             CURLcode code,
                             long status);
/** The robots.txt of @p x's host arrived (or failed: @p status 0). */
void
sl__bi_web_robots_done(struct web_crawl *c, struct web_xfer *x, long status);
/** The robots.txt fetch for @p host could not be queued or started:
 * unreachable for the run. */
void sl__bi_web_robots_give_up(struct web_crawl *c, const char *host);
/* Whether robots.txt lets @c fetch @url as far as it is known now: 0 when
 * it disallows it, 1 when it allows it, is not known yet or not used. */
int sl__bi_web_robots_allows(struct web_crawl *c, const char *url);
/** Whether robots.txt lets @p lk be fetched: 1 (go), 0 (dropped,
 * counted) or 2 (wait for robots.txt). */
int sl__bi_web_admissible(struct web_crawl *c,
                          struct web_link *lk,
                          json_t **unknown);

/* ------------------------------------------------------------------------
 * web_crawler.c: the webCrawler's side of a transfer.
 * --------------------------------------------------------------------- */

/** Write a link record of @p url at @p depth to linksToCrawl. */
void sl__bi_web_emit_link(
    struct web_crawl *c, const char *url, uint64_t depth, int once, int marked);
/** Forget the links held for a visit, keeping the arrays. */
void sl__bi_web_drop_pending(struct web_crawl *c);
/** Mark redirect target @p lk visited in this run: 1 when this task is
 * the first, 0 when it was visited already, negative on a service
 * error. */
int sl__bi_web_visit(struct web_crawl *c, struct web_link *lk);
/** Page @p x answered 2xx: its links, and its record. */
void sl__bi_web_page_done(struct web_crawl *c, struct web_xfer *x, long status);

/* ------------------------------------------------------------------------
 * web_index.c: an index page and its directory URL (mergeIndexPages).
 * --------------------------------------------------------------------- */

/** For page link @p lk, admitted, at an index name (`/d/index.html`): the
 * probe of its directory URL to fetch first, which owns @p lk until it
 * ends; NULL when there is none to make (the page is fetched now). */
struct web_link *sl__bi_web_probe_for(struct web_crawl *c, struct web_link *lk);
/** Probe @p x ended with HTTP @p status (0: no answer): its page is
 * queued again with the hash of the answer. */
void
sl__bi_web_probe_done(struct web_crawl *c, struct web_xfer *x, long status);
/** Probe @p probe could not start: its page is queued again unprobed. */
void sl__bi_web_probe_abandon(struct web_crawl *c, struct web_link *probe);
/** The directory URL page @p x is written under when it answered the
 * same body as its probe (counted), else NULL. */
const char *sl__bi_web_index_url(struct web_crawl *c, struct web_xfer *x);

/* ------------------------------------------------------------------------
 * web_fetcher.c: the webFetcher's and the webExtractor's side.
 * --------------------------------------------------------------------- */

/** Download @p x answered 2xx: the fetched record, or the compound and
 * its elements (now, or deferred until no transfer is in flight). */
void sl__bi_web_fetched(struct web_crawl *c, struct web_xfer *x, long status);
/** Free the first compound waiting for its extraction. */
void sl__bi_web_ready_pop(struct web_crawl *c);
/** Extract the compounds waiting for it (no transfer is in flight). */
void sl__bi_web_extract_ready(struct web_crawl *c);

#endif /* SL_BUILTIN_WEB_INT_H_INCLUDED */
