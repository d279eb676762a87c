/*
 * Bounded growable buffer (curl's dynbuf idea): every append is checked
 * against the limit given at init, and a buffer that hits it frees itself
 * and stays failed until reset.
 */
#include <stdio.h>
#include <string.h>

#include "core/sl.h"

void
sl_buf_init(struct sl_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit;
    b->failed = 0;
}

static int
grow(struct sl_buf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 256;

    while (cap < need + 1) {
        cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
    }
    if (cap > b->limit + 1) {
        cap = b->limit + 1;
    }
    b->data = sl_realloc(b->data, cap);
    b->cap = cap;
    return 0;
}

int
sl_buf_append(struct sl_buf *b, const void *data, size_t n)
{
    if (b->failed) {
        return SL_EBADSTATE;
    }
    if (n > b->limit || b->len > b->limit - n) {
        sl_buf_free(b);
        b->failed = 1;
        return SL_ETOOLARGE;
    }
    if (b->len + n + 1 > b->cap) {
        (void)grow(b, b->len + n);
    }
    if (n > 0) {
        memcpy(b->data + b->len, data, n);
    }
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int
sl_buf_appendf(struct sl_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[512];
    char *big = NULL;
    int n = 0;
    int rc = 0;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return SL_EINVAL;
    }
    if ((size_t)n < sizeof(small)) {
        return sl_buf_append(b, small, (size_t)n);
    }
    big = sl_malloc((size_t)n + 1);
    va_start(ap, fmt);
    (void)vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rc = sl_buf_append(b, big, (size_t)n);
    sl_free(big);
    return rc;
}

void
sl_buf_reset(struct sl_buf *b)
{
    b->len = 0;
    b->failed = 0;
    if (b->data != NULL) {
        b->data[0] = '\0';
    }
}

void
sl_buf_free(struct sl_buf *b)
{
    SL_FREE(b->data);
    b->len = 0;
    b->cap = 0;
}
