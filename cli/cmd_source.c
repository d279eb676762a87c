/*
 * `sluice source list`, `sluice source purge SOURCE` and `sluice source
 * status SOURCE`: the data sources of a running server with their delta
 * entries (GET /smila/importing/delta/), purging one (DELETE
 * /smila/importing/delta/<source>/?purge=true, docs/rest-api.md) or the
 * entries of one.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"

#define EXIT_USAGE 2

static const char prog[] = "sluice source";

struct args {
    struct sl_cli_conn conn;
    const char *cmd;    /* "list", "purge" or "status" */
    const char *source; /* the data source, or NULL (list) */
    int json;
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: sluice source list [--json] [--server URL] [--token T]\n"
            "       sluice source purge SOURCE [--server URL] [--token T]\n"
            "       sluice source status SOURCE [--server URL] [--token T]\n"
            "\n"
            "list    the data sources with delta entries, and how many each "
            "has\n"
            "        (--json: as the server lists them)\n"
            "purge   forgets the delta entries of data source SOURCE and "
            "deletes its\n"
            "        documents from the index of every running processing "
            "job\n"
            "        (documents another source also holds stay)\n"
            "status  prints the delta entries SOURCE has\n"
            "\n"
            "options:\n");
    sl_cli_conn_help(out, SL_CLI_DEFAULT_SERVER);
    fprintf(out,
            "      --json         list: print JSON\n"
            "  -h, --help         this help\n"
            "\n"
            "Exit status: 0 success, 1 "
            "failure, 2 usage error, 3 server unreachable.\n");
}

/* Parse argv into @a; returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        SL_CLI_CONN_OPTIONS,
        {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c = 0;

    memset(a, 0, sizeof(*a));
    sl_cli_conn_init(&a->conn, SL_CLI_DEFAULT_SERVER);
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'J':
            a->json = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (sl_cli_conn_option(&a->conn, c, optarg)) {
                break;
            }
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (argc - optind == 1 && strcmp(argv[optind], "list") == 0) {
        a->cmd = argv[optind];
        return -1;
    }
    if (argc - optind != 2 || (strcmp(argv[optind], "purge") != 0 &&
                               strcmp(argv[optind], "status") != 0)) {
        fprintf(stderr,
                "sluice source: expected 'list', 'purge SOURCE' or 'status "
                "SOURCE' (sluice source --help)\n");
        return EXIT_USAGE;
    }
    a->cmd = argv[optind];
    a->source = argv[optind + 1];
    return -1;
}

static int
source_list(const struct args *a)
{
    json_t *reply = NULL;
    const json_t *s = NULL;
    size_t i = 0;

    if (sl_cli_call(
            &a->conn, prog, "GET", "/smila/importing/delta/", NULL, &reply) !=
        0) {
        return 1;
    }
    if (a->json) {
        char *text = json_dumps(reply, JSON_INDENT(2));

        printf("%s\n", text != NULL ? text : "null");
        sl_free(text);
    } else {
        json_array_foreach(json_object_get(reply, "sources"), i, s)
        {
            printf("%s  %lld delta entries\n",
                   json_string_value(json_object_get(s, "source")),
                   (long long)json_integer_value(
                       json_object_get(s, "entryCount")));
        }
    }
    json_decref(reply);
    return 0;
}

int
sl_cli_source_main(int argc, char **argv)
{
    struct args a;
    json_t *reply = NULL;
    char *esc = NULL;
    char *path = NULL;
    char *url = NULL;
    long status = 0;
    int purge = 0;
    int rc = parse_args(argc, argv, &a);

    if (rc >= 0) {
        return rc;
    }
    if (strcmp(a.cmd, "list") == 0) {
        return source_list(&a);
    }
    purge = strcmp(a.cmd, "purge") == 0;
    esc = curl_easy_escape(NULL, a.source, 0);
    path = sl_asprintf(
        "/smila/importing/delta/%s/%s", esc, purge ? "?purge=true" : "");
    url = sl_cli_url(a.conn.server, path);
    reply = sl_cli_http_json(
        prog, purge ? "DELETE" : "GET", url, a.conn.token, NULL, &status);
    rc = 1;
    if (reply != NULL && status == 200 && purge) {
        printf("source %s purged: %lld delta entries forgotten; its "
               "documents leave the indexes of %zu processing job(s)\n",
               a.source,
               (long long)json_integer_value(
                   json_object_get(reply, "deltaEntries")),
               json_array_size(json_object_get(reply, "processingJobs")));
        rc = 0;
    } else if (reply != NULL && status == 200) {
        printf("source %s: %lld delta entries\n",
               a.source,
               (long long)json_integer_value(
                   json_object_get(reply, "entryCount")));
        rc = 0;
    } else if (reply != NULL) {
        sl_cli_print_error(prog, status, reply);
    }
    json_decref(reply);
    curl_free(esc);
    sl_free(path);
    sl_free(url);
    return rc;
}
