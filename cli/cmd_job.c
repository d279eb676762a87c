/*
 * `sluice job` (docs/tutorial.md, docs/cli.md): start a job run over the
 * REST API and follow it with a live progress line (also a run that is
 * already going), cancel it, show the state of a job's current or last
 * run, list what happened to its documents; list, define and delete jobs
 * (cmd_defs.c).
 *
 * With --wait, `start` waits for the run to end and, when the job pushes
 * to a processing job of the same server (parameter jobToPushTo), until
 * that job has indexed everything: the bulkbuilder holds no open or
 * pending bulk for it and it has no active workflow run.  Ctrl-C stops
 * the following, never the run.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli/cli.h"

#define EXIT_USAGE       2
#define EXIT_INTERRUPTED 130 /* Ctrl-C while following: the run goes on */
#define POLL_MS          250

struct args {
    const char *cmd; /* "start", "status", "report", "follow", ... */
    struct sl_cli_conn conn;
    const char *job;   /* the job, or the file of `define` */
    const char *run;   /* report, follow, cancel: the run, or NULL (current,
                          else last) */
    const char *state; /* report: only documents in this state */
    const char *mode;  /* NULL: the workflow's default */
    int wait;
    int json;
    int purge;          /* delete --purge */
    unsigned timeout_s; /* 0: none */
};

static volatile sig_atomic_t interrupted;

static void
on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char prog_start[] = "sluice job start";
static const char prog_status[] = "sluice job status";
static const char prog_job[] = "sluice job";

static void
usage(FILE *out)
{
    fprintf(
        out,
        "usage: sluice job list [--json]\n"
        "       sluice job define FILE\n"
        "       sluice job delete JOB [--purge]\n"
        "       sluice job start JOB [--mode runOnce|standard|continuous] "
        "[--wait]\n"
        "                  [--timeout SECONDS]\n"
        "       sluice job follow JOB [RUN] [--timeout SECONDS]\n"
        "       sluice job cancel JOB [RUN]\n"
        "       sluice job pause JOB [RUN] | resume JOB [RUN]\n"
        "       sluice job status JOB [--json]\n"
        "       sluice job report JOB [RUN] [--failed | --state STATE] "
        "[--json]\n"
        "       (each with [--server URL] [--token T])\n"
        "\n"
        "list    the jobs, with the run going and the number of ended runs\n"
        "        (--json: as the server lists them)\n"
        "define  adds or replaces the job in FILE (JSON); a mistake is "
        "refused\n"
        "        with the field that is wrong\n"
        "delete  removes JOB; --purge also removes its documents from the\n"
        "        indexes (its dataSource)\n"
        "start   starts a run of JOB and prints its id.  With --wait it shows "
        "a\n"
        "        progress line (state, tasks done/total, records crawled and\n"
        "        pushed, rate, then documents indexed of those pushed) until\n"
        "        the run ends and the job it pushes to (jobToPushTo) has\n"
        "        indexed everything; when JOB has a run going already, it\n"
        "        follows that run.  Exits 1 if the run FAILED or was CANCELED\n"
        "        (or --timeout passed).\n"
        "follow  the same for RUN (default: the run going, else the last)\n"
        "cancel  cancels RUN (default: the run going)\n"
        "pause   no task of RUN (default: the run going) is handed out until\n"
        "        resume; those in progress finish\n"
        "status  prints the state and counters of JOB's current or last "
        "run,\n"
        "        and its schedule's next start\n"
        "        (--json: the run data as the server gives it).\n"
        "report  prints what happened to the documents of a run of JOB (the\n"
        "        current or last one unless RUN is given): the counts by "
        "state,\n"
        "        then one line per recorded document: state, id, worker,\n"
        "        reason and message (--json: the counts as one JSON object,\n"
        "        then one JSON object per document, a line each).\n"
        "\n"
        "options:\n");
    sl_cli_conn_help(out, SL_CLI_DEFAULT_SERVER);
    fprintf(out,
            "  -m, --mode MODE    runOnce, standard or continuous "
            "(default: the workflow's)\n"
            "  -w, --wait         follow the "
            "run until it ends\n"
            "  -t, --timeout S    give up "
            "waiting after S seconds (exit "
            "1)\n"
            "      --json         status, report: "
            "print JSON\n"
            "      --failed       report: "
            "only failed documents\n"
            "      --purge        delete: "
            "purge the job's documents too\n"
            "      --state STATE  report: new, "
            "changed, deleted, failed or skipped\n"
            "  -h, --help         this help\n"
            "\n"
            "Ctrl-C while following stops the following, not the run "
            "(exit 130).\n"
            "Exit status: 0 success, 1 "
            "failure, 2 usage error, 3 server unreachable.\n");
}

static int check_operands(int n, char **v, struct args *a);

static int
parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        SL_CLI_CONN_OPTIONS,
        {"mode", required_argument, NULL, 'm'},
        {"wait", no_argument, NULL, 'w'},
        {"timeout", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'J'},
        {"failed", no_argument, NULL, 'F'},
        {"state", required_argument, NULL, 'S'},
        {"purge", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t v = 0;
    int c = 0;

    memset(a, 0, sizeof(*a));
    sl_cli_conn_init(&a->conn, SL_CLI_DEFAULT_SERVER);
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:m:wt:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (strcmp(optarg, "runOnce") != 0 &&
                strcmp(optarg, "standard") != 0 &&
                strcmp(optarg, "continuous") != 0) {
                fprintf(stderr,
                        "sluice job: --mode must be runOnce, standard or "
                        "continuous, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            a->mode = optarg;
            break;
        case 'w':
            a->wait = 1;
            break;
        case 't':
            if (sl_parse_u64(optarg, &v) != 0 || v == 0 || v > 864000) {
                fprintf(stderr,
                        "sluice job: --timeout must be 1 to 864000 seconds, "
                        "not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            a->timeout_s = (unsigned)v;
            break;
        case 'J':
            a->json = 1;
            break;
        case 'F':
            a->state = "failed";
            break;
        case 'S':
            a->state = optarg;
            break;
        case 'P':
            a->purge = 1;
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
    return check_operands(argc - optind, argv + optind, a);
}

/* The sub-command and its operands; -1 or EXIT_USAGE. */
static int
check_operands(int n, char **v, struct args *a)
{
    static const char *const with_run[] = {
        "report", "follow", "cancel", "pause", "resume"};
    static const char *const with_job[] = {"start",
                                           "status",
                                           "delete",
                                           "report",
                                           "follow",
                                           "cancel",
                                           "pause",
                                           "resume"};
    int run_ok = 0;
    int job_ok = 0;
    size_t i = 0;

    for (i = 0; n > 0 && i < sizeof(with_run) / sizeof(with_run[0]); i++) {
        run_ok |= strcmp(v[0], with_run[i]) == 0;
    }
    for (i = 0; n > 0 && i < sizeof(with_job) / sizeof(with_job[0]); i++) {
        job_ok |= strcmp(v[0], with_job[i]) == 0;
    }
    if (n == 1 && strcmp(v[0], "list") == 0) {
        a->cmd = v[0];
        return -1;
    }
    if (n == 2 && strcmp(v[0], "define") == 0) {
        a->cmd = v[0];
        a->job = v[1]; /* the file */
        return -1;
    }
    if (!job_ok || n < 2 || n > (run_ok ? 3 : 2)) {
        fprintf(stderr,
                "sluice job: expected list, define FILE, or start, follow, "
                "cancel, pause, resume, status, report or delete with a JOB "
                "(sluice job --help)\n");
        return EXIT_USAGE;
    }
    a->cmd = v[0];
    a->job = v[1];
    a->run = n == 3 ? v[2] : NULL;
    if (sl_name_check_entity(a->job, NULL) != 0) {
        fprintf(stderr, "sluice job: invalid job name '%s'\n", a->job);
        return EXIT_USAGE;
    }
    return -1;
}

/* GET @path as JSON; NULL (printed) unless the status is 2xx. */
static json_t *
get(const struct args *a, const char *prog, const char *path)
{
    json_t *j = NULL;

    (void)sl_cli_call(&a->conn, prog, "GET", path, NULL, &j);
    return j;
}

static json_t *
get_run(const struct args *a, const char *prog, const char *job, const char *id)
{
    char *path = sl_asprintf("/smila/jobmanager/jobs/%s/%s/", job, id);
    json_t *j = get(a, prog, path);

    sl_free(path);
    return j;
}

/* Sum of the worker counters named @name, over every action. */
static double
counter_sum(const json_t *run, const char *name)
{
    const char *k = NULL;
    json_t *w = NULL;
    double sum = 0;

    json_object_foreach(json_object_get((json_t *)run, "worker"), k, w)
    {
        sum += json_number_value(json_object_get(w, name));
    }
    return sum;
}

static json_int_t
task_count(const json_t *run, const char *name)
{
    return json_integer_value(
        json_object_get(json_object_get(run, "tasks"), name));
}

/* Tasks that are over, whatever their end. */
static json_int_t
tasks_done(const json_t *run)
{
    return task_count(run, "successfulTaskCount") +
           task_count(run, "failedWithoutRetryTaskCount") +
           task_count(run, "failedAfterRetryTaskCount") +
           task_count(run, "obsoleteTaskCount") +
           task_count(run, "cancelledTaskCount");
}

static double
mono_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The progress line: redrawn in place on a terminal (@tty), a line every
 * few seconds elsewhere; @final ends it with a newline. */
static void
progress(
    const json_t *run, double elapsed, int tty, int final, const char *extra)
{
    /* files of the fileCrawler (written, or found up to date by its delta
     * pre-check), pages of the webCrawler */
    double crawled = counter_sum(run, "files.records") +
                     counter_sum(run, "files.uptodate") +
                     counter_sum(run, "records.crawled");
    double pushed = counter_sum(run, "records.pushed");
    double deleted = counter_sum(run, "records.deleted");

    fprintf(stderr,
            "%s%-10s tasks %lld/%lld  crawled %.0f  pushed %.0f  deleted "
            "%.0f  %.0f rec/s  %.1fs%s%s",
            tty ? "\r" : "",
            json_string_value(json_object_get(run, "state")),
            (long long)tasks_done(run),
            (long long)task_count(run, "createdTaskCount"),
            crawled,
            pushed,
            deleted,
            elapsed >= 0.5 ? crawled / elapsed : 0.0, /* no rate yet */
            elapsed,
            extra != NULL ? extra : "",
            !tty    ? "\n"
            : final ? "\033[K\n"
                    : "\033[K");
}

/* Records the indexWriter of processing run @run is done with: indexed,
 * deleted, or skipped as stale or invalid. */
static double
index_done(const json_t *run)
{
    static const char *const names[] = {"records.indexed",
                                        "records.deleted",
                                        "records.stale",
                                        "records.invalid"};
    const char *k = NULL;
    json_t *w = NULL;
    double sum = 0;
    size_t i = 0;

    json_object_foreach(json_object_get((json_t *)run, "worker"), k, w)
    {
        if (strstr(k, "_indexWriter") == NULL) {
            continue;
        }
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            sum += json_number_value(json_object_get(w, names[i]));
        }
    }
    return sum;
}

static int
final_state(const char *s)
{
    return s != NULL &&
           (strcmp(s, "SUCCEEDED") == 0 || strcmp(s, "FAILED") == 0 ||
            strcmp(s, "CANCELED") == 0);
}

/*
 * Has processing job @target caught up?  1 yes, 0 not yet, -1 error.
 * *done (when not NULL): what its indexWriter is done with so far.
 */
static int
target_idle(const struct args *a, const char *target, double *done)
{
    json_t *bb = get(a, prog_start, "/smila/bulkbuilder/");
    json_t *info = NULL;
    json_t *run = NULL;
    json_t *j = NULL;
    const char *cur = NULL;
    char *path = NULL;
    size_t i = 0;
    int idle = 1;

    if (bb == NULL) {
        return -1;
    }
    json_array_foreach(json_object_get(bb, "jobs"), i, j)
    {
        if (strcmp(json_string_value(json_object_get(j, "job")), target) == 0 &&
            (json_integer_value(json_object_get(j, "openRecords")) != 0 ||
             json_integer_value(json_object_get(j, "pendingBulks")) != 0)) {
            idle = 0;
        }
    }
    json_decref(bb);
    if (!idle) {
        return 0;
    }
    path = sl_asprintf("/smila/jobmanager/jobs/%s/", target);
    info = get(a, prog_start, path);
    sl_free(path);
    cur = json_string_value(
        json_object_get(json_object_get(info, "runs"), "current"));
    if (cur == NULL) {
        json_decref(info);
        return 1; /* not running: nothing more will happen */
    }
    run = get_run(a, prog_start, target, cur);
    if (run != NULL && done != NULL) {
        *done = index_done(run);
    }
    idle =
        run != NULL &&
        json_integer_value(json_object_get(json_object_get(run, "workflowRuns"),
                                           "activeWorkflowRunCount")) == 0;
    json_decref(run);
    json_decref(info);
    return idle;
}

/* Whether run @run deleted what its crawl did not see, and if not, why. */
static void
print_completion(FILE *out, const json_t *run)
{
    const json_t *c = json_object_get(run, "completion");
    const char *why = json_string_value(json_object_get(c, "skipped"));

    if (why != NULL) {
        fprintf(out, "  completion skipped, nothing deleted: %s\n", why);
    } else if (json_is_true(json_object_get(c, "ran"))) {
        fprintf(out, "  completion ran (delta-delete)\n");
    }
}

/* Ctrl-C while following: say that the run goes on and how to follow
 * it again. */
static int
stop_following(const struct args *a, const char *run_id, int tty)
{
    fprintf(stderr,
            "%ssluice job: stopped following; run %s of job %s goes on "
            "(sluice job follow %s %s)\n",
            tty ? "\n" : "",
            run_id,
            a->job,
            a->job,
            run_id);
    return EXIT_INTERRUPTED;
}

static void
print_errors(const json_t *run)
{
    json_t *e = NULL;
    size_t i = 0;

    json_array_foreach(json_object_get(run, "errors"), i, e)
    {
        char *t = json_dumps(e, JSON_COMPACT);

        fprintf(stderr, "  error: %s\n", t != NULL ? t : "?");
        sl_free(t);
    }
}

/*
 * Follow run @run_id of a->job until it ends and, when @target is set,
 * until that processing job has indexed what the run pushed.  0 when the
 * run SUCCEEDED (and was indexed), 1 otherwise, EXIT_INTERRUPTED on
 * Ctrl-C (the run goes on).
 */
static int
follow(const struct args *a, const char *run_id, const char *target)
{
    int tty = isatty(STDERR_FILENO);
    double t0 = mono_s();
    double last_print = 0;
    double base = 0; /* the target's indexWriter count when we began */
    double done = 0;
    json_t *run = NULL;
    const char *state = NULL;
    int quiet_checks = 0;
    int rc = 1;
    struct sigaction sa;
    struct sigaction old;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    (void)sigaction(SIGINT, &sa, &old);
    if (target != NULL && target_idle(a, target, &base) < 0) {
        base = 0;
    }
    for (;;) {
        double now = mono_s();

        json_decref(run);
        run = get_run(a, prog_job, a->job, run_id);
        if (run == NULL) {
            goto out;
        }
        state = json_string_value(json_object_get(run, "state"));
        if (final_state(state)) {
            break;
        }
        if (interrupted) {
            rc = stop_following(a, run_id, tty);
            goto out;
        }
        if (tty || now - last_print >= 5.0) {
            progress(run, now - t0, tty, 0, NULL);
            last_print = now;
        }
        if (a->timeout_s != 0 && now - t0 > a->timeout_s) {
            fprintf(stderr, "%ssluice job: timed out\n", tty ? "\n" : "");
            goto out;
        }
        (void)usleep(POLL_MS * 1000);
    }
    rc = strcmp(state, "SUCCEEDED") == 0 ? 0 : 1;
    /* Wait for the processing job to index what was pushed. */
    while (rc == 0 && target != NULL) {
        double pushed = counter_sum(run, "records.pushed") +
                        counter_sum(run, "records.deleted");
        int idle = target_idle(a, target, &done);
        double now = mono_s();
        char extra[96];

        if (idle < 0) {
            rc = 1;
            break;
        }
        quiet_checks = idle ? quiet_checks + 1 : 0;
        if (quiet_checks >= 2) {
            break;
        }
        if (interrupted) {
            rc = stop_following(a, run_id, tty);
            goto out;
        }
        (void)snprintf(extra,
                       sizeof(extra),
                       "  indexing: %.0f of %.0f",
                       done - base < pushed ? done - base : pushed,
                       pushed);
        if (tty || now - last_print >= 5.0) {
            progress(run, now - t0, tty, 0, extra);
            last_print = now;
        }
        if (a->timeout_s != 0 && now - t0 > a->timeout_s) {
            fprintf(stderr, "%ssluice job: timed out\n", tty ? "\n" : "");
            rc = 1;
            break;
        }
        (void)usleep(POLL_MS * 1000);
    }
    progress(
        run, mono_s() - t0, tty, 1, rc == 0 && target ? "  indexed" : NULL);
    print_completion(stderr, run);
    if (rc != 0) {
        print_errors(run);
    }
out:
    (void)sigaction(SIGINT, &old, NULL);
    json_decref(run);
    return rc;
}

/* The processing job run @job pushes to (its jobToPushTo), or NULL. */
static char *
push_target(const struct args *a, const char *job)
{
    char *path = sl_asprintf("/smila/jobmanager/jobs/%s/", job);
    json_t *info = get(a, prog_job, path);
    const char *t = json_string_value(
        json_object_get(json_object_get(info, "parameters"), "jobToPushTo"));
    char *target = t != NULL ? sl_strdup(t) : NULL;

    json_decref(info);
    sl_free(path);
    return target;
}

/* The run @a->run, else the job's current run, else (@last) its newest
 * ended one, in @out; 0, or 1 (printed). */
static int
pick_run(const struct args *a, int last, char *out, size_t cap)
{
    char *path = NULL;
    json_t *info = NULL;
    const json_t *runs = NULL;
    const json_t *done = NULL;
    const char *id = a->run;

    if (id == NULL) {
        path = sl_asprintf("/smila/jobmanager/jobs/%s/", a->job);
        info = get(a, prog_job, path);
        sl_free(path);
        if (info == NULL) {
            return 1;
        }
        runs = json_object_get(info, "runs");
        done = json_object_get(runs, "completed");
        id = json_string_value(json_object_get(runs, "current"));
        if (id == NULL && last && json_array_size(done) > 0) {
            id = json_string_value(
                json_array_get(done, json_array_size(done) - 1));
        }
    }
    if (id == NULL) {
        fprintf(stderr, "sluice job: job %s has no run going\n", a->job);
        json_decref(info);
        return 1;
    }
    (void)snprintf(out, cap, "%s", id);
    json_decref(info);
    return 0;
}

static int
job_follow(const struct args *a)
{
    char run[128];
    char *target = NULL;
    int rc = pick_run(a, 1, run, sizeof(run));

    if (rc != 0) {
        return rc;
    }
    target = push_target(a, a->job);
    rc = follow(a, run, target);
    sl_free(target);
    return rc;
}

/* cancel, pause or resume (a->cmd) the run a->run, else the run going */
static int
job_action(const struct args *a)
{
    char run[128];
    char *path = NULL;
    json_t *reply = NULL;
    int rc = pick_run(a, 0, run, sizeof(run));

    if (rc != 0) {
        return rc;
    }
    path = sl_asprintf("/smila/jobmanager/jobs/%s/%s/%s", a->job, run, a->cmd);
    rc = sl_cli_call(&a->conn, prog_job, "POST", path, "{}", &reply);
    if (rc == 0) {
        printf("run %s of job %s %s\n",
               run,
               a->job,
               strcmp(a->cmd, "cancel") == 0  ? "canceled"
               : strcmp(a->cmd, "pause") == 0 ? "paused"
                                              : "resumed");
    }
    json_decref(reply);
    sl_free(path);
    return rc;
}

static int
job_start(const struct args *a)
{
    char *path = sl_asprintf("/smila/jobmanager/jobs/%s/", a->job);
    char *url = sl_cli_url(a->conn.server, path);
    json_t *body =
        a->mode ? json_pack("{s:s}", "mode", a->mode) : json_object();
    char *text = json_dumps(body, JSON_COMPACT);
    json_t *reply = NULL;
    char *target = NULL;
    char run[128];
    long status = 0;
    int rc = 1;

    reply =
        sl_cli_http_json(prog_start, "POST", url, a->conn.token, text, &status);
    if (reply == NULL) {
        goto out;
    }
    if (status == 409 && a->wait && pick_run(a, 0, run, sizeof(run)) == 0) {
        /* a run is going: follow it rather than fail */
        fprintf(stderr,
                "sluice job start: job %s has run %s going; following it\n",
                a->job,
                run);
    } else if (status != 200) {
        sl_cli_print_error(prog_start, status, reply);
        goto out;
    } else {
        (void)snprintf(run,
                       sizeof(run),
                       "%s",
                       json_string_value(json_object_get(reply, "jobId")));
    }
    printf("%s\n", run);
    (void)fflush(stdout);
    rc = 0;
    if (a->wait) {
        target = push_target(a, a->job);
        rc = follow(a, run, target);
    }
out:
    sl_free(target);
    json_decref(reply);
    json_decref(body);
    sl_free(text);
    sl_free(url);
    sl_free(path);
    return rc;
}

/* The schedule of a job's info (GET /smila/jobmanager/jobs/JOB/), if any. */
static void
print_schedule(const char *job, const json_t *sch)
{
    const char *next = json_string_value(json_object_get(sch, "nextStart"));
    const char *wend = json_string_value(json_object_get(sch, "windowEnd"));

    if (sch == NULL) {
        return;
    }
    printf("job %s schedule (%s): next start %s",
           job,
           json_string_value(json_object_get(sch, "timeZone")),
           next != NULL ? next : "none");
    if (wend != NULL) {
        printf(", window open until %s", wend);
    }
    printf("; started %lld, skipped %lld, missed %lld\n",
           (long long)json_integer_value(json_object_get(sch, "started")),
           (long long)json_integer_value(json_object_get(sch, "skipped")),
           (long long)json_integer_value(json_object_get(sch, "missed")));
}

static int
job_status(const struct args *a)
{
    char *path = sl_asprintf("/smila/jobmanager/jobs/%s/", a->job);
    json_t *info = get(a, prog_status, path);
    json_t *runs = json_object_get(info, "runs");
    json_t *done = json_object_get(runs, "completed");
    const char *id = json_string_value(json_object_get(runs, "current"));
    json_t *run = NULL;
    char *text = NULL;
    int rc = 1;

    sl_free(path);
    if (info == NULL) {
        return 1;
    }
    if (id == NULL && json_array_size(done) > 0) {
        id = json_string_value(json_array_get(done, json_array_size(done) - 1));
    }
    if (!a->json) {
        print_schedule(a->job, json_object_get(info, "scheduling"));
    }
    if (id == NULL) {
        printf("job %s: no run yet\n", a->job);
        json_decref(info);
        return 0;
    }
    run = get_run(a, prog_status, a->job, id);
    if (run == NULL) {
        goto out;
    }
    if (a->json) {
        text = json_dumps(run, JSON_INDENT(2));
        printf("%s\n", text);
        sl_free(text);
        rc = 0;
        goto out;
    }
    printf("job %s run %s: %s%s (%s)\n",
           a->job,
           id,
           json_string_value(json_object_get(run, "state")),
           json_is_true(json_object_get(run, "paused")) ? ", paused" : "",
           json_string_value(json_object_get(run, "runMode")));
    printf("  started %s",
           json_string_value(json_object_get(run, "startTime")));
    if (json_is_string(json_object_get(run, "endTime"))) {
        printf(", ended %s",
               json_string_value(json_object_get(run, "endTime")));
    }
    printf("\n  tasks %lld done of %lld created, %lld failed\n",
           (long long)tasks_done(run),
           (long long)task_count(run, "createdTaskCount"),
           (long long)(task_count(run, "failedWithoutRetryTaskCount") +
                       task_count(run, "failedAfterRetryTaskCount")));
    {
        static const char *const names[][2] = {
            {"files.records", "crawled"},
            {"files.uptodate", "up to date"},
            {"records.crawled", "pages"},
            {"records.pushed", "pushed"},
            {"records.deleted", "deleted"},
            {"records.indexed", "indexed"},
        };
        const char *sep = "  records";
        size_t i = 0;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            double v = counter_sum(run, names[i][0]);

            if (v > 0) {
                printf("%s %s %.0f", sep, names[i][1], v);
                sep = ",";
            }
        }
        if (sep[0] == ',') {
            printf("\n");
        }
    }
    print_completion(stdout, run);
    rc = 0;
out:
    json_decref(run);
    json_decref(info);
    return rc;
}

int
sl_cli_job_main(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);

    if (rc >= 0) {
        return rc;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "sluice job: cannot initialise libcurl\n");
        return 1;
    }
    if (strcmp(a.cmd, "start") == 0) {
        rc = job_start(&a);
    } else if (strcmp(a.cmd, "follow") == 0) {
        rc = job_follow(&a);
    } else if (strcmp(a.cmd, "cancel") == 0 || strcmp(a.cmd, "pause") == 0 ||
               strcmp(a.cmd, "resume") == 0) {
        rc = job_action(&a);
    } else if (strcmp(a.cmd, "report") == 0) {
        rc = sl_cli_job_report(&a.conn, a.job, a.run, a.state, a.json);
    } else if (strcmp(a.cmd, "list") == 0) {
        rc = sl_cli_defs_list(&a.conn, prog_job, "jobs", a.json);
    } else if (strcmp(a.cmd, "define") == 0) {
        rc = sl_cli_defs_define(&a.conn, prog_job, "jobs", a.job);
    } else if (strcmp(a.cmd, "delete") == 0) {
        rc = sl_cli_defs_delete(&a.conn, prog_job, "jobs", a.job, a.purge);
    } else {
        rc = job_status(&a);
    }
    curl_global_cleanup();
    return rc;
}
