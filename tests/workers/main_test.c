/*
 * sluice-test: the real sluice command line plus the test workers, which
 * `serve` runs in-process and `worker` runs as an external worker.  One
 * test-only command: `sluice-test delta-seed DATA_DIR SOURCE N` writes N
 * delta entries ("r0".."r<N-1>") for SOURCE, so the importing REST API can
 * be tested before the import workers exist.  `sluice-test index-seed
 * DATA_DIR INDEX JSONL_FILE` upserts one JSON document per line into the
 * embedded index, for the index REST API before the indexWriter exists.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "deltaservice/deltaservice.h"
#include "index/index.h"
#include "tests/workers/test_workers.h"

static int
delta_seed(const char *data, const char *source, const char *count)
{
    struct sl_delta *d = NULL;
    struct sl_delta_rec rec;
    struct sl_err err;
    char *dir = sl_asprintf("%s/delta", data);
    char id[32];
    uint64_t n = 0;
    uint64_t seq = 0;
    uint64_t i = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_parse_u64(count, &n) != 0) {
        fprintf(stderr, "delta-seed: bad count '%s'\n", count);
        sl_free(dir);
        return 2;
    }
    (void)mkdir(data, 0755);
    rc = sl_delta_open(dir, 16, SL_DURABILITY_PROCESS, 0, &d, &err);
    if (rc == 0) {
        rc = sl_delta_run_begin(d, source, &seq, &err);
    }
    for (i = 0; rc == 0 && i < n; i++) {
        memset(&rec, 0, sizeof(rec));
        (void)snprintf(id, sizeof(id), "r%llu", (unsigned long long)i);
        rec.id = id;
        rec.hash = "h1";
        rc = sl_delta_mark_updated(d, source, seq, &rec, 1, &err);
    }
    if (rc != 0) {
        fprintf(stderr, "delta-seed: %s\n", err.message);
    }
    sl_delta_close(d);
    sl_free(dir);
    return rc == 0 ? 0 : 1;
}

static int
index_seed(const char *data, const char *index, const char *file)
{
    struct sl_index_set *set = NULL;
    struct sl_err err;
    json_error_t jerr;
    char *dir = sl_asprintf("%s/index", data);
    FILE *in = fopen(file, "r");
    json_t *doc = NULL;
    int rc = 0;

    sl_err_clear(&err);
    if (in == NULL) {
        fprintf(stderr, "index-seed: cannot open '%s'\n", file);
        sl_free(dir);
        return 2;
    }
    (void)mkdir(data, 0755);
    rc = sl_index_open(dir, &set, &err);
    while (rc == 0) {
        doc = json_loadf(in, JSON_DISABLE_EOF_CHECK, &jerr);
        if (doc == NULL) {
            break; /* end of file (or a bad line: reported below) */
        }
        rc = sl_index_upsert(set, index, doc, &err);
        json_decref(doc);
    }
    if (rc == 0 && !feof(in)) {
        int c = 0;

        while ((c = getc(in)) == ' ' || c == '\n' || c == '\t' || c == '\r') {
        }
        if (c != EOF) {
            rc = sl_err_set(&err, SL_EBADJSON, NULL, "%s", jerr.text);
        }
    }
    if (rc != 0) {
        fprintf(stderr, "index-seed: %s\n", err.message);
    }
    (void)fclose(in);
    sl_index_close(set);
    sl_free(dir);
    return rc == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
    size_t n = 0;
    const struct sl_worker_type *const *types = sl_test_workers(&n);

    if (argc == 5 && strcmp(argv[1], "delta-seed") == 0) {
        return delta_seed(argv[2], argv[3], argv[4]);
    }
    if (argc == 5 && strcmp(argv[1], "index-seed") == 0) {
        return index_seed(argv[2], argv[3], argv[4]);
    }
    sl_cli_set_extra_workers(types, n);
    return sl_cli_main(argc, argv);
}
