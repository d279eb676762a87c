/*
 * The predefined definitions of the jobmanager: buckets.json, the workflow
 * files and jobs.json, loaded at start (docs/jobmanager-definitions.md,
 * "Where predefined definitions come from").  Each definition goes through
 * sl__jm_defs_put like a REST one; a bad one is logged with its file,
 * entity and field and skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jobmanager/jobmanager_int.h"

static const char *const kind_names[] = {"bucket", "workflow", "job"};

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
load_one(struct sl__jm_defs *d,
         const char *file,
         enum sl__jm_kind kind,
         const json_t *def,
         int quiet)
{
    struct sl_err e;
    const char *name = json_string_value(json_object_get(def, "name"));

    sl_err_clear(&e);
    if (sl__jm_defs_put(d, kind, def, SL__JM_PUT_READONLY, NULL, &e) == 0) {
        return 0;
    }
    if (quiet) {
        return 1;
    }
    SL_WARN("%s: %s '%s': %s (field %s)",
            file,
            kind_names[kind],
            name != NULL ? name : "?",
            e.message,
            e.field[0] != '\0' ? e.field : "-");
    return 1;
}

/*
 * The definitions of one file's array.  A job may name another job (the
 * updatePusher's jobToPushTo) that comes later in the file, so the jobs
 * that fail are tried again while a pass loads any; only the last try of
 * each is logged.
 */
static int
load_list(struct sl__jm_defs *d,
          const char *path,
          enum sl__jm_kind kind,
          const json_t *list)
{
    size_t n = json_array_size(list);
    char *pending = sl_calloc(n + 1, 1);
    const json_t *v = NULL;
    size_t i = 0;
    int failures = 0;
    int again = kind == SL__JM_JOB;

    json_array_foreach(list, i, v)
    {
        pending[i] = (char)load_one(d, path, kind, v, again);
    }
    while (again) {
        int loaded = 0;

        json_array_foreach(list, i, v)
        {
            if (pending[i] && load_one(d, path, kind, v, 1) == 0) {
                pending[i] = 0;
                loaded = 1;
            }
        }
        again = loaded;
    }
    json_array_foreach(list, i, v)
    {
        if (pending[i] && kind == SL__JM_JOB) {
            (void)load_one(d, path, kind, v, 0);
        }
        failures += pending[i];
    }
    sl_free(pending);
    return failures;
}

/*
 * One file of definitions: {"<key>": [...]} or, when @p single_ok (the
 * workflow files), one definition object.  A missing file is fine; a file
 * that is not JSON or has the wrong shape counts as one failure.
 */
static int
load_file(struct sl__jm_defs *d,
          const char *path,
          enum sl__jm_kind kind,
          const char *key,
          int single_ok)
{
    int failures = 0;
    json_t *root = NULL;
    const json_t *list = NULL;
    json_error_t jerr;
    struct stat st;

    if (stat(path, &st) != 0 && errno == ENOENT) {
        return 0;
    }
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        SL_WARN("%s: not valid JSON at line %d, column %d: %s",
                path,
                jerr.line,
                jerr.column,
                jerr.text);
        return 1;
    }
    list = json_object_get(root, key);
    if (json_is_array(list)) {
        failures = load_list(d, path, kind, list);
    } else if (single_ok && list == NULL && json_is_object(root)) {
        failures += load_one(d, path, kind, root, 0);
    } else {
        SL_WARN("%s: expected an object with a \"%s\" array", path, key);
        failures = 1;
    }
    json_decref(root);
    return failures;
}

/* Every "*.json" file of @p dir in name order, so loading is repeatable. */
static int
load_workflows_dir(struct sl__jm_defs *d, const char *dir)
{
    int failures = 0;
    DIR *dh = NULL;
    const struct dirent *de = NULL;
    char **names = NULL;
    char *path = NULL;
    size_t n = 0;
    size_t i = 0;
    int errnum = 0;

    dh = opendir(dir);
    if (dh == NULL) {
        errnum = errno;
        if (errnum == ENOENT) {
            return 0;
        }
        SL_WARN("%s: cannot open workflows directory: %s",
                dir,
                sl_errno_str(errnum));
        return 1;
    }
    for (;;) {
        size_t len = 0;

        de = readdir(dh);
        if (de == NULL) {
            break;
        }
        len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 6 ||
            strcmp(de->d_name + len - 5, ".json") != 0) {
            continue;
        }
        names = sl_realloc(names, (n + 1) * sizeof(*names));
        names[n++] = sl_strdup(de->d_name);
    }
    (void)closedir(dh);
    if (n > 0) {
        qsort(names, n, sizeof(*names), cmp_str);
    }
    for (i = 0; i < n; i++) {
        path = sl_asprintf("%s/%s", dir, names[i]);
        failures += load_file(d, path, SL__JM_WORKFLOW, "workflows", 1);
        SL_FREE(path);
        sl_free(names[i]);
    }
    sl_free(names);
    return failures;
}

int
sl__jm_defs_load_files(struct sl__jm_defs *d,
                       const char *config_dir,
                       const char *workflows_dir)
{
    int failures = 0;
    char *path = NULL;

    if (config_dir != NULL) {
        path = sl_asprintf("%s/buckets.json", config_dir);
        failures += load_file(d, path, SL__JM_BUCKET, "buckets", 0);
        SL_FREE(path);
    }
    if (workflows_dir != NULL) {
        failures += load_workflows_dir(d, workflows_dir);
    }
    if (config_dir != NULL) {
        path = sl_asprintf("%s/jobs.json", config_dir);
        failures += load_file(d, path, SL__JM_JOB, "jobs", 0);
        SL_FREE(path);
    }
    return failures;
}
