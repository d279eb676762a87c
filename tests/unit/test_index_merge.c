/*
 * Unit tests of merging when idle (index/merge.c, docs/index.md
 * "Segments"): many small transactions leave many FTS segments; once the
 * index is idle the merger takes them down, searches find the same, and
 * the merge waits while writes go on.  Without sl_index_set_idle_merge
 * nothing merges.  A drop and a close while a merge is due or running end
 * promptly (run under ASan: no connection is used after it is closed).
 * Each test works in its own temporary directory under $TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index/index.h"
#include "index_fixture.h"

#define IDLE_MS 150
#define TXNS    15 /* transactions written: 15 segments (automerge 16) */

static int
setup(void **state)
{
    struct fixture *f = NULL;

    (void)index_setup(state, "test_index_merge.");
    f = *state;
    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    return 0;
}

/* Transaction @t: 10 documents with words of their own and "common". */
static void
write_txn(struct sl_index_set *set, int t)
{
    struct sl_index_op ops[10];
    char id[32];
    char text[128];
    int i = 0;

    memset(ops, 0, sizeof(ops));
    for (i = 0; i < 10; i++) {
        (void)snprintf(id, sizeof(id), "doc-%d-%d", t, i);
        (void)snprintf(
            text, sizeof(text), "common w%dx%d batch%d words", t, i, t);
        ops[i].doc = json_pack("{s:s, s:s}", "_recordid", id, "text", text);
    }
    assert_int_equal(sl_index_apply(set, "m", ops, 10, NULL), 0);
    for (i = 0; i < 10; i++) {
        json_decref((json_t *)ops[i].doc);
    }
}

static uint64_t
segments(struct sl_index_set *set, int *merging)
{
    struct sl_index_stats st;

    assert_int_equal(sl_index_stats(set, "m", &st, NULL), 0);
    if (merging != NULL) {
        *merging = st.merging;
    }
    return st.segments;
}

/* Wait (at most 20 s) until no merge is due; the milliseconds waited. */
static int64_t
settle(struct sl_index_set *set)
{
    int64_t t0 = sl_mono_ms();
    int merging = 1;

    while (sl_mono_ms() - t0 < 20000) {
        (void)segments(set, &merging);
        if (!merging) {
            return sl_mono_ms() - t0;
        }
        sl_sleep_ms(20);
    }
    fail_msg("still merging after 20 s");
    return -1;
}

/* A transaction writes one segment, of new documents as of changed and
 * deleted ones (a statement savepoint inside it, as a trigger on `docs`
 * or an INSERT ... SELECT opens, would make FTS5 write a segment per
 * document). */
static void
test_one_segment_per_transaction(void **state)
{
    struct fixture *f = *state;

    struct sl_index_op ops[3];

    write_txn(f->set, 0);
    assert_int_equal(segments(f->set, NULL), 1);
    write_txn(f->set, 1);
    assert_int_equal(segments(f->set, NULL), 2);
    write_txn(f->set, 1); /* the same documents: nothing changes */
    assert_int_equal(segments(f->set, NULL), 2);
    /* changed documents, and deletes, take their terms out first */
    memset(ops, 0, sizeof(ops));
    ops[0].id = "doc-0-1";
    ops[1].doc = json_pack(
        "{s:s, s:s}", "_recordid", "doc-0-2", "text", "common changed");
    ops[2].id = "doc-1-2";
    assert_int_equal(sl_index_apply(f->set, "m", ops, 3, NULL), 0);
    json_decref((json_t *)ops[1].doc);
    assert_int_equal(segments(f->set, NULL), 3);
    assert_int_equal(total(f->set, "m", "common"), 18);
    assert_int_equal(total(f->set, "m", "changed"), 1);
    assert_int_equal(total(f->set, "m", "w0x2"), 0);
}

/* Without an idle merge the segments stay; with one they go down to a
 * few, and every document is found as before. */
static void
test_merges_when_idle(void **state)
{
    struct fixture *f = *state;
    uint64_t before = 0;
    uint64_t after = 0;
    int merging = 0;
    int t = 0;

    for (t = 0; t < TXNS; t++) {
        write_txn(f->set, t);
    }
    before = segments(f->set, &merging);
    assert_false(merging); /* never set: no merge */
    sl_sleep_ms(2 * IDLE_MS);
    assert_int_equal(segments(f->set, NULL), before);
    assert_int_equal(before, TXNS); /* a segment each, none merged */
    assert_int_equal(total(f->set, "m", "common"), TXNS * 10);

    assert_int_equal(sl_index_set_idle_merge(f->set, IDLE_MS), 0);
    write_txn(f->set, TXNS); /* due after this write */
    (void)segments(f->set, &merging);
    assert_true(merging);
    (void)settle(f->set);
    after = segments(f->set, NULL);
    assert_true(after < before / 2);
    assert_true(after <= 4);
    assert_int_equal(total(f->set, "m", "common"), (TXNS + 1) * 10);
    assert_int_equal(total(f->set, "m", "w7x3"), 1);
    assert_int_equal(total(f->set, "m", "batch12"), 10);
    assert_int_equal(total(f->set, "m", "batch*"), (TXNS + 1) * 10);
}

/* While writes keep coming (more often than the idle time) no merge
 * runs: merging stays due and the segments only grow. */
static void
test_waits_for_writes(void **state)
{
    struct fixture *f = *state;
    uint64_t seg = 0;
    int merging = 0;
    int t = 0;

    assert_int_equal(sl_index_set_idle_merge(f->set, 400), 0);
    for (t = 0; t < TXNS; t++) {
        write_txn(f->set, t);
        if (t % 4 == 0) {
            sl_sleep_ms(100); /* pauses shorter than the idle time */
        }
        (void)segments(f->set, &merging);
        assert_true(merging);
    }
    seg = segments(f->set, NULL);
    assert_int_equal(seg, TXNS); /* nothing was merged in between */
    assert_true(settle(f->set) >= 200);
    assert_true(segments(f->set, NULL) < seg);
    assert_int_equal(total(f->set, "m", "common"), TXNS * 10);
}

/* A drop while a merge is due, or running, ends promptly and leaves no
 * file; a close with a merge due joins the merger. */
static void
test_drop_and_close(void **state)
{
    struct fixture *f = *state;
    int64_t t0 = 0;
    int t = 0;

    assert_int_equal(sl_index_set_idle_merge(f->set, 1), 0);
    for (t = 0; t < TXNS; t++) {
        write_txn(f->set, t);
    }
    sl_sleep_ms(5); /* the merger has started */
    t0 = sl_mono_ms();
    assert_int_equal(sl_index_drop(f->set, "m", NULL), 0);
    assert_true(sl_mono_ms() - t0 < 5000);
    assert_int_equal(sl_index_count(f->set, "m", &(uint64_t){0}, NULL),
                     SL_ENOENT);
    for (t = 0; t < TXNS; t++) { /* created again, merging again */
        write_txn(f->set, t);
    }
    t0 = sl_mono_ms();
    sl_index_close(f->set);
    f->set = NULL;
    assert_true(sl_mono_ms() - t0 < 5000);
    assert_int_equal(sl_index_open(f->dir, &f->set, NULL), 0);
    assert_int_equal(count(f->set, "m"), TXNS * 10);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_one_segment_per_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merges_when_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waits_for_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_and_close, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
