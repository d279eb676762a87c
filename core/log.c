/*
 * Logging: one line per call to stderr, formatted into a stack buffer and
 * written with a single write(2) so lines from threads never interleave.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sl.h"

static atomic_int min_level = SL_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void
sl_log_set_level(enum sl_log_level level)
{
    atomic_store(&min_level, (int)level);
}

int
sl_log_level_parse(const char *s, enum sl_log_level *out)
{
    size_t i = 0;

    for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum sl_log_level)i;
            return 0;
        }
    }
    return SL_EINVAL;
}

static void
vlog(enum sl_log_level level, const char *fmt, va_list ap)
{
    char line[8192];
    char ts[32];
    int n = 0;
    int m = 0;

    sl_time_format(sl_time_ms(), ts, sizeof(ts));
    n = snprintf(line,
                 sizeof(line),
                 "%s %-5s ",
                 ts,
                 level_names[level <= SL_LOG_ERROR ? level : SL_LOG_ERROR]);
    if (n < 0) {
        return;
    }
    m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    if (m < 0) {
        m = 0;
    }
    n += m;
    if ((size_t)n > sizeof(line) - 2) {
        /* cut: say so, and how much is missing */
        char mark[48];
        int room = (int)sizeof(line) - 2;
        int k = snprintf(mark, sizeof(mark), " [... %d more bytes]", n - room);

        /* the mark takes k bytes of the line too: count them (twice, in
         * case the count grew a digit) */
        k = snprintf(mark, sizeof(mark), " [... %d more bytes]", n - room + k);
        k = snprintf(mark, sizeof(mark), " [... %d more bytes]", n - room + k);
        n = room - k;
        memcpy(line + n, mark, (size_t)k);
        n += k;
    }
    line[n++] = '\n';
    (void)sl_write_all(STDERR_FILENO, line, (size_t)n);
}

void
sl_log(enum sl_log_level level, const char *fmt, ...)
{
    va_list ap;

    if ((int)level < atomic_load(&min_level)) {
        return;
    }
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void
sl_panic(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(SL_LOG_ERROR, fmt, ap);
    va_end(ap);
    abort();
}
