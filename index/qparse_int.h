/*
 * Private to the query language (qparse.c, qfields.c): the tree a query is
 * read into and the reader's state.
 */
#ifndef SL_INDEX_QPARSE_INT_H_INCLUDED
#define SL_INDEX_QPARSE_INT_H_INCLUDED

#include <stddef.h>

#include "core/sl.h"

enum qkind { Q_TEXT, Q_NEAR, Q_AND, Q_OR, Q_NOT, Q_FILTER };

struct qnode {
    enum qkind kind;
    struct qnode *kids; /* first child (AND, OR, NOT, NEAR) */
    struct qnode *next; /* next sibling */
    char *text;         /* TEXT: the words as typed; FILTER: SQL */
    const char *col;    /* TEXT, NEAR: the FTS column, or NULL */
    int prefix;         /* TEXT: the last token is a prefix */
    int dist;           /* NEAR: tokens between, at most */
    char *params[4];    /* FILTER: values of its '?', in order */
    size_t nparams;
};

struct qp {
    const char *s;
    size_t len;
    size_t pos;
    const char *col; /* the column of a group under title:(...) */
    unsigned depth;
    size_t nodes;
    struct sl_err *err;
    int failed;
};

/* A new node of @kind; counts it against the query's limit. */
struct qnode *sl__qp_node(struct qp *qp, enum qkind kind);
/* The query's error at byte @at (reported from 1); returns -1. */
int sl__qp_fail(struct qp *qp, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The fields, up to a NULL name: those with a column search words in it,
 * the others filter (qfields.c). */
struct sl__qfield {
    const char *name;
    const char *col; /* FTS column, or NULL: a filter */
};
extern const struct sl__qfield sl__qfields[];
/* The field named by the @n bytes at @s (any case), or -1. */
int sl__qfield_find(const char *s, size_t n);
/* The filter of field @name (a filter field) with value @v, found at @at;
 * NULL after an error (sl__qp_fail). */
struct qnode *
sl__qfield_filter(struct qp *qp, const char *name, const char *v, size_t at);

#endif /* SL_INDEX_QPARSE_INT_H_INCLUDED */
