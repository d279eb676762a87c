/*
 * bench/recheck: the cost of finding the records due for their next check
 * (continuous crawls, deltaservice/recheck.c) against the size of the
 * source: N records have a next check, K of them due now.  Printed, each
 * the median of R runs after a warm-up:
 *   due scan    sl_delta_recheck_due at a time when K are due
 *   baseline    the same call at a time when all N are due: what reading
 *               every record's next check costs (a source without the
 *               index by time)
 * and their ratio, with the rate of sl_delta_recheck_set (batches of 1000,
 * random ids, as a crawl reports them) that filled the source.
 *
 * usage: bench-recheck [--records N] [--due K] [--runs R] [--dir DIR]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deltaservice/deltaservice.h"

#define BATCH   1000
#define SRC     "bench"
#define MIN_MS  60000ULL         /* a minute */
#define MAX_MS  86400000ULL      /* a day */
#define LATE_MS 1000000000000ULL /* the not-due ones were checked then */

static double
now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
rng(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int
count_cb(void *ctx, const char *id, uint64_t due_ms)
{
    (void)id;
    (void)due_ms;
    ++*(size_t *)ctx;
    return 0;
}

/* Set the next checks of records [from, to) as checked at @at. */
static void
fill(struct sl_delta *d, uint64_t from, uint64_t to, uint64_t at)
{
    static char ids[BATCH][64];
    struct sl_delta_recheck items[BATCH];
    uint64_t seed = 0x5eed5eedULL ^ from;
    struct sl_err err;
    uint64_t i = from;

    while (i < to) {
        size_t n = 0;

        for (n = 0; n < BATCH && i < to; n++, i++) {
            (void)snprintf(ids[n],
                           sizeof(ids[n]),
                           "/data/d%04u/f%010llu.txt",
                           (unsigned)(rng(&seed) % 5000),
                           (unsigned long long)i);
            items[n] =
                (struct sl_delta_recheck){ids[n], SL_DELTA_SEEN_NEW, 0, 0};
        }
        if (sl_delta_recheck_set(
                d, SRC, 0, items, n, at, MIN_MS, MAX_MS, &err) != 0) {
            sl_panic("recheck_set: %s", err.message);
        }
    }
}

/* One due scan at @at; returns the seconds, *found the records. */
static double
scan(struct sl_delta *d, uint64_t at, size_t max, size_t *found)
{
    struct sl_err err;
    size_t n = 0;
    double t0 = now();

    *found = 0;
    if (sl_delta_recheck_due(d, SRC, at, max, count_cb, &n, found, &err) != 0) {
        sl_panic("recheck_due: %s", err.message);
    }
    return now() - t0;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"records", required_argument, NULL, 'n'},
        {"due", required_argument, NULL, 'k'},
        {"runs", required_argument, NULL, 'r'},
        {"dir", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    uint64_t n = 1000000;
    uint64_t k = 100;
    uint64_t runs = 5;
    const char *dir = "/tmp/bench-recheck";
    double due_t[16];
    double all_t[16];
    struct sl_delta *d = NULL;
    struct sl_err err;
    size_t found_due = 0;
    size_t found_all = 0;
    double t0 = 0;
    double fill_s = 0;
    char *cmd = NULL;
    int c = 0;
    uint64_t r = 0;

    while ((c = getopt_long(argc, argv, "n:k:r:d:", opts, NULL)) != -1) {
        if (c == 'n' && sl_parse_u64(optarg, &n) == 0 && n >= BATCH) {
            continue;
        }
        if (c == 'k' && sl_parse_u64(optarg, &k) == 0 && k >= 1) {
            continue;
        }
        if (c == 'r' && sl_parse_u64(optarg, &runs) == 0 && runs >= 1 &&
            runs <= 15) {
            continue;
        }
        if (c == 'd') {
            dir = optarg;
            continue;
        }
        fprintf(stderr,
                "usage: %s [--records N>=1000] [--due K>=1] [--runs 1-15] "
                "[--dir DIR]\n",
                argv[0]);
        return 2;
    }
    if (k > n) {
        k = n;
    }
    cmd = sl_asprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot remove %s\n", dir);
    }
    if (sl_delta_open(dir, 0, SL_DURABILITY_PROCESS, 0, &d, &err) != 0) {
        fprintf(stderr, "open %s: %s\n", dir, err.message);
        return 1;
    }
    t0 = now();
    fill(d, 0, n - k, LATE_MS);
    fill(d, n - k, n, 0);
    fill_s = now() - t0;
    printf("bench-recheck: %llu records with a next check, %llu due, "
           "%u shards, %s\n",
           (unsigned long long)n,
           (unsigned long long)k,
           sl_delta_shards(d),
           dir);
    printf("recheck_set: %.1f s, %.0f records/s\n", fill_s, (double)n / fill_s);
    (void)scan(d, MIN_MS, (size_t)n, &found_due); /* warm-up */
    (void)scan(d, LATE_MS + MIN_MS, (size_t)n, &found_all);
    for (r = 0; r < runs; r++) {
        due_t[r] = scan(d, MIN_MS, (size_t)n, &found_due);
        all_t[r] = scan(d, LATE_MS + MIN_MS, (size_t)n, &found_all);
    }
    qsort(due_t, (size_t)runs, sizeof(double), cmp_double);
    qsort(all_t, (size_t)runs, sizeof(double), cmp_double);
    printf("due scan (%zu found): median %.3f ms (min %.3f, max %.3f)\n",
           found_due,
           due_t[runs / 2] * 1e3,
           due_t[0] * 1e3,
           due_t[runs - 1] * 1e3);
    printf("baseline, every next check read (%zu found): median %.1f ms "
           "(min %.1f, max %.1f)\n",
           found_all,
           all_t[runs / 2] * 1e3,
           all_t[0] * 1e3,
           all_t[runs - 1] * 1e3);
    printf("ratio baseline / due scan: %.0fx; per due record %.2f us\n",
           all_t[runs / 2] / due_t[runs / 2],
           due_t[runs / 2] * 1e6 / (double)(found_due ? found_due : 1));
    printf("peak RSS: %ld KiB\n", sl_peak_rss_kib());
    sl_delta_close(d);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot remove %s\n", dir);
    }
    sl_free(cmd);
    return found_due == k && found_all == n ? 0 : 1;
}
