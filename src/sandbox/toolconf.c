/* toolconf.c - see toolconf.h. */
#define _GNU_SOURCE
#include "sandbox/toolconf.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/gateway.h"

/* Cargo reads the replacement from a file only (source.* has no
 * variable); the protocol comes from CARGO_REGISTRIES_CRATES_IO_PROTOCOL
 * (netplan.c). A project's own .cargo/config.toml may name another
 * source: then the proxy, not this file, is what keeps it out. */
static const char cargo_conf[] =
	"# written by sbxrun at run time: crates.io through the package gateway ([packages] cargo)\n"
	"[source.crates-io]\n"
	"replace-with = \"sbxrun-gateway\"\n\n"
	"[source.sbxrun-gateway]\n"
	"registry = \"sparse+" GATEWAY_CARGO_URL "\"\n";

int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	if (!plan->net.gw_cargo)
		return 0;
	if (mkdirat(rootfd, ".cargo", 0755) < 0 && errno != EEXIST)
		return err_sys(err, "mkdir /.cargo");
	/* one component below the root, never through a symlink */
	_cleanup_close_ int dir = openat(rootfd, ".cargo", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int fd = dir < 0 ? -1 : openat(dir, "config.toml",
						       O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, cargo_conf, sizeof(cargo_conf) - 1) < 0)
		return err_sys(err, "write /.cargo/config.toml");
	return 0;
}
