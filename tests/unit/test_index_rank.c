/*
 * Unit tests of the ranking function sl_bm25 (index/rank.c) on an
 * in-memory FTS5 table: FTS5's bm25 scores for phrases of one token, and
 * for a phrase of several tokens the sum of its tokens' idf (in its
 * column, with a prefix), with FTS5's count when the query's text is not
 * the search's form or the table is not documents_fts; what is counted
 * (the connection's trace): the column of a NEAR or of a group, nothing
 * for a phrase under NOT; the counts kept until a commit, the
 * connection's or another's; position lists read from bytes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "index/index_int.h" /* sl__index_rank_functions, sl__ix_size_sum */
#include "tmpdir.h"

/* The test table of the ranking tests: 3,000 rows of words of varied
 * frequencies and lengths, a gap of 200 deleted rows and every 5th of
 * another run gone, in @db with sl_bm25. */
static void
rank_table(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int i = 0;

    assert_int_equal(sl__index_rank_functions(db, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE documents_fts USING fts5(title,"
                     " text, path, author)",
                     NULL,
                     NULL,
                     NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO documents_fts(rowid,"
                                        " title, text, path, author) VALUES"
                                        " (?1, ?2, ?3, ?4, NULL)",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    for (i = 1; i <= 3000; i++) {
        char title[64];
        char text[2048];
        int k = 0;

        (void)snprintf(
            title, sizeof(title), "%s t%d", i % 9 == 0 ? "common" : "x", i);
        text[0] = '\0';
        for (k = 0; k < 1 + i % 37; k++) { /* lengths and frequencies vary */
            (void)snprintf(text + strlen(text),
                           sizeof(text) - strlen(text),
                           "%s w%d ",
                           k % 3 == 0 && i % 20 != 0 ? "common word" : "other",
                           (i * 7 + k) % 50);
        }
        if (i % 97 == 0) {
            (void)snprintf(
                text + strlen(text), sizeof(text) - strlen(text), "rare");
        }
        for (k = 0; i % 50 == 0 && k < 150; k++) {
            /* a gap of more than 127 positions: a varint of two bytes in
             * "common"'s position list */
            (void)snprintf(
                text + strlen(text), sizeof(text) - strlen(text), "f ");
        }
        if (i % 50 == 0) {
            (void)snprintf(
                text + strlen(text), sizeof(text) - strlen(text), "common");
        }
        (void)sqlite3_bind_int(st, 1, i);
        (void)sqlite3_bind_text(st, 2, title, -1, SQLITE_TRANSIENT);
        (void)sqlite3_bind_text(st, 3, text, -1, SQLITE_TRANSIENT);
        (void)sqlite3_bind_text(st, 4, i % 2 ? "/a/common" : "/b", -1, NULL);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        (void)sqlite3_reset(st);
    }
    (void)sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    /* gaps: a run of 200 rows and every 5th of another run are gone */
    assert_int_equal(sqlite3_exec(db,
                                  "DELETE FROM documents_fts WHERE rowid"
                                  " BETWEEN 1000 AND 1199 OR (rowid BETWEEN"
                                  " 2000 AND 2500 AND rowid % 5 = 0)",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
}

/* Statement @sql on @db with @query bound to ?1. */
static sqlite3_stmt *
rank_query(sqlite3 *db, const char *sql, const char *query)
{
    sqlite3_stmt *st = NULL;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    (void)sqlite3_bind_text(st, 1, query, -1, NULL);
    return st;
}

/* Step @st to its end and finalize it: with @same, its two columns (FTS5's
 * bm25, sl_bm25) must be equal on every row; fails on no row. */
static void
rank_rows(sqlite3_stmt *st, const char *what, int same)
{
    int n = 0;

    while (sqlite3_step(st) == SQLITE_ROW) {
        double a = sqlite3_column_double(st, 0);
        double b = sqlite3_column_double(st, 1);

        if (same && fabs(a - b) > 1e-12 * fabs(a)) {
            fail_msg("%s: bm25 %.17g, sl_bm25 %.17g", what, a, b);
        }
        n++;
    }
    (void)sqlite3_finalize(st);
    if (n == 0) {
        fail_msg("%s: no row", what);
    }
}

/* sl_bm25 (rank.c) gives FTS5's bm25 scores for phrases of one token: dense
 * and sparse words, OR, NOT, NEAR, many phrases and column filters, rows
 * read in rowid order (gaps of deleted rows wider than its step limit) and
 * in reverse; and for a query whose text is not the search's form (no
 * quoted strings: FTS5's count of a phrase of several tokens). */
static void
test_index_rank_bm25(void **state)
{
    static const char *const queries[] = {
        "common",
        "\"rare\"",
        "common rare",
        "(\"common\" OR \"rare\")",
        "title : \"common\"",
        "common word + w1", /* several tokens, not in the search's form */
        "(\"common\" NOT \"rare\")",
        "w1*",
        /* phrases counted one by one, and by instances (over 72) */
        "common OR word OR rare OR w1",
        "common OR word OR rare OR w1 OR w2 OR other",
        "w0 OR w1 OR w2 OR w3 OR w4 OR w5 OR w6 OR w7 OR w8 OR w9 OR w10 OR"
        " w11 OR w12 OR w13 OR w14 OR w15 OR w16 OR w17 OR w18 OR w19 OR w20"
        " OR w21 OR w22 OR w23 OR w24 OR w25 OR w26 OR w27 OR w28 OR w29 OR"
        " w30 OR w31 OR w32 OR w33 OR w34 OR w35 OR w36 OR w37 OR w38 OR w39"
        " OR w40 OR w41 OR w42 OR w43 OR w44 OR w45 OR w46 OR w47 OR w48 OR"
        " w49 OR t1 OR t2 OR t3 OR t4 OR t5 OR t6 OR t7 OR t8 OR t9 OR t10 OR"
        " t11 OR t12 OR t13 OR t14 OR t15 OR t16 OR t17 OR t18 OR t19 OR t20"
        " OR t21 OR t22 OR t23 OR t24 OR t25 OR t26 OR t27 OR t28 OR t29 OR"
        " common OR word",
        "(w1 OR w2 OR w3 OR w4 OR w5 OR w6) AND common",
        "NEAR(\"common\" \"w3\", 2)",
        "NEAR(common w3, 2) OR w1 OR w2 OR w4 OR w5",
    };
    static const char *const orders[] = {"rowid", "rowid DESC"};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char sql[512];
    size_t q = 0;
    size_t o = 0;

    (void)state;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    rank_table(db);
    /* another FTS table: its rows have other lengths than the ones of
     * documents_fts_docsize, which sl_bm25 must not take */
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE other USING fts5(title, text, path,"
                     " author);"
                     "INSERT INTO other(rowid, title, text)"
                     " SELECT rowid, title, text || ' common padding words'"
                     " FROM documents_fts;",
                     NULL,
                     NULL,
                     NULL),
        SQLITE_OK);
    /* a phrase of two tokens on another table: FTS5's count */
    st = rank_query(db,
                    "SELECT bm25(other, 5.0, 1.0), sl_bm25(other, ?1, 5.0,"
                    " 1.0) FROM other WHERE other MATCH ?1",
                    "\"padding words\"");
    rank_rows(st, "other", 1);
    for (q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        for (o = 0; o < 2; o++) {
            (void)snprintf(sql,
                           sizeof(sql),
                           "SELECT bm25(documents_fts, 5.0, 1.0, 2.0, 2.0),"
                           " sl_bm25(documents_fts, ?1, 5.0, 1.0, 2.0, 2.0)"
                           " FROM documents_fts WHERE documents_fts MATCH ?1"
                           " ORDER BY %s",
                           orders[o]);
            rank_rows(rank_query(db, sql, queries[q]), queries[q], 1);
        }
    }
    (void)sqlite3_close(db);
}

/* A %_docsize blob's varints add up; one cut off or too long is -1. */
static void
test_index_rank_size_sum(void **state)
{
    static const struct {
        unsigned char b[12];
        int n;
        sqlite3_int64 want; /* -1: does not parse */
    } cases[] = {
        {{0x03, 0x05, 0x00}, 3, 8},                        /* three columns */
        {{0x81, 0x00, 0x01}, 3, 129},                      /* 128 in 2 bytes */
        {{0x8f, 0xff, 0xff, 0xff, 0x7f}, 5, 4294967295LL}, /* 2^32 - 1 */
        {{0x8f, 0xff, 0xff, 0xff, 0x7f, 0x8f, 0xff, 0xff, 0xff, 0x7f},
         10,
         8589934590LL},        /* the total past 32 bits */
        {{0x03, 0x81}, 2, -1}, /* cut off */
        {{0x81, 0x81, 0x81, 0x81, 0x81, 0x01}, 6, -1}, /* 6 bytes */
    };
    size_t c = 0;
    sqlite3_int64 n = -7;

    (void)state;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        int rc = sl__ix_size_sum(cases[c].b, cases[c].n, &n);

        if (cases[c].want < 0 ? rc != -1 : rc != 0 || n != cases[c].want) {
            fail_msg("case %zu: rc %d, n %lld, want %lld",
                     c,
                     rc,
                     (long long)n,
                     (long long)cases[c].want);
        }
    }
    /* an empty blob (SQLite gives NULL for it): no tokens */
    n = -7;
    assert_int_equal(sl__ix_size_sum(NULL, 0, &n), 0);
    assert_true(n == 0);
}

/* sl__ix_poslist_freq on position lists written by hand: a position
 * after the first instance counts its column's weight, a 1 switches the
 * column (a number of one or two bytes), a position of two bytes is one
 * instance, a column from the weights on weighs 1; a varint cut off by
 * the end is -1. */
static void
test_index_rank_poslist(void **state)
{
    static const double w[] = {5.0, 1.0, 2.0};
    static const struct {
        unsigned char b[8];
        int n;
        int ic;
        double want; /* -1: does not parse */
    } cases[] = {
        {{0}, 0, 1, 1.0},                      /* the first alone */
        {{0x05, 0x02}, 2, 0, 15.0},            /* 3 in title */
        {{0x01, 0x01, 0x03}, 3, 0, 6.0},       /* title, then text */
        {{0x01, 0x02, 0x02, 0x04}, 4, 1, 5.0}, /* text, then path x2 */
        {{0x81, 0x10, 0x03}, 3, 1, 3.0},       /* a delta of 2 bytes */
        {{0x01, 0x07, 0x02}, 3, 2, 3.0},       /* column 7: weight 1 */
        {{0x01, 0x81, 0x00, 0x02}, 4, 0, 6.0}, /* column 128 */
        {{0x02, 0x81}, 2, 1, -1.0},            /* a position cut off */
        {{0x01}, 1, 1, -1.0},                  /* a column missing */
        {{0x01, 0x80}, 2, 1, -1.0},            /* a column cut off */
        {{0x01, 0x81, 0x81, 0x81, 0x81, 0x81}, 6, 0, -1.0}, /* 6 bytes */
        {{0x02}, 1, -1, 2.0}, /* no column known: weight 1 */
    };
    static const unsigned char nw0[] = {0x02, 0x01, 0x03, 0x04};
    size_t c = 0;
    double g = -7.0;

    (void)state;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double f = -7.0;
        int rc = sl__ix_poslist_freq(
            w, 3, cases[c].b, cases[c].b + cases[c].n, cases[c].ic, &f);

        if (cases[c].want < 0.0 ? rc != -1 : rc != 0 || f != cases[c].want) {
            fail_msg(
                "case %zu: rc %d, freq %g, want %g", c, rc, f, cases[c].want);
        }
    }
    /* no weights at all: every instance weighs 1 */
    assert_int_equal(
        sl__ix_poslist_freq(NULL, 0, nw0, nw0 + sizeof(nw0), 0, &g), 0);
    assert_true(g == 3.0);
}

/* The rows of @db that FTS5 query @m matches. */
static sqlite3_int64
rank_count(sqlite3 *db, const char *m)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 n = -1;

    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*) FROM documents_fts"
                                        " WHERE documents_fts MATCH ?1",
                                        -1,
                                        &st,
                                        NULL),
                     SQLITE_OK);
    (void)sqlite3_bind_text(st, 1, m, -1, NULL);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    n = sqlite3_column_int64(st, 0);
    (void)sqlite3_finalize(st);
    return n;
}

/* A phrase of a ranking case: the phrase alone as FTS5 query, and the
 * FTS5 queries of its tokens. */
struct rank_phrase {
    const char *alone;
    const char *tokens[3];
};

/*
 * A phrase of several tokens in the search's form (quoted strings) has the
 * sum of its tokens' idf, each token counted in the phrase's column and as
 * a prefix when the phrase ends in one: for a row, each positive phrase
 * adds FTS5's bm25 of the phrase alone (its own idf) times the sum of its
 * tokens' idf over its own; a NOT phrase adds nothing.
 */
static void
test_index_rank_phrase(void **state)
{
    static const struct {
        const char *query;
        struct rank_phrase p[2];
    } cases[] = {
        {"\"common word\"", {{"\"common word\"", {"\"common\"", "\"word\""}}}},
        {"(\"common word\" AND \"rare\")",
         {{"\"common word\"", {"\"common\"", "\"word\""}},
          {"\"rare\"", {"\"rare\""}}}},
        {"(\"common word\" NOT \"rare\")",
         {{"\"common word\"", {"\"common\"", "\"word\""}}}},
        {"title : \"common t9\"",
         {{"title : \"common t9\"", {"title : \"common\"", "title : \"t9\""}}}},
        {"\"word w1\"", {{"\"word w1\"", {"\"word\"", "\"w1\""}}}},
        {"\"common wo\"*", {{"\"common wo\"*", {"\"common\"", "\"wo\"*"}}}},
        {"(\"w1 common\" OR \"other w2\")",
         {{"\"w1 common\"", {"\"w1\"", "\"common\""}},
          {"\"other w2\"", {"\"other\"", "\"w2\""}}}},
    };
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    sqlite3_stmt *one = NULL;
    sqlite3_int64 nrow = 0;
    size_t c = 0;

    (void)state;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    rank_table(db);
    nrow = rank_count(db, "common OR other OR x OR rare");
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT bm25(documents_fts, 5.0, 1.0,"
                                        " 2.0, 2.0) FROM documents_fts WHERE"
                                        " documents_fts MATCH ?1 AND rowid ="
                                        " ?2",
                                        -1,
                                        &one,
                                        NULL),
                     SQLITE_OK);
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double ratio[2] = {0.0, 0.0};
        int n = 0;
        int p = 0;

        for (p = 0; p < 2 && cases[c].p[p].alone != NULL; p++) {
            const struct rank_phrase *ph = &cases[c].p[p];
            double sum = 0.0;
            int t = 0;

            for (t = 0; t < 3 && ph->tokens[t] != NULL; t++) {
                sum += sl__index_idf(nrow, rank_count(db, ph->tokens[t]));
            }
            ratio[p] = sum / sl__index_idf(nrow, rank_count(db, ph->alone));
        }
        st = rank_query(db,
                        "SELECT rowid, sl_bm25(documents_fts, ?1, 5.0, 1.0,"
                        " 2.0, 2.0) FROM documents_fts WHERE documents_fts"
                        " MATCH ?1",
                        cases[c].query);
        while (sqlite3_step(st) == SQLITE_ROW) {
            double want = 0.0;
            double got = sqlite3_column_double(st, 1);

            for (p = 0; p < 2 && cases[c].p[p].alone != NULL; p++) {
                (void)sqlite3_reset(one);
                (void)sqlite3_bind_text(one, 1, cases[c].p[p].alone, -1, NULL);
                (void)sqlite3_bind_int64(one, 2, sqlite3_column_int64(st, 0));
                if (sqlite3_step(one) == SQLITE_ROW) { /* an OR's branch */
                    want += sqlite3_column_double(one, 0) * ratio[p];
                }
            }
            if (fabs(want - got) > 1e-9 * fabs(want) || got >= 0.0) {
                fail_msg("%s: row %lld: want %.17g, sl_bm25 %.17g",
                         cases[c].query,
                         (long long)sqlite3_column_int64(st, 0),
                         want,
                         got);
            }
            n++;
        }
        (void)sqlite3_finalize(st);
        if (n == 0) {
            fail_msg("%s: no row", cases[c].query);
        }
        /* the phrase's own count would give other scores */
        assert_true(fabs(ratio[0] - 1.0) > 1e-3);
    }
    (void)sqlite3_finalize(one);
    (void)sqlite3_close(db);
}

/* The counts sl_bm25 ran (the trace of the connection): their MATCH
 * strings, each followed by '|'. */
struct traced {
    char m[2048];
};

static int
trace_cb(unsigned type, void *arg, void *p, void *x)
{
    static const char pre[] =
        "SELECT count(*) FROM main.documents_fts WHERE documents_fts MATCH '";
    struct traced *t = arg;
    const char *sql = sqlite3_sql(p);
    size_t n = 0;

    (void)x;
    if (type != SQLITE_TRACE_STMT || sql == NULL ||
        strncmp(sql, pre, sizeof(pre) - 1) != 0) {
        return 0;
    }
    sql += sizeof(pre) - 1;
    n = strlen(sql);
    /* the value as SQL writes it: quotes doubled */
    (void)snprintf(t->m + strlen(t->m),
                   sizeof(t->m) - strlen(t->m),
                   "%.*s|",
                   (int)(n > 0 ? n - 1 : 0),
                   sql);
    return 0;
}

/* Run query @m on @db with FTS5's bm25 and sl_bm25 side by side, tracing
 * the counts into @t: they must be @counts (NULL: any); with @same the
 * scores must be FTS5's. */
static void
rank_traced(
    sqlite3 *db, const char *m, const char *counts, int same, struct traced *t)
{
    sqlite3_stmt *st = NULL;

    t->m[0] = '\0';
    assert_int_equal(sqlite3_trace_v2(db, SQLITE_TRACE_STMT, trace_cb, t),
                     SQLITE_OK);
    st = rank_query(db,
                    "SELECT bm25(documents_fts, 5.0, 1.0, 2.0, 2.0),"
                    " sl_bm25(documents_fts, ?1, 5.0, 1.0, 2.0, 2.0)"
                    " FROM documents_fts WHERE documents_fts MATCH ?1",
                    m);
    rank_rows(st, m, same);
    (void)sqlite3_trace_v2(db, 0, NULL, NULL);
    if (counts != NULL && strcmp(t->m, counts) != 0) {
        fail_msg("%s: counted '%s', want '%s'", m, t->m, counts);
    }
}

/* What sl_bm25 counts for a phrase: each of its tokens once (a phrase of
 * one token too, with FTS5's scores), in the column written before the
 * phrase or before its group (a NEAR, a prefix's words), when a row first
 * holds the phrase; nothing for a phrase no match holds (under NOT), and
 * nothing when the text has more strings than FTS5 has phrases (FTS5's
 * count and scores then). */
static void
test_index_rank_counts(void **state)
{
    static const struct {
        const char *query;
        const char *counts;
        int same; /* FTS5's scores: phrases of one token, or none counted */
    } cases[] = {
        {"text : NEAR(\"common word\" \"w3\", 2)",
         "text : \"common\"|text : \"word\"|text : \"w3\"|",
         0},
        /* counted when a row first holds it: row 1's title is "x t1" */
        {"(title : (\"common\" OR \"x\") AND \"common word\")",
         "title : \"x\"|\"common\"|\"word\"|title : \"common\"|",
         0},
        {"text : (\"common word\" OR \"zzz\")",
         "text : \"common\"|text : \"word\"|",
         0},
        {"(\"w1\" NOT \"common word\")", "\"w1\"|", 1},
        {"NEAR(\"--\" \"common word\", 5)", "", 1},
        {"\"common word\"*", "\"common\"|\"word\"*|", 0},
        {"title : \"common\" \"w3\"*", "title : \"common\"|\"w3\"*|", 1},
    };
    struct traced t;
    sqlite3 *db = NULL;
    size_t c = 0;

    (void)state;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        /* a database each: no count kept from another case */
        assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
        rank_table(db);
        rank_traced(db, cases[c].query, cases[c].counts, cases[c].same, &t);
        (void)sqlite3_close(db);
    }
}

/* The counts kept (rank.c's struct df_cache): a query run again counts
 * nothing; a commit of another connection or of the connection itself
 * makes it count again, with the scores of the new counts; a query in a
 * write transaction keeps none; a full set of counts starts again. */
static void
test_index_rank_kept(void **state)
{
    static const char q[] = "\"common\" \"w3\"";
    static const char counted[] = "\"common\"|\"w3\"|";
    static const struct {
        const char *col, *star;
    } forms[] = {{"", ""}, {"text : ", ""}, {"", "*"}, {"text : ", "*"}};
    char tmpl[256];
    char path[300];
    char many[2048];
    const char *dir = tmpdir_make(tmpl, sizeof(tmpl), "rank.");
    struct traced t;
    sqlite3 *w = NULL;
    sqlite3 *r = NULL;
    size_t f = 0;
    int i = 0;

    (void)state;
    assert_non_null(dir);
    (void)snprintf(path, sizeof(path), "%s/rank.db", dir);
    assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(w, "PRAGMA journal_mode=WAL", NULL, NULL, NULL),
        SQLITE_OK);
    rank_table(w);
    assert_int_equal(sqlite3_open(path, &r), SQLITE_OK);
    assert_int_equal(sl__index_rank_functions(r, NULL), SQLITE_OK);

    rank_traced(r, q, counted, 1, &t);
    rank_traced(r, q, "", 1, &t); /* kept */
    /* another connection's commit */
    assert_int_equal(sqlite3_exec(w,
                                  "INSERT INTO documents_fts(rowid, text)"
                                  " VALUES (5001, 'common w3 common')",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
    rank_traced(r, q, counted, 1, &t);
    rank_traced(r, q, "", 1, &t);
    /* the connection's own commit */
    rank_traced(w, q, counted, 1, &t);
    assert_int_equal(sqlite3_exec(w,
                                  "DELETE FROM documents_fts WHERE rowid ="
                                  " 5001",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
    rank_traced(w, q, counted, 1, &t);
    /* a write transaction: its rows are not in a version yet */
    assert_int_equal(sqlite3_exec(w,
                                  "BEGIN; INSERT INTO documents_fts(rowid,"
                                  " text) VALUES (5002, 'w3 w3')",
                                  NULL,
                                  NULL,
                                  NULL),
                     SQLITE_OK);
    rank_traced(w, q, counted, 1, &t);
    rank_traced(w, q, counted, 1, &t);
    assert_int_equal(sqlite3_exec(w, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    /* 200 counts: the set is full at 192 and starts again */
    rank_traced(r, q, counted, 1, &t);
    for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        many[0] = '\0';
        for (i = 0; i < 50; i++) {
            (void)snprintf(many + strlen(many),
                           sizeof(many) - strlen(many),
                           "%s%s\"w%d\"%s",
                           i > 0 ? " OR " : "",
                           forms[f].col,
                           i,
                           forms[f].star);
        }
        rank_traced(r, many, NULL, 1, &t);
    }
    rank_traced(r, q, counted, 1, &t);
    (void)sqlite3_close(r);
    (void)sqlite3_close(w);
    assert_int_equal(tmpdir_remove(dir), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_rank_size_sum),
        cmocka_unit_test(test_index_rank_poslist),
        cmocka_unit_test(test_index_rank_bm25),
        cmocka_unit_test(test_index_rank_phrase),
        cmocka_unit_test(test_index_rank_counts),
        cmocka_unit_test(test_index_rank_kept),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
