/* toolconf.c - see toolconf.h. Gradle, which reads Maven repositories by
 * its own build scripts, is not pointed here (an init script would be the
 * way); under packages egress its own repositories stay closed. */
#define _GNU_SOURCE
#include "sandbox/toolconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/gateway.h"
#include "net/netns.h"
#include "sandbox/mounts.h"

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

int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
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
