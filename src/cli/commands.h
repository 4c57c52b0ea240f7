/* The subcommands; each parses its own options and returns a status (gpusort_status_class
 * of it is the exit code). */
#ifndef GS_CLI_COMMANDS_H
#define GS_CLI_COMMANDS_H

int cli_sort(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_scan(int argc, char **argv);
int cli_reduce(int argc, char **argv);
/* select, partition, unique, rle and reduce-by-key: the one named by argv[0]. */
int cli_compact(int argc, char **argv);
int cli_gen(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_devices(int argc, char **argv);

/* The commands' names, NULL-terminated ("help" last). */
extern const char *const cli_command_names[];

/* Prints the help of `command` to stdout: its usage, options and the options of every
 * command; NULL (or an unknown name): the whole help. */
void cli_print_help(const char *command);
void cli_print_version(void);

#endif
