/* image_cmd.c - placeholder. */
#include <string.h>

#include "commands.h"
#include "export.h"

int cmd_image(int argc, char **argv, struct sbx_err *err)
{
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return export_cmd(argc - 1, argv + 1, err);
	return err_set(err, 0, "image: not built yet");
}
