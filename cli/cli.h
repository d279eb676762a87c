/*
 * The sluice command line: one entry point per sub-command.  Each takes the
 * sub-command's argv (argv[0] is the sub-command name) and returns the
 * process exit status (0 success, 1 failure, 2 usage error).
 */
#ifndef SL_CLI_H_INCLUDED
#define SL_CLI_H_INCLUDED

/** @brief `sluice serve`: run the server until SIGINT/SIGTERM. */
int sl_cli_serve_main(int argc, char **argv);
/** @brief `sluice bulk cat|count|from-jsonl`: inspect and build bulks. */
int sl_cli_bulk_main(int argc, char **argv);

#endif /* SL_CLI_H_INCLUDED */
