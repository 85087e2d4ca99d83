/*
 * help.h - the command line's usage text (help.c).
 */
#ifndef STALL_CLI_HELP_H
#define STALL_CLI_HELP_H

#include <stdio.h>

/* `stallsim --help COMMAND`: its usage and its options. Returns 0, or 2
 * (said on stderr) for an unknown command. */
int cli_help_command(const char *name, FILE *f);

/* `stallsim --help`: every command, the semantics and the INI keys. */
void cli_usage(FILE *f);

#endif
