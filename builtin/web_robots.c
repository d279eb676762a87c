/*
 * robots.txt and the sitemaps it lists, for the web tasks (web_int.h):
 * the process-wide cache of the robots.txt of each host and run (with
 * the claims that let one task fetch it while the others wait for its
 * answer), the robots.txt fetches and their redirects, the admission of
 * a link by robots.txt, and the sitemaps (followSitemaps).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "builtin/web_int.h"
#include "deltaservice/deltaservice.h"

#define ROBOTS_CACHE_MAX     10000u
#define SITEMAPS_PER_TASK    100u /* sitemap fetches a task queues */
#define ROBOTS_MAX_REDIRECTS 5u   /* RFC 9309 2.3.1.2 */

/* ------------------------------------------------------------------------
 * Process-wide state: the robots.txt cache.
 * --------------------------------------------------------------------- */

static pthread_mutex_t g_robots_mu = PTHREAD_MUTEX_INITIALIZER;
/* "<source> <seq> <hostkey>" -> a struct robots_entry pointer (integer) */
static json_t *g_robots;
/* "<source> <seq> <hostkey>" -> the task (its struct web_crawl, as an
 * integer) fetching that robots.txt now: other tasks that need it wait
 * for its answer instead of fetching it again (once per host and run,
 * also when parallel tasks meet a new host at the same time).  A struct
 * web_crawl lives on its worker thread's stack, so one thread's tasks
 * share an address: claims are made inside sl__bi_web_loop only and
 * dropped when it returns (sl__bi_web_robots_release), before the next
 * task can reuse it. */
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

void
sl__bi_web_robots_init(void)
{
    g_robots = json_object();
    g_robots_claims = json_object();
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

int
sl__bi_web_robots_allows(struct web_crawl *c, const char *url)
{
    char *host = NULL;
    char *key = NULL;
    char *path = NULL;
    int allowed = 1;

    if (!c->robots || sl_web_url_host_key(url, &host) != 0) {
        return 1;
    }
    key =
        sl_asprintf("%s %llu %s", c->source, (unsigned long long)c->seq, host);
    if (sl_web_url_path_query(url, &path) != 0) {
        path = sl_strdup("/");
    }
    if (!robots_lookup(key, path, &allowed, NULL, NULL)) {
        allowed = 1; /* not known yet: the fetch decides */
    }
    sl_free(path);
    sl_free(key);
    sl_free(host);
    return allowed;
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
void
sl__bi_web_robots_release(const void *owner)
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
visit_key(struct web_crawl *c, const char *key)
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
queue_sitemap(struct web_crawl *c, const char *url, uint64_t level)
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
    (void)sl__bi_web_enqueue(c, url, level, 0, K_SITEMAP); /* NULL: counted */
}

/*
 * The sitemaps robots.txt of @host names (@urls, resolved; borrowed), once
 * per host, run and owner: the task that fetched robots.txt queues them,
 * and so does a retry of it that finds robots.txt in the process's cache
 * (its owner is the same, "sitemaps-of:<host>" is first again), while
 * other tasks skip them with one look-up.
 */
static void
host_sitemaps(struct web_crawl *c, const char *host, const json_t *urls)
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
cached_sitemaps(struct web_crawl *c, const char *robots_key, const char *host)
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
    struct web_xfer *x = arg;

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
    if (!sl__bi_web_link_passes(x->c, url, 1)) {
        return 0;
    }
    if (x->c->sitemap_links >= SITEMAP_LINKS_PER_TASK) {
        x->sm_full = 1; /* the rest of this sitemap is not read */
        return SL_ETOOLARGE;
    }
    sl__bi_web_emit_link(x->c, url, 1, 0, 0);
    x->c->sitemap_links++;
    count(x->c, "links.fromSitemaps");
    return 0;
}

/* Body bytes of a sitemap: fed to the streaming parser (never buffered);
 * a parse error cuts the transfer. */
size_t
sl__bi_web_sitemap_body(struct web_xfer *x, const char *buf, size_t n)
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
void
sl__bi_web_sitemap_done(struct web_crawl *c,
                        struct web_xfer *x,
                        CURLcode code,
                        long status)
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

/* ------------------------------------------------------------------------
 * robots.txt fetches and the links they admit.
 * --------------------------------------------------------------------- */

/*
 * robots.txt of @host answered @x with a redirect from @from: queue its
 * target as the next robots.txt fetch of @host, at most
 * ROBOTS_MAX_REDIRECTS in a row (RFC 9309 2.3.1.2), to any host and
 * through the host table like any request.  0 when queued; SL_E* when
 * not: SL_ETOOLARGE (too many, or no Location), SL_EINVAL (a target
 * that is no http(s) URL).
 */
static int
robots_redirect(struct web_crawl *c,
                struct web_xfer *x,
                const char *host,
                const char *from)
{
    struct web_link *lk = NULL;
    char *to = NULL;

    if (x->lk->redirects >= ROBOTS_MAX_REDIRECTS || x->location[0] == '\0') {
        return SL_ETOOLARGE;
    }
    if (sl_web_url_resolve(from, x->location, &to) != 0) {
        return SL_EINVAL;
    }
    lk = sl__bi_web_enqueue(c, to, 0, x->lk->redirects + 1, K_ROBOTS);
    sl_free(to);
    if (lk == NULL) {
        return SL_EINVAL; /* no host key */
    }
    lk->robots_for = sl_strdup(host);
    count(c, "robots.redirected");
    return 0;
}

/* robots.txt of @x's host arrived (or failed: @status 0). */
void
sl__bi_web_robots_done(struct web_crawl *c, struct web_xfer *x, long status)
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
            sl_throttle_source_delay(
                sl_throttle_process(), host, delay, sl_mono_ms());
        }
        robots_store(key, r, sitemaps, down); /* also a retry's cache hit */
    }
    sl_free(key);
    sl_free(from);
}

/* The robots.txt fetch for @host (borrowed) could not be queued or
 * started: unreachable for the run (disallow all), as sl__bi_web_robots_done
 * takes no answer, so that the host's pages do not wait for it until the lease
 * ends. */
void
sl__bi_web_robots_give_up(struct web_crawl *c, const char *host)
{
    char *key =
        sl_asprintf("%s %llu %s", c->source, (unsigned long long)c->seq, host);

    count(c, "robots.unreachable");
    robots_store(key, sl_web_robots_new_disallow_all(), NULL, 1);
    sl_free(key);
}

/* Whether @lk may be fetched by robots.txt (0: not yet known, a
 * robots.txt fetch is queued, by this task or another; the filters and
 * the depth were checked before it was marked visited, sl__bi_web_link_passes).
 * @unknown: hosts found without robots.txt in this pass of schedule()
 * (made on first use): their further links wait without a lookup.
 * Returns 1 (go), 0 (dropped, counted) or 2 (wait for robots.txt). */
int
sl__bi_web_admissible(struct web_crawl *c,
                      struct web_link *lk,
                      json_t **unknown)
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
            if (sl__bi_web_enqueue(c, lk->host, 0, 0, K_ROBOTS) == NULL) {
                sl__bi_web_robots_give_up(
                    c, lk->host); /* known in the next pass */
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
        sl__bi_web_start_failed(
            c,
            lk,
            "links.disallowedByRobots",
            down,
            down ? "robots.txt of %s unreachable (disallow all)"
                 : "disallowed by robots.txt of %s",
            lk->host);
        return 0;
    }
    return 1;
}
