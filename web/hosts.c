/*
 * Politeness per host (docs/web.md "Politeness"): the table the web
 * workers ask before every request.  It never sleeps: a refused request
 * gets the time to wait, and the caller works on other hosts meanwhile
 * (ManifoldCF's throttling bins, decided when work is handed out).
 *
 * The table maps a host key to its slot through a jansson object (key ->
 * slot number); slots live in one array of max_hosts entries.  When the
 * table is full, the idle host used longest ago gives its slot up.
 */
#include <pthread.h>
#include <string.h>

#include "web/web.h"

struct host {
    char *key;          /* NULL: free slot */
    int64_t next_ok_ms; /* no request may start before */
    int64_t used_ms;    /* last acquire or release, for eviction */
    int64_t crawl_ms;   /* robots.txt Crawl-delay, capped */
    int64_t backoff_ms; /* after 429/503 answers; 0 after a success */
    unsigned inflight;  /* requests started and not ended */
    int64_t starved_ms; /* a caller below half its share was refused */
    int requested;      /* a request was granted */
};

struct sl_web_hosts {
    pthread_mutex_t mu;
    json_t *index; /* key -> slot */
    struct host *slots;
    size_t cap;
    size_t used;
};

int
sl_web_hosts_new(size_t max_hosts, struct sl_web_hosts **out)
{
    struct sl_web_hosts *h = NULL;

    *out = NULL;
    if (max_hosts == 0 || max_hosts > SL_WEB_HOSTS_MAX) {
        return SL_EINVAL;
    }
    h = sl_calloc(1, sizeof(*h));
    (void)pthread_mutex_init(&h->mu, NULL);
    h->index = json_object();
    h->slots = sl_calloc(max_hosts, sizeof(*h->slots));
    h->cap = max_hosts;
    *out = h;
    return 0;
}

void
sl_web_hosts_free(struct sl_web_hosts *h)
{
    size_t i = 0;

    if (h == NULL) {
        return;
    }
    for (i = 0; i < h->cap; i++) {
        sl_free(h->slots[i].key);
    }
    sl_free(h->slots);
    json_decref(h->index);
    (void)pthread_mutex_destroy(&h->mu);
    sl_free(h);
}

/* The slot of @key, or NULL. */
static struct host *
find(struct sl_web_hosts *h, const char *key)
{
    const json_t *v = json_object_get(h->index, key);

    return v != NULL ? &h->slots[json_integer_value(v)] : NULL;
}

/*
 * The slot of @key, made when missing: a free slot, else the idle one
 * (nothing in flight, no wait pending at @now) used longest ago.  NULL
 * when every host is busy.
 */
static struct host *
find_or_make(struct sl_web_hosts *h, const char *key, int64_t now)
{
    struct host *s = find(h, key);
    struct host *victim = NULL;
    size_t i = 0;

    if (s != NULL) {
        return s;
    }
    for (i = 0; i < h->cap; i++) {
        struct host *c = &h->slots[i];

        if (c->key == NULL) {
            victim = c;
            break;
        }
        if (c->inflight == 0 && c->next_ok_ms <= now &&
            (victim == NULL || c->used_ms < victim->used_ms)) {
            victim = c;
        }
    }
    if (victim == NULL) {
        return NULL;
    }
    if (victim->key != NULL) {
        (void)json_object_del(h->index, victim->key);
        sl_free(victim->key);
        h->used--;
    }
    memset(victim, 0, sizeof(*victim));
    victim->key = sl_strdup(key);
    (void)json_object_set_new(
        h->index, key, json_integer((json_int_t)(victim - h->slots)));
    h->used++;
    return victim;
}

/* The gap this host needs between two requests. */
static int64_t
gap(const struct host *s, const struct sl_web_politeness *p)
{
    return p->delay_ms > s->crawl_ms ? p->delay_ms : s->crawl_ms;
}

int
sl_web_hosts_acquire(struct sl_web_hosts *h,
                     const char *key,
                     const struct sl_web_politeness *p,
                     int64_t now_ms,
                     int64_t *wait_ms)
{
    return sl_web_hosts_acquire_share(h, key, p, now_ms, 0, wait_ms);
}

int
sl_web_hosts_acquire_share(struct sl_web_hosts *h,
                           const char *key,
                           const struct sl_web_politeness *p,
                           int64_t now_ms,
                           unsigned held,
                           int64_t *wait_ms)
{
    struct host *s = NULL;
    unsigned maxc = p->max_connections > 0 ? p->max_connections : 1;
    int below_half = held * 2 < maxc;
    int rc = 0;

    *wait_ms = 0;
    (void)pthread_mutex_lock(&h->mu);
    s = find_or_make(h, key, now_ms);
    if (s == NULL) {
        rc = SL_ETOOLARGE;
    } else if (s->inflight >= maxc) {
        if (below_half) {
            s->starved_ms = now_ms; /* another caller holds too much */
        }
        *wait_ms = -1; /* after a release of this host */
        rc = 1;
    } else if (!below_half && s->starved_ms != 0 &&
               now_ms - s->starved_ms <= SL_WEB_HOSTS_SHARE_MS) {
        *wait_ms = -1; /* leave the free one to the starved caller */
        rc = 1;
    } else if (s->next_ok_ms > now_ms) {
        *wait_ms = s->next_ok_ms - now_ms;
        rc = 1;
    } else {
        s->inflight++;
        s->requested = 1;
        s->used_ms = now_ms;
        /* start to start: a second connection waits the gap too */
        s->next_ok_ms = now_ms + gap(s, p);
    }
    (void)pthread_mutex_unlock(&h->mu);
    return rc;
}

void
sl_web_hosts_release(struct sl_web_hosts *h,
                     const char *key,
                     const struct sl_web_politeness *p,
                     int64_t now_ms,
                     int status,
                     int64_t retry_after_ms)
{
    struct host *s = NULL;
    int64_t next = 0;

    (void)pthread_mutex_lock(&h->mu);
    s = find(h, key);
    if (s != NULL) {
        if (s->inflight > 0) {
            s->inflight--;
        }
        s->used_ms = now_ms;
        next = now_ms + gap(s, p); /* end to start */
        if (status == 429 || status == 503) {
            int64_t wait = 0;

            s->backoff_ms =
                s->backoff_ms == 0 ? SL_WEB_BACKOFF_MIN_MS : 2 * s->backoff_ms;
            if (s->backoff_ms > SL_WEB_BACKOFF_MAX_MS) {
                s->backoff_ms = SL_WEB_BACKOFF_MAX_MS;
            }
            wait =
                retry_after_ms > s->backoff_ms ? retry_after_ms : s->backoff_ms;
            if (wait > SL_WEB_RETRY_AFTER_MAX_MS) {
                wait = SL_WEB_RETRY_AFTER_MAX_MS;
            }
            next = now_ms + (wait > gap(s, p) ? wait : gap(s, p));
        } else if (status >= 200 && status < 500) {
            s->backoff_ms = 0;
        }
        if (next > s->next_ok_ms) {
            s->next_ok_ms = next;
        }
    }
    (void)pthread_mutex_unlock(&h->mu);
}

void
sl_web_hosts_crawl_delay(struct sl_web_hosts *h,
                         const char *key,
                         double seconds,
                         int64_t now_ms)
{
    struct host *s = NULL;
    int64_t ms = 0;

    if (!(seconds > 0)) {
        return; /* absent, zero, negative or NaN */
    }
    ms = seconds * 1000.0 >= (double)SL_WEB_CRAWL_DELAY_MAX_MS
             ? SL_WEB_CRAWL_DELAY_MAX_MS
             : (int64_t)(seconds * 1000.0);
    (void)pthread_mutex_lock(&h->mu);
    s = find_or_make(h, key, now_ms);
    if (s != NULL && ms > s->crawl_ms) {
        s->crawl_ms = ms;
        /* the request that brought robots.txt counts: the next one keeps
         * the new gap from it */
        if (s->requested && s->used_ms + ms > s->next_ok_ms) {
            s->next_ok_ms = s->used_ms + ms;
        }
    }
    (void)pthread_mutex_unlock(&h->mu);
}

int
sl_web_hosts_state(struct sl_web_hosts *h,
                   const char *key,
                   struct sl_web_host_state *out)
{
    struct host *s = NULL;

    memset(out, 0, sizeof(*out));
    (void)pthread_mutex_lock(&h->mu);
    s = find(h, key);
    if (s != NULL) {
        out->next_ok_ms = s->next_ok_ms;
        out->crawl_delay_ms = s->crawl_ms;
        out->backoff_ms = s->backoff_ms;
        out->inflight = s->inflight;
    }
    out->hosts = h->used;
    (void)pthread_mutex_unlock(&h->mu);
    return s != NULL ? 0 : SL_ENOENT;
}
