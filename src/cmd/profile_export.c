/* profile_export.c - `sbxrun profile export NAME --format kube|seccomp`:
 * a resolved profile as what other engines read, Kubernetes YAML
 * (cmd/kube_yaml.c) or an OCI seccomp profile (sandbox/seccomp_export.c),
 * to stdout or to a file written under a temporary name and renamed. What a
 * profile says that the target cannot express is said on stderr. */
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
#include "cmd/kube_yaml.h"
#include "sandbox/seccomp_export.h"

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

static int export_seccomp(const struct sbx_config *cfg, struct sbx_err *err)
{
	struct json_object *j = seccomp_export_json(cfg);
	_cleanup_free_ char *text = xasprintf("%s\n", json_object_to_json_string_ext(
		j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	if (cfg->seccomp == SBX_OFF)
		log_warn("profile '%s' has seccomp = off: the exported profile denies nothing",
			 cfg->profile);
	return write_output(cfg->output, text, err);
}

static int export_kube(const struct sbx_config *cfg, char **cmd, struct sbx_err *err)
{
	struct kube_notes notes = { 0 };
	_cleanup_free_ char *yaml = NULL;

	if (kube_yaml(cfg, (const char *const *)cmd, &yaml, &notes, err) < 0) {
		kube_notes_free(&notes);
		return -1;
	}
	for (size_t i = 0; i < notes.n; i++)
		log_warn("not expressed in Kubernetes: %s", notes.v[i]);
	kube_notes_free(&notes);
	return write_output(cfg->output, yaml, err);
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
	else if (cfg.export_format == SBX_EXPORT_SECCOMP)
		r = export_seccomp(&cfg, err);
	else
		r = export_kube(&cfg, nargv + rest, err);
	config_free(&cfg);
	return r;
}
