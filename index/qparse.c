/*
 * The query language of search (docs/index.md "Query language"): what a
 * user types, read into a tree and written as an FTS5 MATCH expression
 * (the words, ranked by bm25) and an SQL condition over `docs_cols d` (the
 * field filters, and words that a MATCH cannot hold, such as those
 * under an OR with a filter).
 *
 * Reading is forgiving: a word is searched as the tokens the index holds
 * for it (a quoted FTS5 string, so "stdio.h" and "C++" are words, never
 * syntax), unbalanced quotes and parentheses are closed at the end or
 * ignored, an operator without an operand is read as a word or dropped.
 * Only a field that does not exist, or a field value that cannot be read
 * (a date, a size), is an error, with its position.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "index/index_int.h"

#include "index/qparse_int.h"

#define MAX_NODES 256
#define MAX_DEPTH 8

/* ------------------------------------------------------------------------
 * Nodes.
 * --------------------------------------------------------------------- */

static void
qnode_free(struct qnode *n)
{
    while (n != NULL) {
        struct qnode *next = n->next;
        size_t i = 0;

        qnode_free(n->kids);
        sl_free(n->text);
        for (i = 0; i < n->nparams; i++) {
            sl_free(n->params[i]);
        }
        sl_free(n);
        n = next;
    }
}

struct qnode *
sl__qp_node(struct qp *qp, enum qkind kind)
{
    struct qnode *n = NULL;

    if (++qp->nodes > MAX_NODES && !qp->failed) {
        qp->failed = 1;
        (void)sl_err_set(qp->err,
                         SL_EINVAL,
                         "q",
                         "the query has more than %d words and operators",
                         MAX_NODES);
    }
    n = sl_calloc(1, sizeof(*n));
    n->kind = kind;
    return n;
}

/* @kid under a new node of @kind. */
static struct qnode *
qnode_wrap(struct qp *qp, enum qkind kind, struct qnode *kid)
{
    struct qnode *n = sl__qp_node(qp, kind);

    n->kids = kid;
    return n;
}

static void
qnode_append(struct qnode *parent, struct qnode *kid)
{
    struct qnode **p = &parent->kids;

    while (*p != NULL) {
        p = &(*p)->next;
    }
    *p = kid;
}

/* Bytes the unicode61 tokenizer keeps in a token: letters and digits, and
 * every byte of a multi-byte character (close enough: a word of
 * punctuation alone is what must be told apart). */
static int
token_byte(unsigned char c)
{
    return isalnum(c) || c >= 0x80;
}

static int
has_token(const char *s, size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (token_byte((unsigned char)s[i])) {
            return 1;
        }
    }
    return 0;
}

/* A TEXT node for the @n bytes at @s, or NULL when they hold no token. */
static struct qnode *
text_node(struct qp *qp, const char *s, size_t n, int prefix)
{
    struct qnode *t = NULL;

    if (!has_token(s, n)) {
        return NULL;
    }
    t = sl__qp_node(qp, Q_TEXT);
    t->text = sl_strndup(s, n);
    t->col = qp->col;
    t->prefix = prefix;
    return t;
}

int
sl__qp_fail(struct qp *qp, size_t at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    if (!qp->failed) {
        qp->failed = 1;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        (void)sl_err_set(
            qp->err, SL_EINVAL, "q", "%s at position %zu", msg, at + 1);
    }
    return -1;
}

/* ------------------------------------------------------------------------
 * Reading.
 * --------------------------------------------------------------------- */

static struct qnode *parse_or(struct qp *qp);
static struct qnode *parse_unary(struct qp *qp);

static void
skip_space(struct qp *qp)
{
    while (qp->pos < qp->len && isspace((unsigned char)qp->s[qp->pos])) {
        qp->pos++;
    }
}

/* The distance of NEAR: up to 4 digits at @s, 10 without any. */
static int
near_dist(const char *s)
{
    int d = 0;
    int i = 0;

    for (i = 0; i < 4 && isdigit((unsigned char)s[i]); i++) {
        d = d * 10 + (s[i] - '0');
    }
    return i > 0 ? d : 10;
}

/* Where the bare token at @pos ends: at a space, a quote or a
 * parenthesis. */
static size_t
token_end(const struct qp *qp, size_t pos)
{
    while (pos < qp->len && !isspace((unsigned char)qp->s[pos]) &&
           strchr("\"()", qp->s[pos]) == NULL) {
        pos++;
    }
    return pos;
}

enum op { OP_NONE, OP_AND, OP_OR, OP_NOT, OP_NEAR };

/* The operator word at the position (upper case only), its length in
 * *n and, for NEAR/k, the distance in *dist. */
static enum op
peek_op(const struct qp *qp, size_t *n, int *dist)
{
    size_t e = token_end(qp, qp->pos);
    const char *s = qp->s + qp->pos;
    size_t len = e - qp->pos;

    *n = len;
    *dist = 10;
    if (e < qp->len && qp->s[e] == '(') {
        return OP_NONE; /* NEAR(...) */
    }
    if (len == 3 && memcmp(s, "AND", 3) == 0) {
        return OP_AND;
    }
    if (len == 2 && memcmp(s, "OR", 2) == 0) {
        return OP_OR;
    }
    if (len == 3 && memcmp(s, "NOT", 3) == 0) {
        return OP_NOT;
    }
    if (len >= 4 && memcmp(s, "NEAR", 4) == 0 &&
        (len == 4 || (s[4] == '/' && len > 5 &&
                      strspn(s + 5, "0123456789") == len - 5 && len < 9))) {
        *dist = len > 5 ? near_dist(s + 5) : 10;
        return OP_NEAR;
    }
    return OP_NONE;
}

/* A quoted phrase from the position (at '"'), to its end quote or the
 * end of the query; a '*' just after is a prefix. */
static struct qnode *
parse_phrase(struct qp *qp)
{
    size_t start = ++qp->pos;
    const char *q = memchr(qp->s + start, '"', qp->len - start);
    size_t end = q != NULL ? (size_t)(q - qp->s) : qp->len;
    int prefix = 0;

    qp->pos = q != NULL ? end + 1 : end;
    if (qp->pos < qp->len && qp->s[qp->pos] == '*') {
        prefix = 1;
        qp->pos++;
    }
    return text_node(qp, qp->s + start, end - start, prefix);
}

/* The value of a filter field: a quoted string or a bare token. */
static char *
filter_value(struct qp *qp)
{
    size_t start = qp->pos;
    size_t end = 0;

    if (qp->pos < qp->len && qp->s[qp->pos] == '"') {
        const char *q = memchr(qp->s + start + 1, '"', qp->len - start - 1);

        end = q != NULL ? (size_t)(q - qp->s) : qp->len;
        qp->pos = q != NULL ? end + 1 : end;
        return sl_strndup(qp->s + start + 1, end - start - 1);
    }
    end = token_end(qp, start);
    qp->pos = end;
    return sl_strndup(qp->s + start, end - start);
}

/* name:value at the position, the name known (index @fi) and ending at
 * @colon. */
static struct qnode *
parse_field(struct qp *qp, int fi, size_t colon)
{
    size_t at = qp->pos;
    struct qnode *n = NULL;
    const char *saved = qp->col;
    char *v = NULL;

    qp->pos = colon + 1;
    if (sl__qfields[fi].col != NULL) { /* words in one column */
        qp->col = sl__qfields[fi].col;
        n = parse_unary(qp);
        qp->col = saved;
        return n;
    }
    v = filter_value(qp);
    if (v[0] == '\0') {
        sl_free(v);
        (void)sl__qp_fail(
            qp, at, "field '%s' has no value", sl__qfields[fi].name);
        return NULL;
    }
    n = sl__qfield_filter(qp, sl__qfields[fi].name, v, at);
    sl_free(v);
    return n;
}

/* NEAR(a b c, k): the form FTS5 itself knows. */
static struct qnode *
parse_near_call(struct qp *qp)
{
    struct qnode *near = sl__qp_node(qp, Q_NEAR);

    near->col = qp->col;
    near->dist = 10;
    qp->pos += 5; /* NEAR( */
    for (;;) {
        struct qnode *t = NULL;
        size_t e = 0;

        skip_space(qp);
        if (qp->pos >= qp->len || qp->s[qp->pos] == ')') {
            qp->pos += qp->pos < qp->len;
            break;
        }
        if (qp->s[qp->pos] == ',') {
            qp->pos++;
            skip_space(qp);
            near->dist = near_dist(qp->s + qp->pos);
            qp->pos += strspn(qp->s + qp->pos, "0123456789");
            continue;
        }
        if (qp->s[qp->pos] == '"') {
            t = parse_phrase(qp);
        } else {
            e = token_end(qp, qp->pos);
            while (e > qp->pos && qp->s[e - 1] == ',') {
                e--; /* "a b," before the distance */
            }
            e = e == qp->pos ? qp->pos + 1 : e;
            t = text_node(qp, qp->s + qp->pos, e - qp->pos, 0);
            qp->pos = e;
        }
        if (t != NULL) {
            qnode_append(near, t);
        }
    }
    if (near->kids != NULL && near->kids->next == NULL) {
        struct qnode *one = near->kids; /* NEAR of one word: the word */

        near->kids = NULL;
        qnode_free(near);
        return one;
    }
    if (near->kids == NULL) {
        qnode_free(near);
        return NULL;
    }
    return near;
}

/* A bare token: a field, a word, a word* prefix. */
static struct qnode *
parse_word(struct qp *qp)
{
    size_t start = qp->pos;
    size_t end = token_end(qp, start);
    const char *s = qp->s + start;
    size_t n = end - start;
    size_t name = 0;
    int prefix = 0;

    while (name < n && isalpha((unsigned char)s[name])) {
        name++;
    }
    if (name > 0 && name < n && s[name] == ':') {
        /* name:value, name:"..." or name:(...); not http://... nor
         * std::string, and "note:" alone is a word */
        int value = name + 1 < n ||
                    (end < qp->len && strchr("\"(", qp->s[end]) != NULL);

        int fi = sl__qfield_find(s, name);
        char what[64];
        char names[256];
        size_t i = 0;

        if (value && fi >= 0) {
            return parse_field(qp, fi, start + name);
        }
        if (value && (name + 1 == n || strchr("/:", s[name + 1]) == NULL)) {
            (void)snprintf(what, sizeof(what), "%.*s", (int)name, s);
            names[0] = '\0';
            for (i = 0; sl__qfields[i].name != NULL; i++) {
                size_t at = strlen(names);

                (void)snprintf(names + at,
                               sizeof(names) - at,
                               "%s%s",
                               i > 0 ? ", " : "",
                               sl__qfields[i].name);
            }
            (void)sl__qp_fail(qp,
                              start,
                              "unknown field '%s' (the fields are %s)",
                              what,
                              names);
            return NULL;
        }
    }
    qp->pos = end;
    while (n > 0 && s[n - 1] == '*') {
        n--;
        prefix = 1;
    }
    return text_node(qp, s, n, prefix);
}

static struct qnode *
parse_primary(struct qp *qp)
{
    struct qnode *n = NULL;

    skip_space(qp);
    if (qp->pos >= qp->len) {
        return NULL;
    }
    if (qp->s[qp->pos] == '(') {
        qp->pos++;
        if (qp->depth >= MAX_DEPTH) {
            (void)sl__qp_fail(
                qp, qp->pos - 1, "%s", "parentheses nested too deep");
            return NULL;
        }
        qp->depth++;
        n = parse_or(qp);
        qp->depth--;
        skip_space(qp);
        if (qp->pos < qp->len && qp->s[qp->pos] == ')') {
            qp->pos++;
        }
        return n;
    }
    if (qp->s[qp->pos] == '"') {
        return parse_phrase(qp);
    }
    if (qp->len - qp->pos > 5 && memcmp(qp->s + qp->pos, "NEAR(", 5) == 0) {
        return parse_near_call(qp);
    }
    return parse_word(qp);
}

/* -x (not x), +x (x), then a primary. */
static struct qnode *
parse_unary(struct qp *qp)
{
    struct qnode *n = NULL;

    skip_space(qp);
    if (qp->pos + 1 < qp->len && qp->s[qp->pos] == '-' &&
        !isspace((unsigned char)qp->s[qp->pos + 1]) &&
        qp->s[qp->pos + 1] != '-') {
        qp->pos++;
        n = parse_primary(qp);
        return n != NULL ? qnode_wrap(qp, Q_NOT, n) : NULL;
    }
    if (qp->pos + 1 < qp->len && qp->s[qp->pos] == '+') {
        qp->pos++;
    }
    return parse_primary(qp);
}

/* @left NEAR[/k] @right: one NEAR of their words when both are words. */
static struct qnode *
near_join(struct qp *qp, struct qnode *left, struct qnode *right, int dist)
{
    struct qnode *near = NULL;

    if (right == NULL) {
        return left;
    }
    if (left->kind == Q_NEAR && right->kind == Q_TEXT &&
        left->col == right->col) {
        qnode_append(left, right);
        left->dist = dist > left->dist ? dist : left->dist;
        return left;
    }
    if (left->kind != Q_TEXT || right->kind != Q_TEXT ||
        left->col != right->col) {
        struct qnode *and = qnode_wrap(qp, Q_AND, left);

        qnode_append(and, right);
        return and; /* NEAR is for words: read as AND */
    }
    near = qnode_wrap(qp, Q_NEAR, left);
    near->col = left->col;
    near->dist = dist;
    qnode_append(near, right);
    return near;
}

/* One node for the terms of a sequence: NULL, the one, or an AND. */
static struct qnode *
seq_node(struct qp *qp, struct qnode *first)
{
    if (first == NULL || first->next == NULL) {
        return first;
    }
    return qnode_wrap(qp, Q_AND, first);
}

/* Terms and NOT terms joined by AND (written or not) and NEAR. */
static struct qnode *
parse_and(struct qp *qp)
{
    struct qnode *first = NULL;
    struct qnode **slot = &first; /* where the next term goes */
    struct qnode **last = NULL;   /* where the last term is */

    while (!qp->failed) {
        size_t n = 0;
        int dist = 0;
        enum op op = OP_NONE;
        struct qnode *t = NULL;

        skip_space(qp);
        if (qp->pos >= qp->len) {
            break;
        }
        if (qp->s[qp->pos] == ')') {
            if (qp->depth > 0) {
                break;
            }
            qp->pos++; /* one too many: ignored */
            continue;
        }
        op = peek_op(qp, &n, &dist);
        if (op == OP_OR && first != NULL) {
            break;
        }
        if (op == OP_AND && first != NULL) {
            qp->pos += n;
            continue;
        }
        if (op == OP_NEAR && last != NULL) {
            qp->pos += n;
            t = near_join(qp, *last, parse_unary(qp), dist);
            *last = t;
            slot = &t->next;
            continue;
        }
        if (op == OP_NOT) {
            size_t at = qp->pos;

            qp->pos += n;
            t = parse_unary(qp);
            if (t != NULL) {
                t = qnode_wrap(qp, Q_NOT, t);
            } else if (first == NULL && !qp->failed) {
                /* nothing before it or after it: a word */
                t = text_node(qp, qp->s + at, n, 0);
            }
        } else if (op != OP_NONE) {
            /* an operator with nothing before it is a word */
            t = text_node(qp, qp->s + qp->pos, n, 0);
            qp->pos += n;
        } else {
            t = parse_unary(qp);
        }
        if (t != NULL) {
            *slot = t;
            last = slot;
            slot = &t->next;
        }
    }
    return seq_node(qp, first);
}

static struct qnode *
parse_or(struct qp *qp)
{
    struct qnode *left = parse_and(qp);
    struct qnode * or = NULL;

    while (!qp->failed) {
        size_t n = 0;
        int dist = 0;
        struct qnode *right = NULL;

        skip_space(qp);
        if (qp->pos >= qp->len || peek_op(qp, &n, &dist) != OP_OR) {
            break;
        }
        qp->pos += n;
        right = parse_and(qp);
        if (right == NULL) {
            continue; /* an OR with nothing after it */
        }
        if (left == NULL) {
            left = right;
            continue;
        }
        if (or == NULL) {
            or = qnode_wrap(qp, Q_OR, left);
            left = or ;
        }
        qnode_append(or, right);
    }
    return left;
}

/* ------------------------------------------------------------------------
 * Writing: FTS5 and SQL.
 * --------------------------------------------------------------------- */

/* Whether the text @s holds more than one token. */
static int
tokens_many(const char *s)
{
    int n = 0;
    int in = 0;

    for (; *s != '\0' && n < 2; s++) {
        int t = token_byte((unsigned char)*s);

        n += t && !in;
        in = t;
    }
    return n > 1;
}

/* Whether @n or what follows it holds a phrase (a text of several tokens)
 * or a NEAR: FTS5 compares positions to match those, so that a count
 * costs about as much as the ranking (search.c counts them there). */
static int
has_phrase(const struct qnode *n)
{
    for (; n != NULL; n = n->next) {
        if (n->kind == Q_NEAR || (n->kind == Q_TEXT && tokens_many(n->text)) ||
            has_phrase(n->kids)) {
            return 1;
        }
    }
    return 0;
}

/* Whether @n can be written as FTS5: words, their AND and OR, and NOT
 * after something positive. */
static int
fts_ok(const struct qnode *n)
{
    const struct qnode *k = NULL;
    int pos = 0;

    switch (n->kind) {
    case Q_TEXT:
    case Q_NEAR:
        return 1;
    case Q_OR:
        for (k = n->kids; k != NULL; k = k->next) {
            if (!fts_ok(k)) {
                return 0;
            }
        }
        return 1;
    case Q_AND:
        for (k = n->kids; k != NULL; k = k->next) {
            if (k->kind == Q_NOT ? !fts_ok(k->kids) : !fts_ok(k)) {
                return 0;
            }
            pos += k->kind != Q_NOT;
        }
        return pos > 0;
    default:
        return 0;
    }
}

/* A word as an FTS5 string: quoted, quotes doubled. */
static void
fts_string(struct sl_buf *b, const struct qnode *t)
{
    const char *s = NULL;

    (void)sl_buf_append(b, "\"", 1);
    for (s = t->text; *s != '\0'; s++) {
        (void)sl_buf_append(b, s, 1);
        if (*s == '"') {
            (void)sl_buf_append(b, "\"", 1);
        }
    }
    (void)sl_buf_append(b, t->prefix ? "\"*" : "\"", t->prefix ? 2 : 1);
}

static void fts_write(struct sl_buf *b, const struct qnode *n);

/*
 * The terms from @k on as one FTS5 AND: "(p AND q)", with NOT terms
 * "((p AND q) NOT r NOT s)" (FTS5's NOT is binary and left-associative:
 * one pair of parentheses however many, so that FTS5's parser stack,
 * which cannot grow, is not filled by them); one term without
 * parentheses.  @matchable: only the terms that fts_ok (the others go to
 * SQL, see write_root).
 */
static void
fts_and(struct sl_buf *b, const struct qnode *k, int matchable)
{
    const struct qnode *first = k;
    int npos = 0;
    int nneg = 0;
    int i = 0;

    for (; k != NULL; k = k->next) {
        if (k->kind == Q_NOT && (!matchable || fts_ok(k->kids))) {
            nneg++;
        } else if (k->kind != Q_NOT && (!matchable || fts_ok(k))) {
            npos++;
        }
    }
    (void)sl_buf_appendf(b, "%s%s", nneg > 0 ? "(" : "", npos > 1 ? "(" : "");
    for (k = first; k != NULL; k = k->next) {
        if (k->kind != Q_NOT && (!matchable || fts_ok(k))) {
            (void)sl_buf_appendf(b, "%s", i++ ? " AND " : "");
            fts_write(b, k);
        }
    }
    (void)sl_buf_appendf(b, "%s", npos > 1 ? ")" : "");
    for (k = first; k != NULL; k = k->next) {
        if (k->kind == Q_NOT && (!matchable || fts_ok(k->kids))) {
            (void)sl_buf_append(b, " NOT ", 5);
            fts_write(b, k->kids);
        }
    }
    (void)sl_buf_appendf(b, "%s", nneg > 0 ? ")" : "");
}

static void
fts_write(struct sl_buf *b, const struct qnode *n)
{
    const struct qnode *k = NULL;

    switch (n->kind) {
    case Q_TEXT:
        if (n->col != NULL) {
            (void)sl_buf_appendf(b, "%s : ", n->col);
        }
        fts_string(b, n);
        return;
    case Q_NEAR:
        if (n->col != NULL) {
            (void)sl_buf_appendf(b, "%s : ", n->col);
        }
        (void)sl_buf_appendf(b, "NEAR(");
        for (k = n->kids; k != NULL; k = k->next) {
            (void)sl_buf_appendf(b, "%s", k == n->kids ? "" : " ");
            fts_string(b, k);
        }
        (void)sl_buf_appendf(b, ", %d)", n->dist);
        return;
    case Q_OR:
        (void)sl_buf_append(b, "(", 1);
        for (k = n->kids; k != NULL; k = k->next) {
            (void)sl_buf_appendf(b, "%s", k == n->kids ? "" : " OR ");
            fts_write(b, k);
        }
        (void)sl_buf_append(b, ")", 1);
        return;
    case Q_AND:
        fts_and(b, n->kids, 0);
        return;
    default:
        return;
    }
}

static int
add_param(struct sl__query *q, char *p)
{
    if (q->nparams == SL__QUERY_MAX_PARAMS) {
        sl_free(p);
        return -1;
    }
    q->params[q->nparams++] = p;
    return 0;
}

/* @n as an SQL condition over `docs_cols d`; its values go to @q's params. */
static int
sql_write(struct sl_buf *b, const struct qnode *n, struct sl__query *q)
{
    const struct qnode *k = NULL;
    struct sl_buf f;
    size_t i = 0;
    int rc = 0;

    if (fts_ok(n)) {
        sl_buf_init(&f, SL__QUERY_MAX_MATCH);
        fts_write(&f, n);
        (void)sl_buf_appendf(b,
                             "d.id IN (SELECT rowid FROM documents_fts WHERE"
                             " documents_fts MATCH ?)");
        rc = f.failed ? -1 : add_param(q, sl_strndup(f.data, f.len));
        sl_buf_free(&f);
        return rc;
    }
    switch (n->kind) {
    case Q_FILTER:
        (void)sl_buf_appendf(b, "(%s)", n->text);
        for (i = 0; i < n->nparams && rc == 0; i++) {
            rc = add_param(q, sl_strdup(n->params[i]));
        }
        return rc;
    case Q_NOT: /* a filter on a NULL column is NULL: not "not" */
        (void)sl_buf_append(b, "(NOT coalesce(", 14);
        rc = sql_write(b, n->kids, q);
        (void)sl_buf_append(b, ", 0))", 5);
        return rc;
    case Q_AND:
    case Q_OR:
        (void)sl_buf_append(b, "(", 1);
        for (k = n->kids; k != NULL && rc == 0; k = k->next) {
            if (k != n->kids) {
                (void)sl_buf_appendf(b, n->kind == Q_AND ? " AND " : " OR ");
            }
            rc = sql_write(b, k, q);
        }
        (void)sl_buf_append(b, ")", 1);
        return rc;
    default:
        return -1; /* a NEAR or a word is fts_ok */
    }
}

/*
 * The root: as much as can go into the MATCH does (the words that rank
 * the hits); the other terms of a top-level AND, or all of a root that is
 * no AND, go to the SQL condition.
 */
static int
write_root(const struct qnode *root, struct sl__query *q)
{
    struct sl_buf m;
    struct sl_buf w;
    const struct qnode *k = NULL;
    int rc = 0;
    int pos = 0;

    sl_buf_init(&m, SL__QUERY_MAX_MATCH);
    sl_buf_init(&w, SL__QUERY_MAX_MATCH);
    if (fts_ok(root)) {
        fts_write(&m, root);
    } else if (root->kind == Q_AND) {
        for (k = root->kids; k != NULL; k = k->next) {
            pos += k->kind != Q_NOT && fts_ok(k);
        }
        if (pos > 0) {
            fts_and(&m, root->kids, 1);
        }
        for (k = root->kids; k != NULL && rc == 0; k = k->next) {
            int in_match =
                m.len > 0 && (k->kind == Q_NOT ? fts_ok(k->kids) : fts_ok(k));

            if (!in_match) {
                (void)sl_buf_appendf(&w, "%s", w.len > 0 ? " AND " : "");
                rc = sql_write(&w, k, q);
            }
        }
    } else {
        rc = sql_write(&w, root, q);
    }
    if (rc != 0 || m.failed || w.failed) {
        sl_buf_free(&m);
        sl_buf_free(&w);
        return -1;
    }
    q->match = m.len > 0 ? sl_strndup(m.data, m.len) : NULL;
    q->phrase = q->match != NULL && has_phrase(root);
    q->where = w.len > 0 ? sl_strndup(w.data, w.len) : NULL;
    sl_buf_free(&m);
    sl_buf_free(&w);
    return 0;
}

int
sl__query_parse(const char *text, struct sl__query *q, struct sl_err *err)
{
    struct qp qp;
    struct qnode *root = NULL;
    int rc = 0;

    memset(q, 0, sizeof(*q));
    memset(&qp, 0, sizeof(qp));
    qp.s = text;
    qp.len = strlen(text);
    qp.err = err;
    root = parse_or(&qp);
    if (qp.failed) {
        qnode_free(root);
        return SL_EINVAL;
    }
    if (root == NULL) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "q",
                          "the query has no word or field to search for");
    }
    rc = write_root(root, q);
    qnode_free(root);
    if (rc != 0) {
        sl__query_free(q);
        return sl_err_set(err,
                          SL_EINVAL,
                          "q",
                          "the query is too complex (more than %d field "
                          "values or %u bytes written)",
                          SL__QUERY_MAX_PARAMS,
                          SL__QUERY_MAX_MATCH);
    }
    return 0;
}

void
sl__query_free(struct sl__query *q)
{
    size_t i = 0;

    sl_free(q->match);
    sl_free(q->where);
    for (i = 0; i < q->nparams; i++) {
        sl_free(q->params[i]);
    }
    memset(q, 0, sizeof(*q));
}
