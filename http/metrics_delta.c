/*
 * The delta service's entries per source for GET /metrics (http_int.h).
 * Counting a source's entries is a cursor pass over its keys in every
 * shard (sl_delta_count): too slow for a scrape of a large source.  So a
 * scrape answers the counts of the last pass, and starts a new pass on a
 * thread of its own when none runs and the last one started long enough
 * ago: REFRESH_MIN_MS, or a hundred times what it took, so that counting
 * costs at most about 1% of a core however large the sources are (a
 * million entries, some 50 ms a pass: every 5 s).  A scrape never waits.
 */
#include <pthread.h>

#include "http/http_int.h"

#define REFRESH_MIN_MS 5000
#define REFRESH_FACTOR 100

struct sl__delta_counts {
    struct sl_delta *delta; /* borrowed */
    pthread_mutex_t mu;
    json_t *counts;  /* {source: entries} of the last pass, or NULL */
    int64_t at_ms;   /* monotonic start of the last pass, 0: none */
    int64_t took_ms; /* how long the last pass took */
    int running;     /* a pass runs on th */
    int stopping;    /* sl__delta_counts_free: end the pass */
    int joinable;    /* th was started and not joined */
    pthread_t th;
};

struct sl__delta_counts *
sl__delta_counts_new(struct sl_delta *delta)
{
    struct sl__delta_counts *c = sl_calloc(1, sizeof(*c));

    c->delta = delta;
    (void)pthread_mutex_init(&c->mu, NULL);
    return c;
}

void
sl__delta_counts_free(struct sl__delta_counts *c)
{
    if (c == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    (void)pthread_mutex_unlock(&c->mu);
    if (c->joinable) {
        (void)pthread_join(c->th, NULL);
    }
    json_decref(c->counts);
    (void)pthread_mutex_destroy(&c->mu);
    sl_free(c);
}

static int
add_source(void *arg, const char *source)
{
    struct sl__delta_counts *c = ((void **)arg)[0];
    json_t *counts = ((void **)arg)[1];
    struct sl_err err;
    uint64_t n = 0;
    int stop = 0;

    (void)pthread_mutex_lock(&c->mu);
    stop = c->stopping;
    (void)pthread_mutex_unlock(&c->mu);
    if (stop) {
        return 1; /* ends the listing */
    }
    sl_err_clear(&err);
    if (sl_delta_count(c->delta, source, &n, NULL, &err) == 0) {
        (void)json_object_set_new(counts, source, json_integer((json_int_t)n));
    }
    return 0;
}

static void *
count_main(void *arg)
{
    struct sl__delta_counts *c = arg;
    json_t *counts = json_object();
    void *ctx[2] = {c, counts};
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_delta_sources(c->delta, add_source, ctx, &err) < 0) {
        SL_WARN("metrics: cannot count the delta entries: %s", err.message);
    }
    (void)pthread_mutex_lock(&c->mu);
    json_decref(c->counts);
    c->counts = counts;
    c->took_ms = sl_mono_ms() - c->at_ms;
    c->running = 0;
    (void)pthread_mutex_unlock(&c->mu);
    return NULL;
}

json_t *
sl__delta_counts_get(struct sl__delta_counts *c)
{
    int64_t now = sl_mono_ms();
    json_t *out = NULL;
    int64_t wait_ms = 0;

    (void)pthread_mutex_lock(&c->mu);
    wait_ms = c->took_ms * REFRESH_FACTOR;
    if (wait_ms < REFRESH_MIN_MS) {
        wait_ms = REFRESH_MIN_MS;
    }
    if (!c->running && (c->at_ms == 0 || now - c->at_ms >= wait_ms)) {
        if (c->joinable) {
            (void)pthread_join(c->th, NULL); /* ended: running is 0 */
            c->joinable = 0;
        }
        c->running = 1;
        c->at_ms = now;
        if (pthread_create(&c->th, NULL, count_main, c) == 0) {
            c->joinable = 1;
        } else {
            c->running = 0;
        }
    }
    out = c->counts != NULL ? json_deep_copy(c->counts) : NULL;
    (void)pthread_mutex_unlock(&c->mu);
    return out;
}
