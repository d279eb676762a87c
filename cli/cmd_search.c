/*
 * `sluice search`: send a full-text query to a running server
 * (GET /smila/index/<name>/search, docs/index.md) and print one hit per
 * line: score, record id and title, separated by tabs; the facets asked
 * for go to stderr with the count, and the cursor of the next page.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"

#define EXIT_USAGE    2
#define DEFAULT_INDEX "default"

struct args {
    struct sl_cli_conn conn;
    const char *index;
    const char *query;
    const char *sort;   /* relevance, date, size; NULL: the server's */
    const char *facets; /* "type,ext"; NULL: none */
    const char *after;  /* a cursor; NULL: the first page */
    int asc;
    uint64_t limit;
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: sluice search [--server URL] [--index NAME] [--limit N]\n"
            "                     [--sort KEY] [--asc] [--facets LIST]\n"
            "                     [--after CURSOR] [--token TOKEN] QUERY\n"
            "\n"
            "Searches an index of a running server and prints one hit per "
            "line:\n"
            "score, record id and title, separated by tabs (best first).\n"
            "QUERY is read as typed: words, \"phrases\", AND OR NOT -word, "
            "word*,\n"
            "(groups) and fields such as title: ext:pdf type:pdf "
            "path:/home\n"
            "modified:2025-01..2025-06 size:>1M (docs/index.md).\n"
            "\n"
            "options:\n");
    sl_cli_conn_help(out, SL_CLI_DEFAULT_SERVER);
    fprintf(out,
            "  -i, --index NAME   index name "
            "(default " DEFAULT_INDEX ")\n"
            "  -n, --limit N      hits to "
            "print, 1 to 1000 (default 10)\n"
            "      --sort KEY     relevance (default), date or size, "
            "highest first\n"
            "      --asc          lowest first\n"
            "      --facets LIST  also count the hits by some of source, "
            "type, ext,\n"
            "                     year, host (comma-separated; printed on "
            "stderr)\n"
            "      --after CURSOR the page after the one whose 'next: "
            "CURSOR'\n"
            "                     was printed (on stderr)\n"
            "  -h, --help         this help\n"
            "\n"
            "Exit status: 0 success (also without hits), 1 failure, 2 "
            "usage error,\n"
            "3 server unreachable.\n");
}

/* Parse argv into @a; returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        SL_CLI_CONN_OPTIONS,
        {"index", required_argument, NULL, 'i'},
        {"limit", required_argument, NULL, 'n'},
        {"sort", required_argument, NULL, 'S'},
        {"asc", no_argument, NULL, 'A'},
        {"facets", required_argument, NULL, 'F'},
        {"after", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c = 0;

    memset(a, 0, sizeof(*a));
    sl_cli_conn_init(&a->conn, SL_CLI_DEFAULT_SERVER);
    a->index = DEFAULT_INDEX;
    a->limit = 10;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:i:n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            a->index = optarg;
            break;
        case 'n':
            if (sl_parse_u64(optarg, &a->limit) != 0 || a->limit == 0 ||
                a->limit > 1000) {
                fprintf(stderr,
                        "sluice search: --limit must be 1 to 1000, not "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'S':
            a->sort = optarg;
            break;
        case 'A':
            a->asc = 1;
            break;
        case 'F':
            a->facets = optarg;
            break;
        case 'C':
            a->after = optarg;
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
    if (optind != argc - 1 || argv[optind][0] == '\0') {
        fprintf(stderr,
                "sluice search: exactly one non-empty QUERY is required "
                "(sluice search --help)\n");
        return EXIT_USAGE;
    }
    if (sl_name_check_entity(a->index, NULL) != 0) {
        fprintf(stderr, "sluice search: invalid index name '%s'\n", a->index);
        return EXIT_USAGE;
    }
    a->query = argv[optind];
    return -1;
}

/* "type: text/plain 3, application/pdf 1" per facet, on stderr. */
static void
print_facets(const json_t *facets)
{
    const char *name = NULL;
    json_t *list = NULL;

    json_object_foreach((json_t *)facets, name, list)
    {
        size_t i = 0;
        json_t *v = NULL;

        fprintf(stderr, "%s:", name);
        json_array_foreach(list, i, v)
        {
            fprintf(stderr,
                    "%s %s %lld",
                    i ? "," : "",
                    json_string_value(json_object_get(v, "value")),
                    (long long)json_integer_value(json_object_get(v, "count")));
        }
        fputc('\n', stderr);
    }
}

/* Print the hits of a search reply; 0 or 1 when the reply is not one. */
static int
print_hits(const char *text)
{
    json_t *reply = json_loads(text, 0, NULL);
    json_t *hits = json_object_get(reply, "hits");
    json_t *hit = NULL;
    size_t i = 0;

    if (!json_is_array(hits)) {
        fprintf(stderr, "sluice search: unexpected reply from the server\n");
        json_decref(reply);
        return 1;
    }
    json_array_foreach(hits, i, hit)
    {
        const char *title = json_string_value(json_object_get(hit, "title"));

        printf("%.4f\t%s\t%s\n",
               json_number_value(json_object_get(hit, "score")),
               json_string_value(json_object_get(hit, "_recordid")),
               title ? title : "");
    }
    fprintf(stderr,
            "%zu of %lld hit(s)\n",
            json_array_size(hits),
            (long long)json_integer_value(json_object_get(reply, "total")));
    print_facets(json_object_get(reply, "facets"));
    if (json_is_string(json_object_get(reply, "next"))) {
        fprintf(stderr,
                "next: %s\n",
                json_string_value(json_object_get(reply, "next")));
    }
    json_decref(reply);
    return 0;
}

/* @url with "&name=value" (escaped) when @value is set; @url is freed. */
static char *
add_arg(char *url, const char *name, const char *value)
{
    char *v = NULL;
    char *u = NULL;

    if (value == NULL) {
        return url;
    }
    v = curl_easy_escape(NULL, value, 0);
    u = sl_asprintf("%s&%s=%s", url, name, v != NULL ? v : "");
    curl_free(v);
    sl_free(url);
    return u;
}

int
sl_cli_search_main(int argc, char **argv)
{
    struct args a;
    struct sl_buf body;
    char *q = NULL;
    char *url = NULL;
    long status = 0;
    size_t slen = 0;
    int rc = 0;

    rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    sl_buf_init(&body, SL_CLI_MAX_REPLY);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "sluice search: cannot initialise libcurl\n");
        return 1;
    }
    q = curl_easy_escape(NULL, a.query, 0);
    if (q == NULL) {
        fprintf(stderr, "sluice search: cannot encode the query\n");
        rc = 1;
        goto out;
    }
    slen = strlen(a.conn.server);
    while (slen > 0 && a.conn.server[slen - 1] == '/') {
        slen--;
    }
    url = sl_asprintf("%.*s/smila/index/%s/search?q=%s&limit=%llu%s",
                      (int)slen,
                      a.conn.server,
                      a.index,
                      q,
                      (unsigned long long)a.limit,
                      a.asc ? "&order=asc" : "");
    url = add_arg(url, "sort", a.sort);
    url = add_arg(url, "facets", a.facets);
    url = add_arg(url, "cursor", a.after);
    rc = sl_cli_http(
        "sluice search", "GET", url, a.conn.token, NULL, &body, &status);
    if (rc != 0) {
        goto out;
    }
    if (status != 200) {
        json_t *reply = json_loads(body.data ? body.data : "", 0, NULL);
        const char *msg = json_string_value(
            json_object_get(json_object_get(reply, "error"), "message"));

        fprintf(stderr,
                "sluice search: HTTP %ld: %s\n",
                status,
                msg ? msg : "unexpected reply");
        json_decref(reply);
        rc = 1;
        goto out;
    }
    rc = print_hits(body.data ? body.data : "");

out:
    curl_free(q);
    sl_free(url);
    sl_buf_free(&body);
    curl_global_cleanup();
    return rc;
}
