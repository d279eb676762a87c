/*
 * The temporary directory of a test: a fresh directory under $TMPDIR
 * (ctest sets it to <build>/testtmp; unset or empty: /tmp) and the removal
 * of a directory tree.  Plain libc (no cmocka), so that the fuzz
 * harnesses of tests/fuzz/ use it too; the callers check the results with
 * their own asserts.
 */
#ifndef SL_TESTS_TMPDIR_H
#define SL_TESTS_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Make the directory "<$TMPDIR>/<@prefix>XXXXXX" with mkdtemp, its name
 * in @dir (@cap bytes).  Returns @dir, NULL when it was not made. */
static inline char *
tmpdir_make(char *dir, size_t cap, const char *prefix)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir,
                     cap,
                     "%s/%sXXXXXX",
                     tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp",
                     prefix);

    if (n < 0 || (size_t)n >= cap) {
        return NULL;
    }
    return mkdtemp(dir);
}

static inline int
tmpdir_rm_entry(const char *path,
                const struct stat *st,
                int flag,
                struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Remove @dir and everything in it, like rm -rf (links are removed, not
 * followed).  Returns 0, or non-zero when something was not removed. */
static inline int
tmpdir_remove(const char *dir)
{
    return nftw(dir, tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* SL_TESTS_TMPDIR_H */
