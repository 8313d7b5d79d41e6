/* run_cmd.c - `sbxrun run`: placeholder until Foundation II lands. */
#include "commands.h"

int cmd_run(int argc, char **argv, struct sbx_err *err)
{
	(void)argc;
	(void)argv;
	return err_set(err, 0, "run: not built yet");
}
