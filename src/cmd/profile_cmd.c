/* profile_cmd.c - `sbxrun profile ls` and `sbxrun profile show NAME`; `profile
 * export` is in profile_export.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "base/paths.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"

static void list_dir(const char *dir, const char *kind)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n <= 4 || strcmp(e->d_name + n - 4, ".ini") != 0 || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *path = NULL;
		struct sbx_err err;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(n - 4), e->d_name);
		/* shown only where lookup would find it: the first directory wins */
		if (profile_find(name, &path, &err) == 0 && strncmp(path, dir, strlen(dir)) == 0)
			printf("%-16s %-7s %s\n", name, kind, path);
	}
	closedir(d);
}

static void show_value(const struct sbx_config *cfg, const struct sbx_option *o)
{
	const struct sbx_strlist *l = config_list(cfg, o);
	char buf[4096];

	if (l) {
		/* a [credentials] line is kept as VAR=VALUE: its key is the variable */
		for (size_t i = 0; i < l->n; i++)
			if (o->kind == SBX_ARG_CRED)
				printf("%.*s = %s\t; %s\n", (int)strcspn(l->v[i], "="), l->v[i],
				       strchr(l->v[i], '=') + 1, l->origin[i]);
			else
				printf("%s = %s\t; %s\n", o->pkey, l->v[i], l->origin[i]);
		return;
	}
	config_format(cfg, o, buf, sizeof(buf));
	if (!buf[0])
		return;
	printf("%s = %s\t; %s\n", o->pkey, buf, cfg->origin[o->key] ? cfg->origin[o->key] : "default");
}

static int show(const char *name, struct sbx_err *err)
{
	static const char *const sections[] = { "sandbox", "limits", "network", "credentials", "download",
						"packages", "mounts" };
	struct sbx_config cfg;
	struct sbx_policy pol;
	_cleanup_free_ char *path = NULL;

	if (profile_find(name, &path, err) < 0 || policy_load(&pol, err) < 0)
		return -1;
	config_init(&cfg);
	cfg.profile = xstrdup(name);
	int r = profile_load(&cfg, name, err) < 0 || policy_apply(&pol, &cfg, err) < 0 ||
		config_check(&cfg, err) < 0 ? -1 : 0;
	if (r < 0) {
		policy_free(&pol);
		config_free(&cfg);
		return -1;
	}
	printf("; profile '%s' (%s), resolved\n", name, path);
	for (size_t i = 0; i < pol.n; i++)
		printf("; with the ceiling of %s applied (values it set say 'policy')\n",
		       pol.file[i].path);
	policy_free(&pol);
	for (size_t s = 0; s < ARRAY_SIZE(sections); s++) {
		printf("%s[%s]\n", s ? "\n" : "", sections[s]);
		for (size_t i = 0; i < sbx_options_count; i++) {
			const struct sbx_option *o = &sbx_options[i];
			if (o->section && strcmp(o->section, sections[s]) == 0 && o->key != SBX_K_INHERIT)
				show_value(&cfg, o);
		}
	}
	config_free(&cfg);
	return 0;
}

int cmd_profile(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	int r = cli_verb(argc, argv, "profile", NULL, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (verb->mask == SBX_CMD_PROFILE_EXPORT)
		return cmd_profile_export(argc - 1, argv + 1, err);
	r = cli_parse(argc - 1, argv + 1, verb->mask, NULL, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	int nops = argc - 1 - a.rest;
	if (verb->mask == SBX_CMD_PROFILE_LS && nops == 0) {
		_cleanup_free_ char *user = paths_user_profiles();
		_cleanup_free_ char *stock = xasprintf("%s/profiles", paths_stock_dir());
		list_dir(user, "user");
		list_dir(SBX_SYSTEM_PROFILES, "system");
		list_dir(stock, "stock");
		return 0;
	}
	if (verb->mask == SBX_CMD_PROFILE_SHOW && nops == 1)
		return show(argv[1 + a.rest], err) < 0 ? -1 : 0;
	return err_set(err, 0, "usage: sbxrun profile %s%s%s (see 'sbxrun profile %s --help')", verb->name,
		       verb->operands[0] ? " " : "", verb->operands, verb->name);
}
