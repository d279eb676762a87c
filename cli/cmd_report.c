/*
 * `sluice job report JOB [RUN]` (docs/cli.md): what happened to the
 * documents of a job run, page by page from
 * GET /smila/jobmanager/jobs/JOB[/RUN]/documents/ (docs/rest-api.md).
 * Pages are printed as they come, so a long history costs one page of
 * memory.
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"

#define PAGE 1000

static const char prog[] = "sluice job report";

static const char *const states[] = {
    "new", "changed", "deleted", "failed", "skipped"};

/* The first line: the run and its counts. */
static void
print_head(const json_t *page, int json)
{
    const json_t *counts = json_object_get(page, "counts");
    const char *sep = "";
    size_t i = 0;

    if (json) {
        json_t *head = json_deep_copy(page);
        char *text = NULL;

        (void)json_object_del(head, "documents");
        (void)json_object_del(head, "next");
        text = json_dumps(head, JSON_COMPACT);
        printf("%s\n", text);
        sl_free(text);
        json_decref(head);
        return;
    }
    printf("job %s run %s: %s\n  documents:",
           json_string_value(json_object_get(page, "job")),
           json_string_value(json_object_get(page, "runId")),
           json_string_value(json_object_get(page, "state")));
    for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        printf(
            "%s %lld %s",
            sep,
            (long long)json_integer_value(json_object_get(counts, states[i])),
            states[i]);
        sep = ",";
    }
    printf(" (%lld recorded",
           (long long)json_integer_value(json_object_get(counts, "recorded")));
    if (json_integer_value(json_object_get(counts, "notRecorded")) > 0) {
        printf(", %lld not recorded",
               (long long)json_integer_value(
                   json_object_get(counts, "notRecorded")));
    }
    printf("; unchanged ones are counted by the workers, not listed)\n");
}

static void
print_docs(const json_t *page, int json)
{
    const json_t *d = NULL;
    size_t i = 0;

    json_array_foreach(json_object_get(page, "documents"), i, d)
    {
        const char *reason = json_string_value(json_object_get(d, "reason"));
        const char *msg = json_string_value(json_object_get(d, "message"));

        if (json) {
            char *text = json_dumps(d, JSON_COMPACT);

            printf("%s\n", text);
            sl_free(text);
            continue;
        }
        printf("%-8s %s  %s",
               json_string_value(json_object_get(d, "state")),
               json_string_value(json_object_get(d, "id")),
               json_string_value(json_object_get(d, "worker")));
        if (reason != NULL) {
            printf("  %s", reason);
        }
        if (msg != NULL) {
            printf(": %s", msg);
        }
        printf("\n");
    }
}

/* GET one page; NULL (printed) unless 2xx. */
static json_t *
get_page(const struct sl_cli_conn *conn,
         const char *job,
         const char *run,
         const char *state,
         json_int_t after)
{
    char *ejob = curl_easy_escape(NULL, job, 0);
    char *erun = run != NULL ? curl_easy_escape(NULL, run, 0) : NULL;
    char *path = sl_asprintf("/smila/jobmanager/jobs/%s/%s%sdocuments/"
                             "?limit=%d&after=%lld%s%s",
                             ejob,
                             erun != NULL ? erun : "",
                             erun != NULL ? "/" : "",
                             PAGE,
                             (long long)after,
                             state != NULL ? "&state=" : "",
                             state != NULL ? state : "");
    json_t *j = NULL;

    (void)sl_cli_call(conn, prog, "GET", path, NULL, &j);
    curl_free(ejob);
    curl_free(erun);
    sl_free(path);
    return j;
}

int
sl_cli_job_report(const struct sl_cli_conn *conn,
                  const char *job,
                  const char *run,
                  const char *state,
                  int json)
{
    json_int_t after = 0;
    char pinned[128];
    int first = 1;

    if (state != NULL) {
        size_t i = 0;

        while (i < sizeof(states) / sizeof(states[0]) &&
               strcmp(states[i], state) != 0) {
            i++;
        }
        if (i == sizeof(states) / sizeof(states[0])) {
            fprintf(stderr,
                    "%s: --state must be new, changed, deleted, failed or "
                    "skipped, not '%s'\n",
                    prog,
                    state);
            return 2;
        }
    }
    for (;;) {
        json_t *page = get_page(conn, job, run, state, after);
        const json_t *next = NULL;

        if (page == NULL) {
            return 1;
        }
        if (first) {
            print_head(page, json);
            first = 0;
            /* the same run on every page, also when a new one starts */
            (void)snprintf(pinned,
                           sizeof(pinned),
                           "%s",
                           json_string_value(json_object_get(page, "runId")));
            run = pinned;
        }
        print_docs(page, json);
        next = json_object_get(page, "next");
        if (!json_is_integer(next)) {
            json_decref(page);
            break;
        }
        after = json_integer_value(next);
        json_decref(page);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
