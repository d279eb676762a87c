/*
 * Unit tests of the politeness table of web/ (sl_web_hosts_*): gaps
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

#include "web/web.h"

static const struct sl_web_politeness one = {1000, 1};

/*
 * Two tasks on one host with 4 connections: task A, alone, takes all 4
 * (refused at the fifth while it holds them: no starvation marked); task
 * B, holding none, is refused and marks the host; A, holding 3 after an
 * end, is then refused the free connection and B gets it; A below half
 * gets one again; after SL_WEB_HOSTS_SHARE_MS without a starved caller A
 * may take all again.
 */
static void
test_hosts_share(void **state)
{
    struct sl_web_hosts *h = NULL;
    struct sl_web_politeness four = {0, 4};
    int64_t wait = 0;
    unsigned a = 0;

    (void)state;
    assert_int_equal(sl_web_hosts_new(4, &h), 0);
    for (a = 0; a < 4; a++) {
        assert_int_equal(
            sl_web_hosts_acquire_share(h, "k", &four, 100, a, &wait), 0);
    }
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 100, 4, &wait),
                     1);
    sl_web_hosts_release(h, "k", &four, 101, 200, -1);
    /* A alone again: nobody starved, it takes the free one */
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 101, 3, &wait),
                     0);
    /* B holds none: refused, marks the host */
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 102, 0, &wait),
                     1);
    assert_int_equal(wait, -1);
    sl_web_hosts_release(h, "k", &four, 103, 200, -1);
    /* A (3 of 4) leaves the free connection to B */
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 104, 3, &wait),
                     1);
    assert_int_equal(wait, -1);
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 105, 0, &wait),
                     0);
    /* A ends one more: holding 2 (half) it yields, B (1) takes it */
    sl_web_hosts_release(h, "k", &four, 106, 200, -1);
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 107, 2, &wait),
                     1);
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 107, 1, &wait),
                     0);
    /* A at 1, below half, gets a connection when one is free */
    sl_web_hosts_release(h, "k", &four, 108, 200, -1);
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 108, 1, &wait),
                     0);
    /* within the window A (3) still yields; after it (last starved at
     * 102) A may take all again */
    sl_web_hosts_release(h, "k", &four, 110, 200, -1);
    assert_int_equal(sl_web_hosts_acquire_share(h, "k", &four, 110, 3, &wait),
                     1);
    assert_int_equal(wait, -1);
    assert_int_equal(
        sl_web_hosts_acquire_share(
            h, "k", &four, 102 + SL_WEB_HOSTS_SHARE_MS + 1, 3, &wait),
        0);
    sl_web_hosts_free(h);
}

static void
test_hosts_gap_and_connections(void **state)
{
    struct sl_web_hosts *h = NULL;
    struct sl_web_politeness two = {500, 2};
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_web_hosts_new(0, &h), SL_EINVAL);
    assert_int_equal(sl_web_hosts_new(16, &h), 0);
    /* one connection: busy until released, then the gap from the end */
    assert_int_equal(sl_web_hosts_acquire(h, "http://a:80", &one, 0, &wait), 0);
    assert_int_equal(sl_web_hosts_acquire(h, "http://a:80", &one, 10, &wait),
                     1);
    assert_int_equal(wait, -1);
    /* another host is not held up */
    assert_int_equal(sl_web_hosts_acquire(h, "http://b:80", &one, 10, &wait),
                     0);
    sl_web_hosts_release(h, "http://a:80", &one, 1500, 200, -1);
    assert_int_equal(sl_web_hosts_acquire(h, "http://a:80", &one, 1500, &wait),
                     1);
    assert_int_equal(wait, 1000); /* end to start */
    assert_int_equal(sl_web_hosts_acquire(h, "http://a:80", &one, 2499, &wait),
                     1);
    assert_int_equal(wait, 1);
    assert_int_equal(sl_web_hosts_acquire(h, "http://a:80", &one, 2500, &wait),
                     0);
    /* two connections: the second still starts a gap after the first */
    assert_int_equal(sl_web_hosts_acquire(h, "http://c:80", &two, 0, &wait), 0);
    assert_int_equal(sl_web_hosts_acquire(h, "http://c:80", &two, 100, &wait),
                     1);
    assert_int_equal(wait, 400);
    assert_int_equal(sl_web_hosts_acquire(h, "http://c:80", &two, 500, &wait),
                     0);
    assert_int_equal(sl_web_hosts_acquire(h, "http://c:80", &two, 5000, &wait),
                     1);
    assert_int_equal(wait, -1); /* two in flight */
    sl_web_hosts_free(h);
}

static void
test_hosts_backoff(void **state)
{
    struct sl_web_hosts *h = NULL;
    struct sl_web_host_state st;
    struct sl_web_politeness fast = {0, 1};
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_web_hosts_new(4, &h), 0);
    /* 429 with Retry-After: 5 s */
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 0, &wait), 0);
    sl_web_hosts_release(h, "k", &fast, 10, 429, 5000);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 10, &wait), 1);
    assert_int_equal(wait, 5000);
    /* 503 without Retry-After: the backoff doubles (1 s, then 2 s) */
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 5010, &wait), 0);
    sl_web_hosts_release(h, "k", &fast, 5010, 503, -1);
    assert_int_equal(sl_web_hosts_state(h, "k", &st), 0);
    assert_int_equal(st.backoff_ms, 2 * SL_WEB_BACKOFF_MIN_MS);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 5010, &wait), 1);
    assert_int_equal(wait, 2 * SL_WEB_BACKOFF_MIN_MS);
    /* a success resets it; a 500 neither backs off nor resets */
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 7010, &wait), 0);
    sl_web_hosts_release(h, "k", &fast, 7020, 200, -1);
    assert_int_equal(sl_web_hosts_state(h, "k", &st), 0);
    assert_int_equal(st.backoff_ms, 0);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 7020, &wait), 0);
    sl_web_hosts_release(h, "k", &fast, 7030, 500, -1);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 7030, &wait), 0);
    /* a huge Retry-After is capped */
    sl_web_hosts_release(h, "k", &fast, 8000, 429, INT64_C(1) << 40);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &fast, 8000, &wait), 1);
    assert_int_equal(wait, SL_WEB_RETRY_AFTER_MAX_MS);
    sl_web_hosts_free(h);
}

static void
test_hosts_crawl_delay(void **state)
{
    struct sl_web_hosts *h = NULL;
    struct sl_web_host_state st;
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_web_hosts_new(4, &h), 0);
    sl_web_hosts_crawl_delay(h, "k", 2.5, 0);
    sl_web_hosts_crawl_delay(h, "k", -1, 0);  /* ignored */
    sl_web_hosts_crawl_delay(h, "k", 0.5, 0); /* lower: ignored */
    assert_int_equal(sl_web_hosts_acquire(h, "k", &one, 0, &wait), 0);
    sl_web_hosts_release(h, "k", &one, 100, 200, -1);
    assert_int_equal(sl_web_hosts_acquire(h, "k", &one, 100, &wait), 1);
    assert_int_equal(wait, 2500); /* max(delayMs 1000, Crawl-delay) */
    /* learnt after a request ended: the gap counts from that end */
    assert_int_equal(sl_web_hosts_acquire(h, "j", &one, 0, &wait), 0);
    sl_web_hosts_release(h, "j", &one, 50, 200, -1);
    sl_web_hosts_crawl_delay(h, "j", 3, 60);
    assert_int_equal(sl_web_hosts_acquire(h, "j", &one, 1100, &wait), 1);
    assert_int_equal(wait, 3050 - 1100);
    sl_web_hosts_crawl_delay(h, "k", 1e9, 100);
    assert_int_equal(sl_web_hosts_state(h, "k", &st), 0);
    assert_int_equal(st.crawl_delay_ms, SL_WEB_CRAWL_DELAY_MAX_MS);
    assert_int_equal(sl_web_hosts_state(h, "none", &st), SL_ENOENT);
    sl_web_hosts_free(h);
}

/* A full table: an idle host gives its place up, busy ones never. */
static void
test_hosts_full(void **state)
{
    struct sl_web_hosts *h = NULL;
    struct sl_web_host_state st;
    int64_t wait = 0;

    (void)state;
    assert_int_equal(sl_web_hosts_new(2, &h), 0);
    assert_int_equal(sl_web_hosts_acquire(h, "a", &one, 0, &wait), 0);
    assert_int_equal(sl_web_hosts_acquire(h, "b", &one, 0, &wait), 0);
    assert_int_equal(sl_web_hosts_acquire(h, "c", &one, 0, &wait),
                     SL_ETOOLARGE);
    sl_web_hosts_release(h, "a", &one, 10, 200, -1);
    /* "a" still has its gap pending until 1010: not idle yet */
    assert_int_equal(sl_web_hosts_acquire(h, "c", &one, 500, &wait),
                     SL_ETOOLARGE);
    assert_int_equal(sl_web_hosts_acquire(h, "c", &one, 1010, &wait), 0);
    assert_int_equal(sl_web_hosts_state(h, "a", &st), SL_ENOENT);
    assert_int_equal(st.hosts, 2);
    assert_int_equal(sl_web_hosts_state(h, "b", &st), 0);
    assert_int_equal(st.inflight, 1);
    sl_web_hosts_free(h);
}

/* ---- threads with the real clock ---- */

#define T_THREADS 4
#define T_HOSTS   3
#define T_EACH    12 /* requests per host */
#define T_GAP     15 /* ms */

struct shared {
    struct sl_web_hosts *h;
    pthread_mutex_t mu;
    int64_t starts[T_HOSTS][T_EACH];
    int64_t ends[T_HOSTS][T_EACH];
    int done[T_HOSTS];
    int inflight[T_HOSTS];
    int max_inflight[T_HOSTS];
};

static void *
hammer(void *arg)
{
    struct shared *sh = arg;
    const struct sl_web_politeness p = {T_GAP, 1};
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
            if (sl_web_hosts_acquire(sh->h, key, &p, t0, &wait) != 0) {
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
            sl_web_hosts_release(sh->h, key, &p, sh->ends[k][i], 200, -1);
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
    assert_int_equal(sl_web_hosts_new(8, &sh.h), 0);
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
    sl_web_hosts_free(sh.h);
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
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
