/* profile_export.c - `sbxrun profile export NAME --format kube|seccomp`:
 * the command's front end. The text (Kubernetes YAML or an OCI seccomp
 * profile) comes from the cluster export (cluster.c); it goes to stdout or
 * to a file written under a temporary name and renamed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cluster/cluster.h"

static const char usage[] =
	"usage: sbxrun profile export NAME [--format kube|seccomp] [--kind job|pod]\n"
	"                             [--image-ref REF] [-o FILE]\n"
	"Writes the profile as a Kubernetes Job or Pod (with its NetworkPolicy and,\n"
	"for egress = packages, the proxy sidecar), or as an OCI seccomp profile.\n";

/* Writes text to path (temp name in the same directory, then rename), or to
 * stdout when path is NULL. */
static int write_output(const char *path, const char *text, struct sbx_err *err)
{
	if (!path) {
		if (fputs(text, stdout) < 0 || fflush(stdout) != 0)
			return err_sys(err, "write to stdout");
		return 0;
	}
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "create '%s'", tmp);
	int r = 0;
	if (write_all(fd, text, strlen(text)) < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0)
		r = err_sys(err, "write '%s'", path);
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = err_sys(err, "write '%s'", path);
	if (r < 0)
		unlink(tmp);
	return r;
}

/* `profile export NAME --opt...` is `profile export --profile NAME --opt...`
 * for the table-driven parser (which stops at the first operand). */
static char **with_profile_option(int argc, char **argv, int *nargc)
{
	char **v = xcalloc((size_t)argc + 3, sizeof(char *));
	int n = 0;

	v[n++] = (char *)"profile export";
	if (argc > 1 && argv[1][0] != '-') {
		v[n++] = (char *)"--profile";
		v[n++] = argv[1];
		for (int i = 2; i < argc; i++)
			v[n++] = argv[i];
	} else {
		for (int i = 1; i < argc; i++)
			v[n++] = argv[i];
	}
	*nargc = n;
	return v;
}

int cmd_profile_export(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	int nargc, rest;
	_cleanup_free_ char **nargv = with_profile_option(argc, argv, &nargc);

	int r = cli_sandbox_config(nargc, nargv, SBX_CMD_PROFILE_EXPORT, usage, &cfg, &rest, err);
	if (r != 0) {
		config_free(&cfg);
		return r < 0 ? -1 : 0;
	}
	const char *given = cfg.origin[SBX_K_PROFILE];
	/* after `--`: the main container's command (kube only) */
	int dashdash = rest > 0 && rest <= nargc && !strcmp(nargv[rest - 1], "--");
	if ((rest != nargc && !dashdash) || !given || strcmp(given, "command line") != 0)
		r = err_set(err, 0, "usage: sbxrun profile export NAME [--format kube|seccomp] [--kind job|pod] [--image-ref REF] [-o FILE]");
	else if (cfg.export_format == SBX_EXPORT_SECCOMP && rest != nargc)
		r = err_set(err, 0, "--format seccomp: takes no command");
	else {
		_cleanup_free_ char *text = NULL;
		r = cluster_export(&cfg, (const char *const *)nargv + rest, &text, err);
		if (r == 0)
			r = write_output(cfg.output, text, err);
	}
	config_free(&cfg);
	return r;
}
