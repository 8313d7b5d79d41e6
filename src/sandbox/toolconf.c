/* toolconf.c - see toolconf.h. */
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
#include "sandbox/nonroot.h"

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

const char *toolconf_cargo_text(void)
{
	return cargo_conf;
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
	"      <host>%s</host>\n"
	"      <port>%u</port>\n"
	"%s"
	"    </proxy>\n"
	"  </proxies>\n"
	"</settings>\n";

char *toolconf_maven_text(const struct toolconf_proxy *p)
{
	/* Maven puts the variable in when it reads the file */
	_cleanup_free_ char *auth = p->user ? xasprintf("      <username>%s</username>\n"
							"      <password>${env.%s}</password>\n",
							p->user, p->password_env) : xstrdup("");
	return xasprintf(settings, p->host, p->port, auth);
}

/* Gradle's repositories are its build scripts'; an init script sees each
 * as it is added (repositories.all), before anything resolves. A Maven
 * repository on http or https is read from the gateway, as Maven's
 * <mirrorOf>*</mirrorOf>; a local one (mavenLocal, file:) stays, an Ivy
 * one is the proxy's allow list's. Plugin management that names no
 * repository would use the Gradle Plugin Portal: the gateway instead. */
static const char gradle_init[] =
	"// written by sbxrun: Gradle through the package gateway ([packages] maven).\n"
	"// Every Maven repository on http(s) of every project, of its buildscript and\n"
	"// of the settings' plugin management is read from the gateway; Gradle reads\n"
	"// no http_proxy, so the JVM's proxy is set here.\n"
	"def sbxrunGateway = new URI('" GATEWAY_MAVEN_URL "')\n"
	"for (p in ['http', 'https']) {\n"
	"    System.setProperty(p + '.proxyHost', '%s')\n"
	"    System.setProperty(p + '.proxyPort', '%u')\n"
	"%s"
	"}\n"
	"def sbxrunPoint = { repos ->\n"
	"    repos.all { r ->\n"
	"        if (r instanceof MavenArtifactRepository && r.url?.scheme in ['http', 'https'] &&\n"
	"            r.url != sbxrunGateway) {\n"
	"            logger.info(\"sbxrun: repository '${r.name}' (${r.url}) read from the package gateway\")\n"
	"            r.url = sbxrunGateway\n"
	"            r.artifactUrls = []\n"
	"        }\n"
	"    }\n"
	"}\n"
	"settingsEvaluated { s ->\n"
	"    sbxrunPoint(s.pluginManagement.repositories)\n"
	"    if (s.pluginManagement.repositories.isEmpty())\n"
	"        s.pluginManagement.repositories.maven { url sbxrunGateway }\n"
	"}\n"
	"allprojects { p ->\n"
	"    sbxrunPoint(p.buildscript.repositories)\n"
	"    sbxrunPoint(p.repositories)\n"
	"}\n";

char *toolconf_gradle_text(const struct toolconf_proxy *p)
{
	_cleanup_free_ char *auth = p->user ? xasprintf("    System.setProperty(p + '.proxyUser', '%s')\n"
							"    System.setProperty(p + '.proxyPassword', "
							"System.getenv('%s') ?: '')\n",
							p->user, p->password_env) : xstrdup("");
	return xasprintf(gradle_init, p->host, p->port, auth);
}

/* text as BASE/SUB/NAME below rootfd, the directories made where missing;
 * a file there already is kept (how: O_EXCL) or replaced (O_TRUNC). With
 * an owner (not 0), SUB's directories and the file become its, so that it
 * writes its caches below. */
static int put(int rootfd, const char *base, const char *sub, const char *name, const char *text,
	       int how, uid_t uid, gid_t gid, struct sbx_err *err)
{
	_cleanup_free_ char *dir = xasprintf("%s/%s", strcmp(base, "/") == 0 ? "" : base, sub);
	_cleanup_close_ int dfd = mounts_mkpath(rootfd, dir, 1, err);
	if (dfd < 0)
		return err_wrap(err, "the package tools' settings for the gateway");
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | how | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST)
		return 0; /* the image's own */
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "write '%s/%s'", dir, name);
	if (uid == 0)
		return 0;
	(void)!fchown(fd, uid, gid);
	int d = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (const char *s = sub; d >= 0; s++) { /* each of SUB's components, upwards */
		(void)!fchown(d, uid, gid);
		if (!(s = strchr(s, '/'))) {
			close(d);
			break;
		}
		int up = openat(d, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(d);
		d = up;
	}
	return 0;
}

static int cargo_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	return plan->net.gw_cargo ? put(rootfd, "/", ".cargo", "config.toml", cargo_conf, O_TRUNC, 0, 0, err) : 0;
}

/* Maven's settings in HOME, Gradle's init script below GRADLE_USER_HOME
 * (an absolute one in envp), else HOME/.gradle. */
static int java_write(const struct sbx_plan *plan, int rootfd, const char *home, char *const *envp,
		      const struct toolconf_proxy *p, uid_t uid, gid_t gid, struct sbx_err *err)
{
	const char *gbase = home, *gsub = ".gradle/init.d";

	if (!plan->net.proxy || !plan->gw.maven_upstream || !home)
		return 0;
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, "GRADLE_USER_HOME=/", 18))
			gbase = *e + 17, gsub = "init.d";
	_cleanup_free_ char *m = toolconf_maven_text(p), *g = toolconf_gradle_text(p);
	return put(rootfd, home, ".m2", "settings.xml", m, O_EXCL, uid, gid, err) < 0 ||
	       put(rootfd, gbase, gsub, "sbxrun.gradle", g, O_EXCL, uid, gid, err) < 0 ? -1 : 0;
}

int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	const struct toolconf_proxy p = { SBX_PROXY_ADDR, SBX_PROXY_PORT, NULL, NULL };

	if (cargo_write(plan, rootfd, err) < 0 ||
	    java_write(plan, rootfd, plan->home, nonroot_env(plan, 0), &p, plan->uid_in, plan->gid_in, err) < 0)
		return -1;
	/* [sandbox] user: what the sandbox's root writes is the user's own in
	 * its user namespace */
	return plan->user.name ? java_write(plan, rootfd, plan->user.home, nonroot_env(plan, 1), &p, 0, 0, err) : 0;
}

int toolconf_write_home(const struct sbx_plan *plan, const char *home, unsigned port, struct sbx_err *err)
{
	const struct toolconf_proxy p = { SBX_PROXY_ADDR, port, NULL, NULL };
	_cleanup_close_ int fd = open(home, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return err_sys(err, "open '%s'", home);
	return cargo_write(plan, fd, err) < 0 || java_write(plan, fd, "/", NULL, &p, 0, 0, err) < 0 ? -1 : 0;
}
