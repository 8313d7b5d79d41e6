/* gen-docs.c - writes the man page and the bash, zsh and fish completions
 * from the option table (src/base/options.c), so that none of them can drift
 * from what the parser accepts. `make docs` regenerates them; `make check`
 * fails when a committed one differs from what this prints. */
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "base/options.h"

static const struct { const char *name, *verbs, *summary; unsigned mask; } cmds[] = {
	{ "run", "", "run one command in a fresh sandbox", SBX_CMD_RUN },
	{ "shell", "", "interactive login shell on a terminal", SBX_CMD_SHELL },
	{ "session", "start ls stop rm", "long-lived sandboxes that several commands share", SBX_CMD_SESSION_START },
	{ "download", "", "host-side fetch into a session's workspace", SBX_CMD_DOWNLOAD },
	{ "mcp", "", "MCP server on stdin/stdout: an AI agent's tools in one sandbox", SBX_CMD_MCP },
	{ "cp", "", "copy files between the host and a session (SESSION:PATH)", 0 },
	{ "image", "build import ls rm inspect export", "rootfs images in the local store", 0 },
	{ "profile", "ls show export", "list profiles, show one fully resolved, export one as Kubernetes YAML or OCI seccomp JSON", SBX_CMD_PROFILE_EXPORT },
	{ "proxy", "", "the egress proxy of a profile on a TCP address (a pod's sidecar)", SBX_CMD_PROXY },
	{ "doctor", "", "what this machine offers and what falls back", 0 },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void man_options(unsigned mask)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (!o->lname || !(o->cmds & mask))
			continue;
		printf(".TP\n");
		if (o->sname)
			printf("\\fB\\-%c\\fR, ", o->sname);
		printf("\\fB\\-\\-%s\\fR%s%s\n%s", o->lname, o->metavar ? " \\fI" : "",
		       o->metavar ? o->metavar : "", o->metavar ? "\\fR\n" : "");
		printf("%s.\n", o->help);
	}
}

static void man_profile_keys(void)
{
	static const char *const sections[] = { "sandbox", "limits", "network", "download", "mounts" };
	for (size_t s = 0; s < 5; s++) {
		printf(".SS [%s]\n", sections[s]);
		for (size_t i = 0; i < sbx_options_count; i++) {
			const struct sbx_option *o = &sbx_options[i];
			if (!o->section || strcmp(o->section, sections[s]) || o->key == SBX_K_INHERIT)
				continue;
			printf(".TP\n\\fB%s\\fR = \\fI%s\\fR\n%s", o->pkey, o->metavar, o->help);
			if (o->choices) {
				printf(" (");
				for (int c = 0; o->choices[c]; c++)
					printf("%s%s", c ? ", " : "", o->choices[c]);
				printf(")");
			}
			printf("%s.\n", o->flags & SBX_OPT_REPEAT ? "; repeatable" : "");
		}
	}
}

/* The EXAMPLES section; tests/integration/80-examples.sh runs each .EX
 * block (docs/testing.md), unless an "illustrative" comment precedes it. */
static const char man_examples[] =
	".SH EXAMPLES\n"
	"Run a file you do not trust; only a copy of it goes in, and the host's copy is never touched:\n"
	".PP\n"
	".EX\n"
	"echo \\(aqprint(\"hi\")\\(aq > suspicious.py\n"
	"sbxrun run \\-\\-copy suspicious.py \\-\\- python3 suspicious.py\n"
	".EE\n"
	".PP\n"
	"Collect what the command left in its workspace into a host directory:\n"
	".PP\n"
	".EX\n"
	"sbxrun run \\-\\-copy suspicious.py \\-\\-out results \\-\\- sh \\-c \\(aqpython3 suspicious.py > report.txt\\(aq\n"
	".EE\n"
	".PP\n"
	"A CI step: the current directory read-only at /src, a result record, exit 124 at the timeout:\n"
	".PP\n"
	".EX\n"
	"sbxrun run \\-\\-profile ci \\-\\-bind .:/src \\-w /src \\-\\-json result.json \\-\\- ls\n"
	"sbxrun run \\-\\-timeout 1s \\-\\- sleep 5   # fails: timeout\n"
	".EE\n"
	".PP\n"
	"A session that several commands share, its work handed in as a tarball:\n"
	".PP\n"
	".EX\n"
	"sbxrun session start \\-\\-profile packages alice\n"
	"sbxrun run \\-\\-session alice \\-\\- sh \\-c \\(aqecho done > answer.txt\\(aq\n"
	"sbxrun image export alice \\-\\-workspace \\-o alice.tar.zst\n"
	"sbxrun session rm \\-f alice\n"
	".EE\n"
	".PP\n"
	"What this machine offers, and a profile fully resolved:\n"
	".PP\n"
	".EX\n"
	"sbxrun doctor\n"
	"sbxrun profile show ci\n"
	".EE\n"
	".PP\n"
	"Build the default image from Debian's archive (once):\n"
	".PP\n"
	".\\\" illustrative: builds from Debian's archive over the network\n"
	".EX\n"
	"sbxrun image build minimal\n"
	".EE\n";

static void man(void)
{
	printf(".TH SBXRUN 1 \"\" \"sbxrun\" \"User Commands\"\n.SH NAME\nsbxrun \\- run code you do not trust in a fresh Debian sandbox\n");
	printf(".SH SYNOPSIS\n.B sbxrun\n[\\fB\\-v\\fR|\\fB\\-q\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR...]\n");
	printf(".SH DESCRIPTION\nsbxrun runs a command in a fresh Debian system under unprivileged user namespaces, without root and without a setuid bit, with a time limit, a memory limit, a disk quota and a chosen network policy.\n");
	printf(".SH COMMANDS\n");
	for (size_t c = 0; c < NCMDS; c++)
		printf(".TP\n\\fB%s\\fR%s%s\n%s.\n", cmds[c].name, cmds[c].verbs[0] ? " " : "", cmds[c].verbs, cmds[c].summary);
	for (size_t c = 0; c < NCMDS; c++) {
		if (!cmds[c].mask)
			continue;
		printf(".SH OPTIONS OF %s\n", cmds[c].name);
		man_options(cmds[c].mask);
	}
	printf(".SH PROFILES\nINI files looked up by name in $XDG_CONFIG_HOME/sbxrun/profiles, /etc/sbxrun/profiles and the installed stock set, never the current directory. \\fBinherit\\fR = \\fINAME\\fR layers one on another.\n");
	man_profile_keys();
	printf(".SH EXIT STATUS\nThe command's own; 128+N when signal N killed it; 124 when the timeout ended it; 125 when sbxrun itself failed; 126 when the command cannot run; 127 when it was not found.\n");
	fputs(man_examples, stdout);
	printf(".SH FILES\n$XDG_DATA_HOME/sbxrun/images (the store), /var/lib/sbxrun/images (the system store), $XDG_RUNTIME_DIR/sbxrun (run state and sessions), $XDG_CONFIG_HOME/sbxrun/profiles, /etc/sbxrun/profiles, /etc/sbxrun/policy.ini (the administrator's ceiling over every profile and flag: root's, not writable by others; $SBXRUN_POLICY names an extra one that can only tighten).\n");
	printf(".SH SEE ALSO\n\\fBbwrap\\fR(1), \\fBunshare\\fR(1), \\fBuser_namespaces\\fR(7)\n");
}

/* Shell commands that list dynamic values, first column, header skipped. */
static const char *values_cmd(const struct sbx_option *o)
{
	if (o->key == SBX_K_PROFILE)
		return "sbxrun profile ls 2>/dev/null | awk '{print $1}'";
	if (o->key == SBX_K_IMAGE)
		return "sbxrun image ls 2>/dev/null | awk 'NR>1 {print $1}'";
	if (o->key == SBX_K_SESSION)
		return "sbxrun session ls 2>/dev/null | awk 'NR>1 {print $1}'";
	return NULL;
}

static int takes_file(const struct sbx_option *o)
{
	return o->key == SBX_K_JSON || o->key == SBX_K_EVENTS || o->key == SBX_K_BIND;
}

/* A command inside a double-quoted bash string: '$' must stay literal. */
static void bash_quoted(const char *s)
{
	for (; *s; s++)
		printf("%s%c", *s == '$' || *s == '"' ? "\\" : "", *s);
}

static void bash_list(const struct sbx_option *o, const char *tail)
{
	printf("_sbxrun_list \"");
	bash_quoted(values_cmd(o));
	printf("\"%s", tail);
}

static void bash_opts(unsigned mask)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (o->lname && (o->cmds & mask))
			printf(" --%s%s%c", o->lname, o->sname ? " -" : "", o->sname ? o->sname : ' ');
	}
}

static void bash(void)
{
	printf("# bash completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("_sbxrun_list() { COMPREPLY=($(compgen -W \"$(eval \"$1\")\" -- \"$cur\")); }\n");
	printf("_sbxrun() {\n\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" opts\n");
	printf("\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W \"");
	for (size_t c = 0; c < NCMDS; c++)
		printf("%s ", cmds[c].name);
	printf("-v -q --verbose --quiet --help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase \"$prev\" in\n");
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (!o->lname || o->kind == SBX_ARG_NONE)
			continue;
		printf("\t--%s%s%c)\n", o->lname, o->sname ? "|-" : "", o->sname ? o->sname : ' ');
		if (values_cmd(o)) {
			printf("\t\t");
			bash_list(o, "; return ;;\n");
		}
		else if (o->choices) {
			printf("\t\tCOMPREPLY=($(compgen -W \"");
			for (int k = 0; o->choices[k]; k++)
				printf("%s ", o->choices[k]);
			printf("\" -- \"$cur\")); return ;;\n");
		} else if (takes_file(o))
			printf("\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n");
		else
			printf("\t\treturn ;;\n");
	}
	printf("\tesac\n\tcase \"${COMP_WORDS[1]}\" in\n");
	for (size_t c = 0; c < NCMDS; c++) {
		printf("\t%s)\n", cmds[c].name);
		if (cmds[c].verbs[0])
			printf("\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return; fi\n",
			       cmds[c].verbs);
		if (!strcmp(cmds[c].name, "session")) {
			printf("\t\tcase \"${COMP_WORDS[2]}\" in stop|rm) ");
			bash_list(options_by_key(SBX_K_SESSION), "; return ;; esac\n");
		}
		if (!strcmp(cmds[c].name, "image")) {
			printf("\t\tcase \"${COMP_WORDS[2]}\" in rm|inspect|export) [[ \"$cur\" != -* ]] && { ");
			bash_list(options_by_key(SBX_K_IMAGE), "; return; } ;; import) COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n");
		}
		if (!strcmp(cmds[c].name, "profile")) {
			printf("\t\t[ \"${COMP_WORDS[2]}\" = show ] && { ");
			bash_list(options_by_key(SBX_K_PROFILE), "; return; }\n");
		}
		printf("\t\topts=\"-h --help -v -q");
		bash_opts(cmds[c].mask);
		if (!strcmp(cmds[c].name, "image"))
			printf(" --name -o --output --workspace --mtime --format --max-size");
		if (!strcmp(cmds[c].name, "cp"))
			printf(" --max-size");
		printf("\" ;;\n");
	}
	printf("\tesac\n\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n}\ncomplete -F _sbxrun sbxrun\n");
}

/* Text inside a single-quoted shell word (bash, zsh and fish all read
 * '\'' as a quote); in a zsh _arguments spec also : [ ] and \ escaped. */
static void sq(const char *s, int spec)
{
	for (; *s; s++) {
		if (*s == '\'')
			printf("'\\''");
		else if (spec && strchr(":[]\\", *s))
			printf("\\%c", *s);
		else
			putchar(*s);
	}
}

static void zsh_spec(const struct sbx_option *o)
{
	const char *fn = o->key == SBX_K_PROFILE ? "_sbxrun_profiles" : o->key == SBX_K_IMAGE ? "_sbxrun_images"
			 : o->key == SBX_K_SESSION ? "_sbxrun_sessions" : NULL;
	printf(" \\\n\t\t'(%s--%s)%s--%s", o->sname ? (char[]){ '-', o->sname, ' ', 0 } : "", o->lname,
	       o->flags & SBX_OPT_REPEAT ? "*" : "", o->lname);
	printf("%s[", o->kind == SBX_ARG_NONE ? "" : "=");
	sq(o->help, 1);
	printf("]");
	if (o->kind == SBX_ARG_NONE) {
		printf("'");
		return;
	}
	printf(":");
	sq(o->metavar, 1);
	printf(":");
	if (fn)
		printf("%s", fn);
	else if (o->choices) {
		printf("(");
		for (int k = 0; o->choices[k]; k++)
			printf("%s%s", k ? " " : "", o->choices[k]);
		printf(")");
	} else if (takes_file(o))
		printf("_files");
	printf("'");
}

static void zsh(void)
{
	printf("#compdef sbxrun\n# zsh completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("_sbxrun_profiles() { compadd -- ${(f)\"$(sbxrun profile ls 2>/dev/null | awk '{print $1}')\"} }\n");
	printf("_sbxrun_images() { compadd -- ${(f)\"$(sbxrun image ls 2>/dev/null | awk 'NR>1 {print $1}')\"} }\n");
	printf("_sbxrun_sessions() { compadd -- ${(f)\"$(sbxrun session ls 2>/dev/null | awk 'NR>1 {print $1}')\"} }\n");
	printf("_sbxrun() {\n\tlocal -a cmds\n\tcmds=(");
	for (size_t c = 0; c < NCMDS; c++) {
		printf("%s'%s:", c ? " " : "", cmds[c].name);
		sq(cmds[c].summary, 0);
		printf("'");
	}
	printf(")\n\tif (( CURRENT == 2 )); then _describe command cmds; return; fi\n\tcase $words[2] in\n");
	for (size_t c = 0; c < NCMDS; c++) {
		printf("\t%s)\n", cmds[c].name);
		if (cmds[c].verbs[0]) {
			printf("\t\tif (( CURRENT == 3 )); then compadd -- %s; return; fi\n", cmds[c].verbs);
			printf("\t\tcase $words[3] in stop|rm) [[ $words[2] == session ]] && _sbxrun_sessions ;;"
			       " rm|inspect|export) [[ $words[2] == image ]] && _sbxrun_images ;;"
			       " show) _sbxrun_profiles ;; import) _files ;; esac\n");
		}
		if (!cmds[c].mask) {
			printf("\t\t;;\n");
			continue;
		}
		printf("\t\t_arguments -s");
		for (size_t i = 0; i < sbx_options_count; i++)
			if (sbx_options[i].lname && (sbx_options[i].cmds & cmds[c].mask))
				zsh_spec(&sbx_options[i]);
		printf(" \\\n\t\t'*::command:_normal' ;;\n");
	}
	printf("\tesac\n}\n_sbxrun \"$@\"\n");
}

static void fish(void)
{
	printf("# fish completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("complete -c sbxrun -f\n");
	for (size_t c = 0; c < NCMDS; c++) {
		printf("complete -c sbxrun -n __fish_use_subcommand -a %s -d '", cmds[c].name);
		sq(cmds[c].summary, 0);
		printf("'\n");
	}
	for (size_t c = 0; c < NCMDS; c++)
		if (cmds[c].verbs[0])
			printf("complete -c sbxrun -n '__fish_seen_subcommand_from %s' -a '%s'\n", cmds[c].name, cmds[c].verbs);
	printf("complete -c sbxrun -n '__fish_seen_subcommand_from stop rm' -a '(");
	sq(values_cmd(options_by_key(SBX_K_SESSION)), 0);
	printf(")'\ncomplete -c sbxrun -n '__fish_seen_subcommand_from inspect export' -a '(");
	sq(values_cmd(options_by_key(SBX_K_IMAGE)), 0);
	printf(")'\ncomplete -c sbxrun -n '__fish_seen_subcommand_from show' -a '(");
	sq(values_cmd(options_by_key(SBX_K_PROFILE)), 0);
	printf(")'\n");
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (!o->lname)
			continue;
		printf("complete -c sbxrun -n '__fish_seen_subcommand_from");
		for (size_t c = 0; c < NCMDS; c++)
			if (o->cmds & cmds[c].mask)
				printf(" %s", cmds[c].name);
		printf("' -l %s", o->lname);
		if (o->sname)
			printf(" -s %c", o->sname);
		if (o->kind != SBX_ARG_NONE)
			printf(" -r");
		if (values_cmd(o)) {
			printf(" -a '(");
			sq(values_cmd(o), 0);
			printf(")'");
		} else if (o->choices) {
			printf(" -a '");
			for (int k = 0; o->choices[k]; k++)
				printf("%s%s", k ? " " : "", o->choices[k]);
			printf("'");
		} else if (takes_file(o))
			printf(" -F");
		printf(" -d '");
		sq(o->help, 0);
		printf("'\n");
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "man"))
		man();
	else if (!strcmp(what, "bash"))
		bash();
	else if (!strcmp(what, "zsh"))
		zsh();
	else if (!strcmp(what, "fish"))
		fish();
	else {
		fprintf(stderr, "usage: gen-docs man|bash|zsh|fish\n");
		return 2;
	}
	return 0;
}
