/* image_cmd.c - placeholder. */
#include "commands.h"

int cmd_image(int argc, char **argv, struct sbx_err *err)
{
	(void)argc;
	(void)argv;
	return err_set(err, 0, "image: not built yet");
}
