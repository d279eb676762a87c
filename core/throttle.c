/*
 * Throttle bins: the table workers ask before every fetch (docs/
 * configuration.md "Throttle bins"), and the rules that set a bin's
 * limits.  It never sleeps: a refused fetch gets the time to wait, and
 * the caller works on other bins meanwhile or waits itself (ManifoldCF's
 * throttling bins, decided when work is handed out).
 *
 * The table maps a bin name to its slot through a jansson object (name ->
 * slot number); slots live in one array of max_bins entries.  When the
 * table is full, the idle bin used longest ago gives its slot up.  The
 * process's table and the server's rules (sl_throttle_process*) are
 * process-wide; every table has its own lock.
 */
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/sl.h"

#define PROCESS_BINS    100000u /* bins of the process's table */
#define RULES_MAX       256u    /* rules in one list */
#define RULE_BIN_MAX    1024u   /* bytes of a rule's pattern */
#define RATE_MIN        0.001   /* maxPerSecond: one per 1000 s */
#define RATE_MAX        1000.0  /* and 1000 a second */
#define CONNECTIONS_MAX 1024u

/*
 * A bin keeps when its last fetch started and ended, not when the next may
 * start: each caller measures its own gap from those, so a job's stricter
 * rule slows its own fetches only (the server's rules, which every caller
 * gets, are the budget all share).
 */
struct bin {
    char *key;          /* NULL: free slot */
    int64_t start_ms;   /* the last fetch started (-1: none yet) */
    int64_t end_ms;     /* the last fetch ended (-1: none yet) */
    int64_t hold_ms;    /* a slow-down answer: nothing starts before */
    int64_t quiet_ms;   /* no caller's gap runs past this: evictable */
    int64_t used_ms;    /* last acquire or release, for eviction */
    int64_t source_ms;  /* the source's own delay, capped */
    int64_t backoff_ms; /* after slow-down answers; 0 after an answer */
    unsigned inflight;  /* fetches started and not ended */
    int64_t starved_ms; /* a caller below half its share was refused */
};

struct sl_throttle {
    pthread_mutex_t mu;
    json_t *index; /* key -> slot */
    struct bin *slots;
    size_t cap;
    size_t used;
};

int
sl_throttle_new(size_t max_bins, struct sl_throttle **out)
{
    struct sl_throttle *t = NULL;

    *out = NULL;
    if (max_bins == 0 || max_bins > SL_THROTTLE_BINS_MAX) {
        return SL_EINVAL;
    }
    t = sl_calloc(1, sizeof(*t));
    (void)pthread_mutex_init(&t->mu, NULL);
    t->index = json_object();
    t->slots = sl_calloc(max_bins, sizeof(*t->slots));
    t->cap = max_bins;
    *out = t;
    return 0;
}

void
sl_throttle_free(struct sl_throttle *t)
{
    size_t i = 0;

    if (t == NULL) {
        return;
    }
    for (i = 0; i < t->cap; i++) {
        sl_free(t->slots[i].key);
    }
    sl_free(t->slots);
    json_decref(t->index);
    (void)pthread_mutex_destroy(&t->mu);
    sl_free(t);
}

/* The slot of @key, or NULL. */
static struct bin *
find(struct sl_throttle *t, const char *key)
{
    const json_t *v = json_object_get(t->index, key);

    return v != NULL ? &t->slots[json_integer_value(v)] : NULL;
}

/*
 * The slot of @key, made when missing: a free slot, else the idle one
 * (nothing in flight, no wait pending at @now) used longest ago.  NULL
 * when every bin is busy.
 */
static struct bin *
find_or_make(struct sl_throttle *t, const char *key, int64_t now)
{
    struct bin *s = find(t, key);
    struct bin *victim = NULL;
    size_t i = 0;

    if (s != NULL) {
        return s;
    }
    for (i = 0; i < t->cap; i++) {
        struct bin *c = &t->slots[i];

        if (c->key == NULL) {
            victim = c;
            break;
        }
        if (c->inflight == 0 && c->quiet_ms <= now &&
            (victim == NULL || c->used_ms < victim->used_ms)) {
            victim = c;
        }
    }
    if (victim == NULL) {
        return NULL;
    }
    if (victim->key != NULL) {
        (void)json_object_del(t->index, victim->key);
        sl_free(victim->key);
        t->used--;
    }
    memset(victim, 0, sizeof(*victim));
    victim->start_ms = -1;
    victim->end_ms = -1;
    victim->key = sl_strdup(key);
    (void)json_object_set_new(
        t->index, key, json_integer((json_int_t)(victim - t->slots)));
    t->used++;
    return victim;
}

/* The gap this bin needs between two fetches of a caller under @l. */
static int64_t
gap(const struct bin *s, const struct sl_throttle_limits *l)
{
    return l->gap_ms > s->source_ms ? l->gap_ms : s->source_ms;
}

static int64_t
max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* The earliest start of a fetch under gap @g: @g after the last start
 * (start to start) and after the last end (end to start), and not in a
 * slow-down hold. */
static int64_t
next_ok(const struct bin *s, int64_t g)
{
    int64_t t = s->hold_ms;

    if (s->start_ms >= 0) {
        t = max64(t, s->start_ms + g);
    }
    if (s->end_ms >= 0) {
        t = max64(t, s->end_ms + g);
    }
    return t;
}

int
sl_throttle_acquire(struct sl_throttle *t,
                    const char *bin,
                    const struct sl_throttle_limits *l,
                    int64_t now_ms,
                    unsigned held,
                    int64_t *wait_ms)
{
    struct bin *s = NULL;
    unsigned maxc = l->max_inflight;
    int below_half = maxc == 0 || held * 2 < maxc;
    int rc = 0;

    *wait_ms = 0;
    (void)pthread_mutex_lock(&t->mu);
    s = find_or_make(t, bin, now_ms);
    if (s == NULL) {
        rc = SL_ETOOLARGE;
    } else if (maxc != 0 && s->inflight >= maxc) {
        if (below_half) {
            s->starved_ms = now_ms; /* another caller holds too much */
        }
        *wait_ms = -1; /* after a release of this bin */
        rc = 1;
    } else if (!below_half && s->starved_ms != 0 &&
               now_ms - s->starved_ms <= SL_THROTTLE_SHARE_MS) {
        *wait_ms = -1; /* leave the free one to the starved caller */
        rc = 1;
    } else if (next_ok(s, gap(s, l)) > now_ms) {
        *wait_ms = next_ok(s, gap(s, l)) - now_ms;
        rc = 1;
    } else {
        s->inflight++;
        s->used_ms = now_ms;
        /* start to start: a second connection waits the gap too */
        s->start_ms = now_ms;
        s->quiet_ms = max64(s->quiet_ms, now_ms + gap(s, l));
    }
    (void)pthread_mutex_unlock(&t->mu);
    return rc;
}

/* The wait after a slow-down answer: the longer of @retry_after_ms and a
 * doubled backoff, capped. */
static int64_t
slow_down(struct bin *s, int64_t retry_after_ms)
{
    int64_t wait = 0;

    s->backoff_ms =
        s->backoff_ms == 0 ? SL_THROTTLE_BACKOFF_MIN_MS : 2 * s->backoff_ms;
    if (s->backoff_ms > SL_THROTTLE_BACKOFF_MAX_MS) {
        s->backoff_ms = SL_THROTTLE_BACKOFF_MAX_MS;
    }
    wait = retry_after_ms > s->backoff_ms ? retry_after_ms : s->backoff_ms;
    return wait > SL_THROTTLE_RETRY_AFTER_MAX_MS
               ? SL_THROTTLE_RETRY_AFTER_MAX_MS
               : wait;
}

void
sl_throttle_release(struct sl_throttle *t,
                    const char *bin,
                    const struct sl_throttle_limits *l,
                    int64_t now_ms,
                    enum sl_throttle_outcome outcome,
                    int64_t retry_after_ms)
{
    struct bin *s = NULL;

    (void)pthread_mutex_lock(&t->mu);
    s = find(t, bin);
    if (s != NULL) {
        if (s->inflight > 0) {
            s->inflight--;
        }
        s->used_ms = now_ms;
        s->end_ms = now_ms; /* end to start */
        if (outcome == SL_THROTTLE_SLOW_DOWN) {
            s->hold_ms =
                max64(s->hold_ms, now_ms + slow_down(s, retry_after_ms));
        } else if (outcome == SL_THROTTLE_ANSWERED) {
            s->backoff_ms = 0;
        }
        s->quiet_ms = max64(s->quiet_ms, max64(s->hold_ms, now_ms + gap(s, l)));
    }
    (void)pthread_mutex_unlock(&t->mu);
}

void
sl_throttle_source_delay(struct sl_throttle *t,
                         const char *bin,
                         double seconds,
                         int64_t now_ms)
{
    struct bin *s = NULL;
    int64_t ms = 0;

    if (!(seconds > 0)) {
        return; /* absent, zero, negative or NaN */
    }
    ms = seconds * 1000.0 >= (double)SL_THROTTLE_SOURCE_DELAY_MAX_MS
             ? SL_THROTTLE_SOURCE_DELAY_MAX_MS
             : (int64_t)(seconds * 1000.0);
    (void)pthread_mutex_lock(&t->mu);
    s = find_or_make(t, bin, now_ms);
    if (s != NULL && ms > s->source_ms) {
        /* the fetch that brought the delay counts: the next one keeps the
         * new gap from its start and end */
        s->source_ms = ms;
        s->quiet_ms = max64(s->quiet_ms, next_ok(s, ms));
    }
    (void)pthread_mutex_unlock(&t->mu);
}

int
sl_throttle_state(struct sl_throttle *t,
                  const char *bin,
                  struct sl_throttle_state *out)
{
    struct bin *s = NULL;

    memset(out, 0, sizeof(*out));
    (void)pthread_mutex_lock(&t->mu);
    s = find(t, bin);
    if (s != NULL) {
        out->next_ok_ms = next_ok(s, s->source_ms);
        out->source_delay_ms = s->source_ms;
        out->backoff_ms = s->backoff_ms;
        out->inflight = s->inflight;
    }
    out->bins = t->used;
    (void)pthread_mutex_unlock(&t->mu);
    return s != NULL ? 0 : SL_ENOENT;
}

/* ------------------------------------------------------------------------
 * Rules.
 * --------------------------------------------------------------------- */

/* Check the rule at @where ("throttle[2]"); 0 or SL_EINVAL. */
static int
rule_check(const json_t *r, const char *where, struct sl_err *err)
{
    const json_t *bin = json_object_get(r, "bin");
    const json_t *rate = json_object_get(r, "maxPerSecond");
    const json_t *conns = json_object_get(r, "maxConnections");
    const char *key = NULL;
    const json_t *v = NULL;
    char field[256]; /* @where and a member; sl_err_set cuts it */

    if (!json_is_object(r)) {
        return sl_err_set(err, SL_EINVAL, where, "a rule is an object");
    }
    json_object_foreach((json_t *)r, key, v)
    {
        if (strcmp(key, "bin") != 0 && strcmp(key, "maxPerSecond") != 0 &&
            strcmp(key, "maxConnections") != 0) {
            (void)snprintf(field, sizeof(field), "%s.%s", where, key);
            return sl_err_set(err,
                              SL_EINVAL,
                              field,
                              "unknown member '%s' (a rule has bin, "
                              "maxPerSecond and maxConnections)",
                              key);
        }
    }
    (void)snprintf(field, sizeof(field), "%s.bin", where);
    if (!json_is_string(bin) || json_string_length(bin) == 0 ||
        json_string_length(bin) > RULE_BIN_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "the bin pattern must be a string of 1 to %u bytes",
                          RULE_BIN_MAX);
    }
    (void)snprintf(field, sizeof(field), "%s.maxPerSecond", where);
    if (rate != NULL &&
        (!json_is_number(rate) || !(json_number_value(rate) >= RATE_MIN) ||
         json_number_value(rate) > RATE_MAX)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "maxPerSecond must be a number from %g to %g",
                          RATE_MIN,
                          RATE_MAX);
    }
    (void)snprintf(field, sizeof(field), "%s.maxConnections", where);
    if (conns != NULL &&
        (!json_is_integer(conns) || json_integer_value(conns) < 1 ||
         json_integer_value(conns) > (json_int_t)CONNECTIONS_MAX)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "maxConnections must be an integer from 1 to %u",
                          CONNECTIONS_MAX);
    }
    if (rate == NULL && conns == NULL) {
        return sl_err_set(err,
                          SL_EINVAL,
                          where,
                          "a rule sets maxPerSecond, maxConnections or both");
    }
    return 0;
}

int
sl_throttle_rules_check(const json_t *rules,
                        const char *field,
                        struct sl_err *err)
{
    char where[200];
    size_t i = 0;
    int rc = 0;

    if (!json_is_array(rules)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "throttle rules are an array of {bin, maxPerSecond, "
                          "maxConnections}");
    }
    if (json_array_size(rules) > RULES_MAX) {
        return sl_err_set(
            err, SL_EINVAL, field, "at most %u throttle rules", RULES_MAX);
    }
    for (i = 0; i < json_array_size(rules) && rc == 0; i++) {
        (void)snprintf(where, sizeof(where), "%s[%zu]", field, i);
        rc = rule_check(json_array_get(rules, i), where, err);
    }
    return rc;
}

/* Tighten @l by one rule (what is out of range is ignored: a job's rules
 * were checked when it was defined). */
static void
rule_apply(const json_t *r, struct sl_throttle_limits *l)
{
    const json_t *rate = json_object_get(r, "maxPerSecond");
    const json_t *conns = json_object_get(r, "maxConnections");

    if (json_is_number(rate) && json_number_value(rate) >= RATE_MIN &&
        json_number_value(rate) <= RATE_MAX) {
        int64_t g = (int64_t)ceil(1000.0 / json_number_value(rate));

        if (g > l->gap_ms) {
            l->gap_ms = g;
        }
    }
    if (json_integer_value(conns) >= 1 &&
        json_integer_value(conns) <= (json_int_t)CONNECTIONS_MAX) {
        unsigned c = (unsigned)json_integer_value(conns);

        if (l->max_inflight == 0 || c < l->max_inflight) {
            l->max_inflight = c;
        }
    }
}

int
sl_throttle_rules_apply(const json_t *rules,
                        const char *bin,
                        struct sl_throttle_limits *l)
{
    size_t i = 0;
    int n = 0;

    for (i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i);
        const char *pat = json_string_value(json_object_get(r, "bin"));

        if (pat != NULL && fnmatch(pat, bin, 0) == 0) {
            rule_apply(r, l);
            n++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------------
 * The process's table and the server's rules.
 * --------------------------------------------------------------------- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct sl_throttle *g_table;
static json_t *g_rules; /* checked, owned (g_lock; set at start-up, then
                           only read) */

static void
process_init(void)
{
    (void)sl_throttle_new(PROCESS_BINS, &g_table);
}

struct sl_throttle *
sl_throttle_process(void)
{
    (void)pthread_once(&g_once, process_init);
    return g_table;
}

int
sl_throttle_process_rules(const json_t *rules, struct sl_err *err)
{
    int rc = rules != NULL
                 ? sl_throttle_rules_check(rules, "throttle.bins", err)
                 : 0;

    if (rc == 0) {
        (void)pthread_rwlock_wrlock(&g_lock);
        json_decref(g_rules);
        g_rules = json_array_size(rules) > 0 ? json_deep_copy(rules) : NULL;
        (void)pthread_rwlock_unlock(&g_lock);
    }
    return rc;
}

int
sl_throttle_any_rules(const json_t *job_rules)
{
    int any = json_array_size(job_rules) > 0;

    if (!any) {
        (void)pthread_rwlock_rdlock(&g_lock);
        any = g_rules != NULL;
        (void)pthread_rwlock_unlock(&g_lock);
    }
    return any;
}

int
sl_throttle_limits_for(const char *bin,
                       const json_t *job_rules,
                       struct sl_throttle_limits *l)
{
    int n = 0;

    (void)pthread_rwlock_rdlock(&g_lock);
    n = sl_throttle_rules_apply(g_rules, bin, l);
    (void)pthread_rwlock_unlock(&g_lock);
    return n + sl_throttle_rules_apply(job_rules, bin, l);
}
