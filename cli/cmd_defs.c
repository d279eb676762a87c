/*
 * Definitions and indexes from the command line (docs/cli.md): `sluice job
 * list|define|delete` (called from cmd_job.c), `sluice workflow
 * list|define|delete` and `sluice index list|delete`, each one request to
 * the REST API (docs/jobmanager-definitions.md, docs/index.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"

#define EXIT_USAGE 2
#define MAX_DEF    (16u << 20) /* a definition file, as http.maxBodyBytes */

static void
print_json(const json_t *j)
{
    char *text = json_dumps(j, JSON_INDENT(2));

    printf("%s\n", text != NULL ? text : "null");
    sl_free(text);
}

/* "jobs" -> "job" and so on, for messages. */
static const char *
singular(const char *kind)
{
    return strcmp(kind, "jobs") == 0        ? "job"
           : strcmp(kind, "workflows") == 0 ? "workflow"
                                            : "bucket";
}

int
sl_cli_defs_list(const struct sl_cli_conn *conn,
                 const char *prog,
                 const char *kind,
                 int json)
{
    char *path = sl_asprintf("/smila/jobmanager/%s/", kind);
    json_t *reply = NULL;
    const json_t *item = NULL;
    size_t i = 0;
    int rc = sl_cli_call(conn, prog, "GET", path, NULL, &reply);

    sl_free(path);
    if (rc != 0) {
        return rc;
    }
    if (json) {
        print_json(json_object_get(reply, kind));
        json_decref(reply);
        return 0;
    }
    json_array_foreach(json_object_get(reply, kind), i, item)
    {
        const json_t *runs = json_object_get(item, "runs");
        const char *cur = json_string_value(json_object_get(runs, "current"));
        size_t done = json_array_size(json_object_get(runs, "completed"));

        printf("%s", json_string_value(json_object_get(item, "name")));
        if (cur != NULL) {
            printf("  running %s", cur);
        }
        if (runs != NULL) {
            printf("%s%zu run%s ended",
                   cur != NULL ? ", " : "  ",
                   done,
                   done == 1 ? "" : "s");
        }
        printf("\n");
    }
    json_decref(reply);
    return 0;
}

int
sl_cli_defs_define(const struct sl_cli_conn *conn,
                   const char *prog,
                   const char *kind,
                   const char *file)
{
    json_error_t jerr;
    json_t *def = json_load_file(file, 0, &jerr);
    json_t *reply = NULL;
    char *path = NULL;
    char *body = NULL;
    int rc = 0;

    if (def == NULL) {
        fprintf(stderr,
                "%s: %s: line %d, column %d: %s\n",
                prog,
                file,
                jerr.line,
                jerr.column,
                jerr.text);
        return 1;
    }
    body = json_dumps(def, JSON_COMPACT);
    if (body == NULL || strlen(body) > MAX_DEF) {
        fprintf(stderr, "%s: %s: over 16 MiB\n", prog, file);
        json_decref(def);
        sl_free(body);
        return 1;
    }
    path = sl_asprintf("/smila/jobmanager/%s/", kind);
    rc = sl_cli_call(conn, prog, "POST", path, body, &reply);
    if (rc == 0) {
        printf("%s %s defined\n",
               singular(kind),
               json_string_value(json_object_get(def, "name")));
    }
    json_decref(reply);
    json_decref(def);
    sl_free(body);
    sl_free(path);
    return rc;
}

int
sl_cli_defs_delete(const struct sl_cli_conn *conn,
                   const char *prog,
                   const char *kind,
                   const char *name,
                   int purge)
{
    char *ename = curl_easy_escape(NULL, name, 0);
    char *path = sl_asprintf(
        "/smila/jobmanager/%s/%s/%s", kind, ename, purge ? "?purge=true" : "");
    json_t *reply = NULL;
    int rc = sl_cli_call(conn, prog, "DELETE", path, NULL, &reply);

    if (rc == 0) {
        printf("%s %s deleted", singular(kind), name);
        if (purge) {
            printf(", its documents purged");
        }
        printf("\n");
    }
    json_decref(reply);
    curl_free(ename);
    sl_free(path);
    return rc;
}

/* ------------------------------------------------------------------------
 * sluice workflow, sluice index
 * --------------------------------------------------------------------- */

/* The options every sub-command here takes: --json, --server, --token.
 * Returns -1 to go on, or the exit status (help, usage error). */
static int
parse(int argc,
      char **argv,
      const char *usage_text,
      struct sl_cli_conn *conn,
      int *json)
{
    static const struct option opts[] = {
        SL_CLI_CONN_OPTIONS,
        {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c = 0;

    sl_cli_conn_init(conn, SL_CLI_DEFAULT_SERVER);
    *json = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
        if (c == 'J') {
            *json = 1;
        } else if (c == 'h') {
            fputs(usage_text, stdout);
            sl_cli_conn_help(stdout, SL_CLI_DEFAULT_SERVER);
            return 0;
        } else if (!sl_cli_conn_option(conn, c, optarg)) {
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    return -1;
}

static const char workflow_usage[] =
    "usage: sluice workflow list [--json] [--server URL] [--token T]\n"
    "       sluice workflow define FILE [--server URL] [--token T]\n"
    "       sluice workflow delete NAME [--server URL] [--token T]\n"
    "\n"
    "list    the workflows of the server, a name a line (--json: as the\n"
    "        server lists them)\n"
    "define  adds or replaces the workflow in FILE (JSON); the server checks\n"
    "        it and refuses a mistake with the field that is wrong\n"
    "delete  removes a workflow no job uses\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error, 3 server\n"
    "unreachable.\n"
    "options:\n";

int
sl_cli_workflow_main(int argc, char **argv)
{
    static const char prog[] = "sluice workflow";
    struct sl_cli_conn conn;
    const char *cmd = NULL;
    int json = 0;
    int n = 0;
    int rc = parse(argc, argv, workflow_usage, &conn, &json);

    if (rc >= 0) {
        return rc;
    }
    n = argc - optind;
    cmd = n > 0 ? argv[optind] : "";
    if (!((strcmp(cmd, "list") == 0 && n == 1) ||
          ((strcmp(cmd, "define") == 0 || strcmp(cmd, "delete") == 0) &&
           n == 2))) {
        fprintf(stderr,
                "%s: expected 'list', 'define FILE' or 'delete NAME' "
                "(sluice workflow --help)\n",
                prog);
        return EXIT_USAGE;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        return 1;
    }
    if (strcmp(cmd, "list") == 0) {
        rc = sl_cli_defs_list(&conn, prog, "workflows", json);
    } else if (strcmp(cmd, "define") == 0) {
        rc = sl_cli_defs_define(&conn, prog, "workflows", argv[optind + 1]);
    } else {
        rc = sl_cli_defs_delete(&conn, prog, "workflows", argv[optind + 1], 0);
    }
    curl_global_cleanup();
    return rc;
}

static const char index_usage[] =
    "usage: sluice index list [--json] [--server URL] [--token T]\n"
    "       sluice index delete NAME [--server URL] [--token T]\n"
    "\n"
    "list    the indexes of the server with their document counts\n"
    "        (--json: as the server lists them)\n"
    "delete  removes the index NAME and its files; refused while a run\n"
    "        writes it\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error, 3 server\n"
    "unreachable.\n"
    "options:\n";

static int
index_list(const struct sl_cli_conn *conn, const char *prog, int json)
{
    json_t *reply = NULL;
    const json_t *ix = NULL;
    size_t i = 0;
    int rc = sl_cli_call(conn, prog, "GET", "/smila/index/", NULL, &reply);

    if (rc != 0) {
        return rc;
    }
    if (json) {
        print_json(reply);
    } else {
        json_array_foreach(json_object_get(reply, "indexes"), i, ix)
        {
            printf("%s  %lld documents\n",
                   json_string_value(json_object_get(ix, "name")),
                   (long long)json_integer_value(
                       json_object_get(ix, "documentCount")));
        }
    }
    json_decref(reply);
    return 0;
}

int
sl_cli_index_main(int argc, char **argv)
{
    static const char prog[] = "sluice index";
    struct sl_cli_conn conn;
    const char *cmd = NULL;
    int json = 0;
    int n = 0;
    int rc = parse(argc, argv, index_usage, &conn, &json);

    if (rc >= 0) {
        return rc;
    }
    n = argc - optind;
    cmd = n > 0 ? argv[optind] : "";
    if (!((strcmp(cmd, "list") == 0 && n == 1) ||
          (strcmp(cmd, "delete") == 0 && n == 2))) {
        fprintf(stderr,
                "%s: expected 'list' or 'delete NAME' (sluice index "
                "--help)\n",
                prog);
        return EXIT_USAGE;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        return 1;
    }
    if (strcmp(cmd, "list") == 0) {
        rc = index_list(&conn, prog, json);
    } else {
        char *ename = curl_easy_escape(NULL, argv[optind + 1], 0);
        char *path = sl_asprintf("/smila/index/%s/", ename);
        json_t *reply = NULL;

        rc = sl_cli_call(&conn, prog, "DELETE", path, NULL, &reply);
        if (rc == 0) {
            printf("index %s deleted\n", argv[optind + 1]);
        }
        json_decref(reply);
        sl_free(path);
        curl_free(ename);
    }
    curl_global_cleanup();
    return rc;
}
