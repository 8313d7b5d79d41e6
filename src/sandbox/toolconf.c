/* toolconf.c - see toolconf.h. Gradle, which reads Maven repositories by
 * its own build scripts, is not pointed here (an init script would be the
 * way); under packages egress its own repositories stay closed. */
#define _GNU_SOURCE
#include "sandbox/toolconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/gateway.h"
#include "net/netns.h"
#include "sandbox/mounts.h"

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

static int cargo_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
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

static const char settings[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!-- written by sbxrun: Maven through the package gateway ([packages] maven) -->\n"
	"<settings>\n"
	"  <mirrors>\n"
	"    <mirror>\n"
	"      <id>sbxrun-gateway</id>\n"
	"      <name>sbxrun's package gateway</name>\n"
	"      <url>" GATEWAY_MAVEN_URL "</url>\n"
	"      <mirrorOf>*</mirrorOf>\n"
	"    </mirror>\n"
	"  </mirrors>\n"
	"  <proxies>\n"
	"    <proxy>\n"
	"      <id>sbxrun</id>\n"
	"      <active>true</active>\n"
	"      <protocol>http</protocol>\n"
	"      <host>127.0.0.1</host>\n"
	"      <port>%d</port>\n"
	"    </proxy>\n"
	"  </proxies>\n"
	"</settings>\n";

static int maven_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	char text[sizeof(settings) + 16];

	if (!plan->net.proxy || !plan->gw.maven_upstream || !plan->home)
		return 0;
	_cleanup_free_ char *dir = xasprintf("%s/.m2", strcmp(plan->home, "/") == 0 ? "" : plan->home);
	_cleanup_close_ int dfd = mounts_mkpath(rootfd, dir, 1, err);
	if (dfd < 0)
		return err_wrap(err, "Maven's settings for the package gateway");
	int n = snprintf(text, sizeof(text), settings, SBX_PROXY_PORT);
	_cleanup_close_ int fd = openat(dfd, "settings.xml", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST)
		return 0;  /* the image's own */
	if (fd < 0 || write_all(fd, text, (size_t)n) < 0)
		return err_sys(err, "write '%s/settings.xml'", dir);
	/* HOME's owner may write its repository below */
	_cleanup_close_ int rw = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (plan->uid_in != 0 && rw >= 0)
		(void)!fchown(rw, plan->uid_in, plan->gid_in), (void)!fchown(fd, plan->uid_in, plan->gid_in);
	return 0;
}

int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	return cargo_write(plan, rootfd, err) < 0 || maven_write(plan, rootfd, err) < 0 ? -1 : 0;
}
