/*
 * Unit tests of the throttle bins of core/ (sl_throttle_*), the web
 * workers' politeness per host among them: gaps
 * start to start and end to start, connections per host, independent
 * hosts, 429/503 backoff with Retry-After, Crawl-delay and its cap, a
 * full table, and threads: four threads taking turns on three hosts with
 * the real clock never break the gap or the connection limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <poll.h>
#include <pthread.h>

#include <cmocka.h>

#include "core/sl.h"

static const struct sl_throttle_limits one = {1000, 1};

/* A caller holding nothing of the bin. */
static int
acquire(struct sl_throttle *t,
        const char *bin,
        const struct sl_throttle_limits *l,
        int64_t now,
        int64_t *wait)
{
    return sl_throttle_acquire(t, bin, l, now, 0, wait);
}

/* A release with an HTTP status, as the web workers map it. */
static void
release(struct sl_throttle *t,
        const char *bin,
        const struct sl_throttle_limits *l,
        int64_t now,
        int status,
        int64_t retry_after)
{
    sl_throttle_release(t,
                        bin,
                        l,
                        now,
                        status == 429 || status == 503  ? SL_THROTTLE_SLOW_DOWN
                        : status >= 200 && status < 500 ? SL_THROTTLE_ANSWERED
                                                        : SL_THROTTLE_NO_ANSWER,
                        retry_after);
}

/*
 * Two tasks on one host with 4 connections: task A, alone, takes all 4
 * (refused at the fifth while it holds them: no starvation marked); task
 * B, holding none, is refused and marks the host; A, holding 3 after an
 * end, is then refused the free connection and B gets it; A below half
 * gets one again; after SL_THROTTLE_SHARE_MS without a starved caller A
 * may take all again.
 */
static void
test_hosts_share(void **state)
{
    struct sl_throttle *h = NULL;
    struct sl_throttle_limits four = {0, 4};
    int64_t wait = 0;
    unsigned a = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(4, &h), 0);
    for (a = 0; a < 4; a++) {
        assert_int_equal(sl_throttle_acquire(h, "k", &four, 100, a, &wait), 0);
    }
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 100, 4, &wait), 1);
    release(h, "k", &four, 101, 200, -1);
    /* A alone again: nobody starved, it takes the free one */
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 101, 3, &wait), 0);
    /* B holds none: refused, marks the host */
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 102, 0, &wait), 1);
    assert_int_equal(wait, -1);
    release(h, "k", &four, 103, 200, -1);
    /* A (3 of 4) leaves the free connection to B */
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 104, 3, &wait), 1);
    assert_int_equal(wait, -1);
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 105, 0, &wait), 0);
    /* A ends one more: holding 2 (half) it yields, B (1) takes it */
    release(h, "k", &four, 106, 200, -1);
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 107, 2, &wait), 1);
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 107, 1, &wait), 0);
    /* A at 1, below half, gets a connection when one is free */
    release(h, "k", &four, 108, 200, -1);
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 108, 1, &wait), 0);
    /* within the window A (3) still yields; after it (last starved at
     * 102) A may take all again */
    release(h, "k", &four, 110, 200, -1);
    assert_int_equal(sl_throttle_acquire(h, "k", &four, 110, 3, &wait), 1);
    assert_int_equal(wait, -1);
    assert_int_equal(
        sl_throttle_acquire(
            h, "k", &four, 102 + SL_THROTTLE_SHARE_MS + 1, 3, &wait),
        0);
    sl_throttle_free(h);
}

static void
test_hosts_gap_and_connections(void **state)
{
    struct sl_throttle *h = NULL;
    struct sl_throttle_limits two = {500, 2};
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(0, &h), SL_EINVAL);
    assert_int_equal(sl_throttle_new(16, &h), 0);
    /* one connection: busy until released, then the gap from the end */
    assert_int_equal(acquire(h, "http://a:80", &one, 0, &wait), 0);
    assert_int_equal(acquire(h, "http://a:80", &one, 10, &wait), 1);
    assert_int_equal(wait, -1);
    /* another host is not held up */
    assert_int_equal(acquire(h, "http://b:80", &one, 10, &wait), 0);
    release(h, "http://a:80", &one, 1500, 200, -1);
    assert_int_equal(acquire(h, "http://a:80", &one, 1500, &wait), 1);
    assert_int_equal(wait, 1000); /* end to start */
    assert_int_equal(acquire(h, "http://a:80", &one, 2499, &wait), 1);
    assert_int_equal(wait, 1);
    assert_int_equal(acquire(h, "http://a:80", &one, 2500, &wait), 0);
    /* two connections: the second still starts a gap after the first */
    assert_int_equal(acquire(h, "http://c:80", &two, 0, &wait), 0);
    assert_int_equal(acquire(h, "http://c:80", &two, 100, &wait), 1);
    assert_int_equal(wait, 400);
    assert_int_equal(acquire(h, "http://c:80", &two, 500, &wait), 0);
    assert_int_equal(acquire(h, "http://c:80", &two, 5000, &wait), 1);
    assert_int_equal(wait, -1); /* two in flight */
    sl_throttle_free(h);
}

static void
test_hosts_backoff(void **state)
{
    struct sl_throttle *h = NULL;
    struct sl_throttle_state st;
    struct sl_throttle_limits fast = {0, 1};
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(4, &h), 0);
    /* 429 with Retry-After: 5 s */
    assert_int_equal(acquire(h, "k", &fast, 0, &wait), 0);
    release(h, "k", &fast, 10, 429, 5000);
    assert_int_equal(acquire(h, "k", &fast, 10, &wait), 1);
    assert_int_equal(wait, 5000);
    /* 503 without Retry-After: the backoff doubles (1 s, then 2 s) */
    assert_int_equal(acquire(h, "k", &fast, 5010, &wait), 0);
    release(h, "k", &fast, 5010, 503, -1);
    assert_int_equal(sl_throttle_state(h, "k", &st), 0);
    assert_int_equal(st.backoff_ms, 2 * SL_THROTTLE_BACKOFF_MIN_MS);
    assert_int_equal(acquire(h, "k", &fast, 5010, &wait), 1);
    assert_int_equal(wait, 2 * SL_THROTTLE_BACKOFF_MIN_MS);
    /* a success resets it; a 500 neither backs off nor resets */
    assert_int_equal(acquire(h, "k", &fast, 7010, &wait), 0);
    release(h, "k", &fast, 7020, 200, -1);
    assert_int_equal(sl_throttle_state(h, "k", &st), 0);
    assert_int_equal(st.backoff_ms, 0);
    assert_int_equal(acquire(h, "k", &fast, 7020, &wait), 0);
    release(h, "k", &fast, 7030, 500, -1);
    assert_int_equal(acquire(h, "k", &fast, 7030, &wait), 0);
    /* a huge Retry-After is capped */
    release(h, "k", &fast, 8000, 429, INT64_C(1) << 40);
    assert_int_equal(acquire(h, "k", &fast, 8000, &wait), 1);
    assert_int_equal(wait, SL_THROTTLE_RETRY_AFTER_MAX_MS);
    sl_throttle_free(h);
}

static void
test_hosts_crawl_delay(void **state)
{
    struct sl_throttle *h = NULL;
    struct sl_throttle_state st;
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(4, &h), 0);
    sl_throttle_source_delay(h, "k", 2.5, 0);
    sl_throttle_source_delay(h, "k", -1, 0);  /* ignored */
    sl_throttle_source_delay(h, "k", 0.5, 0); /* lower: ignored */
    assert_int_equal(acquire(h, "k", &one, 0, &wait), 0);
    release(h, "k", &one, 100, 200, -1);
    assert_int_equal(acquire(h, "k", &one, 100, &wait), 1);
    assert_int_equal(wait, 2500); /* max(delayMs 1000, Crawl-delay) */
    /* learnt after a request ended: the gap counts from that end */
    assert_int_equal(acquire(h, "j", &one, 0, &wait), 0);
    release(h, "j", &one, 50, 200, -1);
    sl_throttle_source_delay(h, "j", 3, 60);
    assert_int_equal(acquire(h, "j", &one, 1100, &wait), 1);
    assert_int_equal(wait, 3050 - 1100);
    sl_throttle_source_delay(h, "k", 1e9, 100);
    assert_int_equal(sl_throttle_state(h, "k", &st), 0);
    assert_int_equal(st.source_delay_ms, SL_THROTTLE_SOURCE_DELAY_MAX_MS);
    assert_int_equal(sl_throttle_state(h, "none", &st), SL_ENOENT);
    sl_throttle_free(h);
}

/* A full table: an idle host gives its place up, busy ones never. */
static void
test_hosts_full(void **state)
{
    struct sl_throttle *h = NULL;
    struct sl_throttle_state st;
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(2, &h), 0);
    assert_int_equal(acquire(h, "a", &one, 0, &wait), 0);
    assert_int_equal(acquire(h, "b", &one, 0, &wait), 0);
    assert_int_equal(acquire(h, "c", &one, 0, &wait), SL_ETOOLARGE);
    release(h, "a", &one, 10, 200, -1);
    /* "a" still has its gap pending until 1010: not idle yet */
    assert_int_equal(acquire(h, "c", &one, 500, &wait), SL_ETOOLARGE);
    assert_int_equal(acquire(h, "c", &one, 1010, &wait), 0);
    assert_int_equal(sl_throttle_state(h, "a", &st), SL_ENOENT);
    assert_int_equal(st.bins, 2);
    assert_int_equal(sl_throttle_state(h, "b", &st), 0);
    assert_int_equal(st.inflight, 1);
    sl_throttle_free(h);
}

/* ---- threads with the real clock ---- */

#define T_THREADS 4
#define T_HOSTS   3
#define T_EACH    12 /* requests per host */
#define T_GAP     15 /* ms */

struct shared {
    struct sl_throttle *h;
    pthread_mutex_t mu;
    int64_t starts[T_HOSTS][T_EACH];
    int64_t ends[T_HOSTS][T_EACH];
    int done[T_HOSTS];
    int inflight[T_HOSTS];
    int max_inflight[T_HOSTS];
};

/* No limit at all (max_inflight 0, gap 0): every fetch is granted. */
static void
test_throttle_unlimited(void **state)
{
    struct sl_throttle *t = NULL;
    struct sl_throttle_limits none = {0, 0};
    int64_t wait = 0;
    int i = 0;

    (void)state;
    assert_int_equal(sl_throttle_new(4, &t), 0);
    for (i = 0; i < 100; i++) {
        assert_int_equal(acquire(t, "file:///srv", &none, 5, &wait), 0);
    }
    sl_throttle_free(t);
}

/* Rules: checked with the rule and member named, every matching rule
 * tightens (the larger gap, the fewer connections), others leave the
 * limits alone; the server's rules and a job's add up. */
static void
test_throttle_rules(void **state)
{
    json_t *rules = json_loads(
        "[{\"bin\": \"https://*.example.com:*\", \"maxPerSecond\": 4},"
        " {\"bin\": \"https://www.example.com:443\", \"maxConnections\": 2},"
        " {\"bin\": \"file:///srv/*\", \"maxPerSecond\": 0.5,"
        "  \"maxConnections\": 8}]",
        0,
        NULL);
    json_t *job =
        json_loads("[{\"bin\": \"*\", \"maxPerSecond\": 2}]", 0, NULL);
    struct sl_throttle_limits l = {100, 4};
    struct sl_err err;
    static const char *const bad[][2] = {
        {"{}", "throttle"},
        {"[{\"bin\": \"*\"}]", "throttle[0]"},
        {"[{\"bin\": \"\", \"maxPerSecond\": 1}]", "throttle[0].bin"},
        {"[{\"bin\": \"*\", \"maxPerSecond\": 0}]", "throttle[0].maxPerSecond"},
        {"[{\"bin\": \"*\", \"maxPerSecond\": 1},"
         " {\"bin\": \"*\", \"maxConnections\": 0}]",
         "throttle[1].maxConnections"},
        {"[{\"bin\": \"*\", \"maxPerSecond\": 1, \"rate\": 2}]",
         "throttle[0].rate"},
        {"[3]", "throttle[0]"},
    };
    size_t i = 0;

    (void)state;
    assert_non_null(rules);
    assert_int_equal(sl_throttle_rules_check(rules, "throttle", &err), 0);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i][0], 0, NULL);

        sl_err_clear(&err);
        assert_int_equal(sl_throttle_rules_check(b, "throttle", &err),
                         SL_EINVAL);
        assert_string_equal(err.field, bad[i][1]);
        json_decref(b);
    }
    assert_int_equal(
        sl_throttle_rules_apply(rules, "https://www.example.com:443", &l), 2);
    assert_int_equal(l.gap_ms, 250);
    assert_int_equal(l.max_inflight, 2);
    l = (struct sl_throttle_limits){1000, 1};
    assert_int_equal(
        sl_throttle_rules_apply(rules, "https://www.example.com:443", &l), 2);
    assert_int_equal(l.gap_ms, 1000); /* the politeness is stricter */
    assert_int_equal(l.max_inflight, 1);
    l = (struct sl_throttle_limits){0, 0};
    assert_int_equal(sl_throttle_rules_apply(rules, "file:///srv/nas", &l), 1);
    assert_int_equal(l.gap_ms, 2000);
    assert_int_equal(l.max_inflight, 8);
    l = (struct sl_throttle_limits){0, 0};
    assert_int_equal(sl_throttle_rules_apply(rules, "http://other:80", &l), 0);
    assert_int_equal(l.gap_ms, 0);
    assert_int_equal(l.max_inflight, 0);
    assert_int_equal(sl_throttle_rules_apply(NULL, "http://other:80", &l), 0);

    /* the server's rules, then a job's */
    assert_int_equal(sl_throttle_process_rules(rules, &err), 0);
    l = (struct sl_throttle_limits){0, 0};
    sl_throttle_limits_for("file:///srv/nas", job, &l);
    assert_int_equal(l.gap_ms, 2000);
    assert_int_equal(l.max_inflight, 8);
    l = (struct sl_throttle_limits){0, 0};
    sl_throttle_limits_for("file:///home", job, &l);
    assert_int_equal(l.gap_ms, 500);
    assert_int_equal(l.max_inflight, 0);
    assert_int_equal(sl_throttle_process_rules(job, &err), 0);
    l = (struct sl_throttle_limits){0, 0};
    sl_throttle_limits_for("file:///srv/nas", NULL, &l);
    assert_int_equal(l.gap_ms, 500);
    sl_err_clear(&err);
    assert_int_equal(sl_throttle_process_rules(json_array_get(rules, 0), &err),
                     SL_EINVAL);
    assert_string_equal(err.field, "throttle.bins");
    assert_int_equal(sl_throttle_process_rules(NULL, &err), 0);
    assert_non_null(sl_throttle_process());
    assert_ptr_equal(sl_throttle_process(), sl_throttle_process());
    json_decref(rules);
    json_decref(job);
}

static void *
hammer(void *arg)
{
    struct shared *sh = arg;
    const struct sl_throttle_limits p = {T_GAP, 1};
    char key[8];
    int k = 0;

    for (;;) {
        int all = 1;
        int got = 0;

        for (k = 0; k < T_HOSTS && !got; k++) {
            int64_t wait = 0;
            int64_t t0 = 0;
            int i = 0;

            (void)pthread_mutex_lock(&sh->mu);
            all &= sh->done[k] == T_EACH;
            i = sh->done[k];
            (void)pthread_mutex_unlock(&sh->mu);
            if (i == T_EACH) {
                continue;
            }
            (void)snprintf(key, sizeof(key), "h%d", k);
            t0 = sl_mono_ms();
            if (acquire(sh->h, key, &p, t0, &wait) != 0) {
                continue;
            }
            got = 1;
            (void)pthread_mutex_lock(&sh->mu);
            i = sh->done[k]++;
            sh->starts[k][i] = t0;
            if (++sh->inflight[k] > sh->max_inflight[k]) {
                sh->max_inflight[k] = sh->inflight[k];
            }
            (void)pthread_mutex_unlock(&sh->mu);
            (void)poll(NULL, 0, 2); /* the "request" */
            (void)pthread_mutex_lock(&sh->mu);
            sh->inflight[k]--;
            sh->ends[k][i] = sl_mono_ms();
            (void)pthread_mutex_unlock(&sh->mu);
            release(sh->h, key, &p, sh->ends[k][i], 200, -1);
        }
        if (all) {
            break;
        }
        if (!got) {
            (void)poll(NULL, 0, 1);
        }
    }
    return NULL;
}

static void
test_hosts_threads(void **state)
{
    static struct shared sh;
    pthread_t th[T_THREADS];
    int i = 0;
    int k = 0;

    (void)state;
    memset(&sh, 0, sizeof(sh));
    (void)pthread_mutex_init(&sh.mu, NULL);
    assert_int_equal(sl_throttle_new(8, &sh.h), 0);
    for (i = 0; i < T_THREADS; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, hammer, &sh), 0);
    }
    for (i = 0; i < T_THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
    }
    for (k = 0; k < T_HOSTS; k++) {
        assert_int_equal(sh.done[k], T_EACH);
        assert_int_equal(sh.max_inflight[k], 1);
        for (i = 1; i < T_EACH; i++) {
            /* one connection: each start is after the previous end */
            assert_true(sh.starts[k][i] - sh.ends[k][i - 1] >= T_GAP);
            assert_true(sh.starts[k][i] - sh.starts[k][i - 1] >= T_GAP);
        }
    }
    sl_throttle_free(sh.h);
    (void)pthread_mutex_destroy(&sh.mu);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts_gap_and_connections),
        cmocka_unit_test(test_hosts_share),
        cmocka_unit_test(test_hosts_backoff),
        cmocka_unit_test(test_hosts_crawl_delay),
        cmocka_unit_test(test_hosts_full),
        cmocka_unit_test(test_hosts_threads),
        cmocka_unit_test(test_throttle_unlimited),
        cmocka_unit_test(test_throttle_rules),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
