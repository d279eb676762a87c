/*
 * Allocation wrappers.  The only file allowed to call malloc and free: an
 * allocation failure aborts, so no caller carries an unreachable NULL branch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sl.h"

static _Noreturn void
oom(size_t n)
{
    /* No allocation here: the log path itself might need memory. */
    fprintf(stderr, "sluice: out of memory allocating %zu bytes\n", n);
    abort();
}

void *
sl_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL) {
        oom(n);
    }
    return p;
}

void *
sl_calloc(size_t count, size_t size)
{
    void *p = NULL;

    if (size != 0 && count > SIZE_MAX / size) {
        oom(SIZE_MAX);
    }
    p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL) {
        oom(count * size);
    }
    return p;
}

void *
sl_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (q == NULL) {
        oom(n);
    }
    return q;
}

char *
sl_strdup(const char *s)
{
    return sl_strndup(s, strlen(s));
}

char *
sl_strndup(const char *s, size_t n)
{
    char *p = sl_malloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *
sl_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_list ap2;
    int len = 0;
    char *p = NULL;

    va_start(ap, fmt);
    va_copy(ap2, ap);
    len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0) {
        va_end(ap2);
        sl_panic("sl_asprintf: bad format '%s'", fmt);
    }
    p = sl_malloc((size_t)len + 1);
    (void)vsnprintf(p, (size_t)len + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void
sl_free(void *p)
{
    free(p);
}
