/* The subcommands; each parses its own options and returns an exit status. */
#ifndef GS_CLI_COMMANDS_H
#define GS_CLI_COMMANDS_H

int gs_cmd_sort(int argc, char **argv);
int gs_cmd_check(int argc, char **argv);
int gs_cmd_scan(int argc, char **argv);
int gs_cmd_reduce(int argc, char **argv);
int gs_cmd_gen(int argc, char **argv);
int gs_cmd_bench(int argc, char **argv);
int gs_cmd_devices(int argc, char **argv);

/* Prints the full help to stdout. */
void gs_print_help(void);
void gs_print_version(void);

#endif
