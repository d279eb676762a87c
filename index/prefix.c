/*
 * Embedded full-text index, prefixes of a search expanded to the words a
 * shard holds: "nedi"* becomes ("nedi" OR "nedif" OR "nedivlu") when at
 * most SL__IX_PREFIX_WORDS words of the shard begin with it; a prefix of
 * more words, one inside a NEAR, or a phrase that ends in a prefix stays
 * as it is.
 *
 * Why: FTS5 (with no prefix index, which would need the table built
 * again and grow the index by about its own size per prefix length)
 * answers a prefix by merging the lists of all its words into one, and
 * does it again for every row a page looks up by rowid for its snippet:
 * a prefix of a word in most documents cost 3 times the word.  An OR of
 * the words is read lazily and looked up by rowid with a seek per word.
 * Ranking: each word of the OR weighs as if it had been typed (a rare one
 * more than a common one), as Xapian's and Recoll's expansions do.
 *
 * The words are read from an fts5vocab table of the instance kind in the
 * connection's temp schema, one seek per word (its first instance; the
 * row kind would count every document of each word).  The prefix is
 * folded by the table's own tokenizer first (Zür* looks for "zur").
 *
 * Threads: on the caller's thread, with the shard's reader held.
 */
#include <string.h>

#include "index/index_int.h"

/* ------------------------------------------------------------------------
 * The prefix folded by the FTS table's tokenizer.
 * --------------------------------------------------------------------- */

struct fold {
    char tok[256];
    int n; /* tokens seen */
    int len;
};

static int
fold_cb(void *arg, int flags, const char *t, int n, int start, int end)
{
    struct fold *f = arg;

    (void)flags;
    (void)start;
    (void)end;
    if (f->n++ == 0 && n > 0 && (size_t)n < sizeof(f->tok)) {
        memcpy(f->tok, t, (size_t)n);
        f->len = n;
    }
    return SQLITE_OK;
}

/* The one token of @s (@n bytes) into @f; 0 when it has exactly one. */
static int
fold(sqlite3 *db, const char *s, size_t n, struct fold *f)
{
    const char *args[] = {SL__IX_TOKENIZER_ARGS};
    fts5_api *api = sl__index_fts5(db);
    fts5_tokenizer tk;
    Fts5Tokenizer *t = NULL;
    void *ud = NULL;
    int rc = 0;

    memset(f, 0, sizeof(*f));
    if (api == NULL || n > 1024 ||
        api->xFindTokenizer(api, SL__IX_TOKENIZER, &ud, &tk) != SQLITE_OK ||
        tk.xCreate(ud, args, (int)(sizeof(args) / sizeof(args[0])), &t) !=
            SQLITE_OK) {
        return -1;
    }
    rc = tk.xTokenize(
        t, f, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, s, (int)n, fold_cb);
    tk.xDelete(t);
    return rc == SQLITE_OK && f->n == 1 && f->len > 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------
 * The words of a prefix.
 * --------------------------------------------------------------------- */

#define VOCAB_SQL                                                              \
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.sl_words USING"                   \
    " fts5vocab(main, documents_fts, instance)"
#define WORD_SQL                                                               \
    "SELECT term FROM temp.sl_words WHERE term >= ?1 AND term < ?2 LIMIT 1"

/* The words beginning with @f's token written to @b as an FTS5 OR; 1 when
 * written, 0 when there are none or more than SL__IX_PREFIX_WORDS. */
static int
words(sqlite3 *db, const struct fold *f, struct sl_buf *b)
{
    char from[sizeof(f->tok) + 256];
    char to[sizeof(f->tok) + 1];
    size_t flen = (size_t)f->len;
    sqlite3_stmt *st = NULL;
    size_t at = b->len;
    int n = 0;

    if (sqlite3_exec(db, VOCAB_SQL, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, WORD_SQL, -1, &st, NULL) != SQLITE_OK) {
        (void)sqlite3_finalize(st);
        return 0;
    }
    memcpy(from, f->tok, flen);
    memcpy(to, f->tok, flen);
    to[flen] = '\xff'; /* above every UTF-8 byte: the end of the prefix */
    (void)sqlite3_bind_text(st, 2, to, (int)flen + 1, SQLITE_STATIC);
    (void)sl_buf_append(b, "(", 1);
    for (;;) {
        const char *w = NULL;
        int wlen = 0;
        int src = 0;

        (void)sqlite3_bind_text(st, 1, from, (int)flen, SQLITE_STATIC);
        if ((src = sqlite3_step(st)) != SQLITE_ROW) {
            /* an error is no end of the list: FTS5's own prefix, not
             * an OR that lacks the words after it */
            n = src == SQLITE_DONE ? n : SL__IX_PREFIX_WORDS + 1;
            break;
        }
        w = (const char *)sqlite3_column_text(st, 0);
        wlen = sqlite3_column_bytes(st, 0);
        if (w == NULL || ++n > SL__IX_PREFIX_WORDS ||
            (size_t)wlen + 1 >= sizeof(from)) {
            n = SL__IX_PREFIX_WORDS + 1;
            break;
        }
        (void)sl_buf_append(b, n > 1 ? " OR \"" : "\"", n > 1 ? 5 : 1);
        (void)sl_buf_append(b, w, (size_t)wlen); /* words hold no '"' */
        (void)sl_buf_append(b, "\"", 1);
        /* the next word is above this one: the word, then \x01, which
         * no token holds */
        memcpy(from, w, (size_t)wlen);
        from[wlen] = '\x01';
        flen = (size_t)wlen + 1;
        (void)sqlite3_reset(st);
    }
    (void)sqlite3_finalize(st);
    (void)sl_buf_append(b, ")", 1);
    if (n == 0 || n > SL__IX_PREFIX_WORDS || b->failed) {
        b->len = at;
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * The expression.
 * --------------------------------------------------------------------- */

size_t
sl__ix_fts_string_end(const char *s, size_t i)
{
    for (i++; s[i] != '\0'; i++) {
        if (s[i] == '"') {
            if (s[i + 1] != '"') {
                return i;
            }
            i++;
        }
    }
    return i;
}

size_t
sl__ix_fts_unquote(const char *s, size_t a, size_t e, char *out)
{
    size_t n = 0;

    for (; a < e; a++) {
        out[n++] = s[a];
        a += s[a] == '"'; /* "" is one quote */
    }
    return n;
}

char *
sl__ix_prefix_expand(struct sl__index *ix, const char *match)
{
    struct sl_buf b;
    size_t copied = 0;
    size_t i = 0;
    int near = 0;
    int done = 0;

    if (match == NULL || strstr(match, "\"*") == NULL) {
        return NULL;
    }
    sl_buf_init(&b, SL__IX_MATCH_MAX);
    for (i = 0; match[i] != '\0'; i++) {
        size_t e = 0;
        struct fold f;
        char text[1024];

        if (match[i] != '"') {
            /* our writer puts NEAR( ... , N) around strings only */
            near = strncmp(match + i, "NEAR(", 5) == 0 ? 1
                   : match[i] == ')'                   ? 0
                                                       : near;
            continue;
        }
        e = sl__ix_fts_string_end(match, i);
        if (match[e] == '\0') {
            break;
        }
        if (!near && match[e + 1] == '*' && e - i - 1 < sizeof(text)) {
            size_t n = sl__ix_fts_unquote(match, i + 1, e, text);
            size_t at = b.len;

            if (fold(ix->rd.db, text, n, &f) == 0) {
                (void)sl_buf_append(&b, match + copied, i - copied);
                if (words(ix->rd.db, &f, &b)) {
                    copied = e + 2;
                    done = 1;
                } else {
                    b.len = at;
                }
            }
        }
        i = e;
    }
    if (!done || b.failed) {
        sl_buf_free(&b);
        return NULL;
    }
    (void)sl_buf_append(&b, match + copied, strlen(match + copied));
    if (b.failed) {
        sl_buf_free(&b);
        return NULL;
    }
    return b.data; /* the buffer's, now the caller's */
}
