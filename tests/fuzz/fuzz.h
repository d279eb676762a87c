/*
 * Shared by the libFuzzer harnesses of tests/fuzz/ (docs/development.md
 * "Fuzzing"): the entry points libFuzzer calls, a check that turns a
 * broken property into a crash libFuzzer records, and input helpers.
 * Include after core/sl.h.
 */
#ifndef SL_TESTS_FUZZ_H
#define SL_TESTS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry points (declared here for -Wmissing-prototypes). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property of the code under test does not hold: print why and abort,
 * which libFuzzer reports as a crash and saves the input for. */
#define SL_FUZZ_CHECK(cond, ...)                                               \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr,                                                    \
                    "%s:%d: check failed: %s: ",                               \
                    __FILE__,                                                  \
                    __LINE__,                                                  \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A NUL-terminated copy of @n bytes at @p (new string, sl_free). */
static inline char *
sl_fuzz_str(const uint8_t *p, size_t n)
{
    char *s = sl_malloc(n + 1);

    if (n > 0) {
        memcpy(s, p, n);
    }
    s[n] = '\0';
    return s;
}

/* Split the input at its first '\n': *line gets the bytes before it (a new
 * string), the returned pointer and *rest_len what follows.  Without a
 * '\n' the line is all of it and the rest empty. */
static inline const uint8_t *
sl_fuzz_line(const uint8_t *p, size_t n, char **line, size_t *rest_len)
{
    const uint8_t *nl = memchr(p, '\n', n);
    size_t k = nl != NULL ? (size_t)(nl - p) : n;

    *line = sl_fuzz_str(p, k);
    *rest_len = nl != NULL ? n - k - 1 : 0;
    return nl != NULL ? nl + 1 : p + n;
}

/* Quiet logging: the code under test logs every bad input it meets. */
static inline void
sl_fuzz_quiet(void)
{
    if (getenv("SL_FUZZ_LOG") == NULL) {
        sl_log_set_level(SL_LOG_ERROR);
    }
}

#endif /* SL_TESTS_FUZZ_H */
