/* gen-docs.c - writes the man page and the bash, zsh and fish completions
 * from the option table (src/base/options.c), so that none of them can drift
 * from what the parser accepts. `make docs` regenerates them; `make check`
 * fails when a committed one differs from what this prints. */
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "base/options.h"

/* The table's commands: cmd(i), top-level ones, a group's verbs as a list. */
#define NCMDS sbx_commands_count
#define CMD(i) (&sbx_commands[i])

static const char *verbs_of(const char *group)
{
	static char buf[256];
	buf[0] = '\0';
	for (size_t i = 0; i < NCMDS; i++)
		if (CMD(i)->group && !strcmp(CMD(i)->group, group))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", buf[0] ? " " : "",
				 CMD(i)->name);
	return buf;
}

/* Whether o is one of c's own options (not one that every command takes). */
static int own_option(const struct sbx_option *o, const struct sbx_command *c)
{
	return o->lname && (o->cmds & c->mask) && o->cmds != SBX_CMD_ALL;
}

static int has_own_options(const struct sbx_command *c)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (own_option(&sbx_options[i], c))
			return 1;
	return 0;
}

static void man_option(const struct sbx_option *o)
{
	printf(".TP\n");
	if (o->sname)
		printf("\\fB\\-%c\\fR, ", o->sname);
	printf("\\fB\\-\\-%s\\fR%s%s\n%s", o->lname, o->metavar ? " \\fI" : "",
	       o->metavar ? o->metavar : "", o->metavar ? "\\fR\n" : "");
	printf("%s.\n", o->help);
}

static void man_options(const struct sbx_command *c)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (own_option(&sbx_options[i], c))
			man_option(&sbx_options[i]);
}

/* Every command's options, and --version before the command. */
static void man_global_options(void)
{
	printf(".SH GLOBAL OPTIONS\nBefore the command, or after it (every command takes them; "
	       "\\fB\\-\\-version\\fR only before one). "
	       "\\fB\\-v\\fR has one meaning, \\fB\\-\\-verbose\\fR, however often it is given; "
	       "the time-stamped line per start-up step that \\fB\\-v \\-v\\fR used to add is "
	       "\\fB\\-\\-trace\\fR.\n");
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname && (sbx_options[i].cmds & SBX_CMD_MAIN))
			man_option(&sbx_options[i]);
}

static void man_commands(void)
{
	printf(".SH COMMANDS\n");
	for (size_t c = 0; c < NCMDS; c++) {
		const struct sbx_command *k = CMD(c);
		printf(".TP\n\\fB%s%s%s\\fR%s", k->group ? k->group : "", k->group ? " " : "",
		       k->name, k->operands[0] ? " " : "");
		for (const char *p = k->operands; *p; p++) /* -o: a minus, not a hyphen */
			printf("%s%c", *p == '-' ? "\\" : "", *p);
		printf("\n%s.\n", k->summary);
	}
	man_global_options();
	for (size_t c = 0; c < NCMDS; c++) {
		if (!has_own_options(CMD(c)))
			continue;
		printf(".SH OPTIONS OF %s%s%s\n", CMD(c)->group ? CMD(c)->group : "",
		       CMD(c)->group ? " " : "", CMD(c)->name);
		man_options(CMD(c));
	}
}

static void man_profile_keys(void)
{
	static const char *const sections[] = { "sandbox", "limits", "network", "credentials", "packages", "download", "mounts" };
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
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
	man_commands();
	printf(".SH PROFILES\nINI files looked up by name in $XDG_CONFIG_HOME/sbxrun/profiles, /etc/sbxrun/profiles and the installed stock set, never the current directory. \\fBinherit\\fR = \\fINAME\\fR layers one on another.\n");
	man_profile_keys();
	printf(".SH EXIT STATUS\nThe command's own; 128+N when signal N killed it; 124 when the timeout ended it; 125 when sbxrun itself failed; 126 when the command cannot run; 127 when it was not found.\n");
	fputs(man_examples, stdout);
	printf(".SH FILES\n$XDG_DATA_HOME/sbxrun/images (the store), /var/lib/sbxrun/images (the system store), $XDG_CACHE_HOME/sbxrun/packages (the package gateway's cache), /var/cache/sbxrun/packages (the system package cache root fills), $XDG_RUNTIME_DIR/sbxrun (run state and sessions), $XDG_CONFIG_HOME/sbxrun/profiles, /etc/sbxrun/profiles, /etc/sbxrun/policy.ini (the administrator's ceiling over every profile and flag: root's, not writable by others; $SBXRUN_POLICY names an extra one that can only tighten).\n");
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
	return o->key == SBX_K_JSON || o->key == SBX_K_EVENTS || o->key == SBX_K_BIND ||
	       o->key == SBX_K_EXPORT_OUTPUT || o->key == SBX_K_COPY || o->key == SBX_K_OUT;
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

/* The options every command takes, then c's own. */
static void bash_opts(const struct sbx_command *c)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (o->lname && o->cmds == SBX_CMD_ALL)
			printf(" --%s%s%c", o->lname, o->sname ? " -" : "", o->sname ? o->sname : ' ');
	}
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (own_option(o, c))
			printf(" --%s%s%c", o->lname, o->sname ? " -" : "", o->sname ? o->sname : ' ');
	}
}

/* Whether another option of a value takes the same long name (--format is
 * image export's and profile export's, each with its own values). */
static int shared_name(const struct sbx_option *o)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (&sbx_options[i] != o && sbx_options[i].lname && !strcmp(sbx_options[i].lname, o->lname))
			return 1;
	return 0;
}

/* The case pattern of o's value, over "top-level command:previous word". */
static void bash_value_pattern(const struct sbx_option *o)
{
	int first = 1;
	for (size_t c = 0; c < NCMDS; c++) {
		const struct sbx_command *k = CMD(c);
		const char *top = k->group ? k->group : k->name;
		if (shared_name(o) && !(o->cmds & k->mask))
			continue;
		printf("%s%s:--%s", first ? "\t" : "|", shared_name(o) ? top : "*", o->lname);
		if (o->sname)
			printf("|%s:-%c", shared_name(o) ? top : "*", o->sname);
		first = 0;
		if (!shared_name(o))
			break;
	}
	printf(")\n");
}

static void bash_value(const struct sbx_option *o)
{
	bash_value_pattern(o);
	if (values_cmd(o)) {
		printf("\t\t");
		bash_list(o, "; return ;;\n");
	} else if (o->choices) {
		printf("\t\tCOMPREPLY=($(compgen -W \"");
		for (int k = 0; o->choices[k]; k++)
			printf("%s ", o->choices[k]);
		printf("\" -- \"$cur\")); return ;;\n");
	} else if (takes_file(o))
		printf("\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n");
	else
		printf("\t\treturn ;;\n");
}

/* A group's operands (sessions, images, profiles, files), then its verb's
 * options. */
static void bash_group(const struct sbx_command *g)
{
	printf("\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return; fi\n",
	       verbs_of(g->name));
	if (!strcmp(g->name, "session")) {
		printf("\t\tcase \"${COMP_WORDS[2]}\" in stop|rm) [[ \"$cur\" != -* ]] && { ");
		bash_list(options_by_key(SBX_K_SESSION), "; return; } ;; esac\n");
	}
	if (!strcmp(g->name, "image")) {
		printf("\t\tcase \"${COMP_WORDS[2]}\" in rm|inspect|export) [[ \"$cur\" != -* ]] && { ");
		bash_list(options_by_key(SBX_K_IMAGE), "; return; } ;; import) [[ \"$cur\" != -* ]] && { COMPREPLY=($(compgen -f -- \"$cur\")); return; } ;; esac\n");
	}
	if (!strcmp(g->name, "profile")) {
		printf("\t\t[ \"${COMP_WORDS[2]}\" = show ] && { ");
		bash_list(options_by_key(SBX_K_PROFILE), "; return; }\n");
	}
	printf("\t\tcase \"${COMP_WORDS[2]}\" in\n");
	for (size_t c = 0; c < NCMDS; c++) {
		const struct sbx_command *v = CMD(c);
		if (!v->group || strcmp(v->group, g->name))
			continue;
		printf("\t\t%s) opts=\"", v->name);
		bash_opts(v);
		printf("\" ;;\n");
	}
	printf("\t\tesac ;;\n");
}

static void bash(void)
{
	printf("# bash completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("_sbxrun_list() { COMPREPLY=($(compgen -W \"$(eval \"$1\")\" -- \"$cur\")); }\n");
	printf("_sbxrun() {\n\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" opts\n");
	printf("\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W \"");
	for (size_t c = 0; c < NCMDS; c++)
		if (!CMD(c)->group)
			printf("%s ", CMD(c)->name);
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname && (sbx_options[i].cmds & SBX_CMD_MAIN))
			printf("%s%.1s%s--%s ", sbx_options[i].sname ? "-" : "", &sbx_options[i].sname,
			       sbx_options[i].sname ? " " : "", sbx_options[i].lname);
	printf("\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase \"${COMP_WORDS[1]}:$prev\" in\n");
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname && sbx_options[i].kind != SBX_ARG_NONE)
			bash_value(&sbx_options[i]);
	printf("\tesac\n\tcase \"${COMP_WORDS[1]}\" in\n");
	for (size_t c = 0; c < NCMDS; c++) {
		if (CMD(c)->group)
			continue;
		printf("\t%s)\n", CMD(c)->name);
		if (!CMD(c)->mask) {
			bash_group(CMD(c));
			continue;
		}
		printf("\t\topts=\"");
		bash_opts(CMD(c));
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

/* The _arguments call of one command: its options, then operands. */
static void zsh_arguments(const struct sbx_command *c, const char *operand)
{
	printf("_arguments -s");
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname && (sbx_options[i].cmds & c->mask))
			zsh_spec(&sbx_options[i]);
	printf(" \\\n\t\t'%s' ;;\n", operand);
}

/* A verb's operand: a session, an image, a profile or a file. */
static const char *zsh_operand(const struct sbx_command *v)
{
	if (!strcmp(v->group, "session") && (!strcmp(v->name, "stop") || !strcmp(v->name, "rm")))
		return "*:session:_sbxrun_sessions";
	if (!strcmp(v->group, "image") && strcmp(v->name, "build") && strcmp(v->name, "ls"))
		return strcmp(v->name, "import") ? "*:image:_sbxrun_images" : "*:file:_files";
	if (!strcmp(v->group, "profile") && strcmp(v->name, "ls"))
		return "*:profile:_sbxrun_profiles";
	return "*:argument:";
}

static void zsh(void)
{
	printf("#compdef sbxrun\n# zsh completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("_sbxrun_profiles() { compadd -- ${(f)\"$(sbxrun profile ls 2>/dev/null | awk '{print $1}')\"} }\n");
	printf("_sbxrun_images() { compadd -- ${(f)\"$(sbxrun image ls 2>/dev/null | awk 'NR>1 {print $1}')\"} }\n");
	printf("_sbxrun_sessions() { compadd -- ${(f)\"$(sbxrun session ls 2>/dev/null | awk 'NR>1 {print $1}')\"} }\n");
	printf("_sbxrun() {\n\tlocal -a cmds\n\tcmds=(");
	for (size_t c = 0, n = 0; c < NCMDS; c++) {
		if (CMD(c)->group)
			continue;
		printf("%s'%s:", n++ ? " " : "", CMD(c)->name);
		sq(CMD(c)->summary, 0);
		printf("'");
	}
	printf(")\n\tif (( CURRENT == 2 )); then _describe command cmds; return; fi\n\tcase $words[2] in\n");
	for (size_t c = 0; c < NCMDS; c++) {
		const struct sbx_command *k = CMD(c);
		if (k->group)
			continue;
		printf("\t%s)\n", k->name);
		if (k->mask) {
			printf("\t\t");
			zsh_arguments(k, "*::command:_normal");
			continue;
		}
		printf("\t\tif (( CURRENT == 3 )); then compadd -- %s; return; fi\n", verbs_of(k->name));
		printf("\t\tshift 2 words; (( CURRENT -= 2 ))\n\t\tcase $words[1] in\n");
		for (size_t v = 0; v < NCMDS; v++) {
			if (!CMD(v)->group || strcmp(CMD(v)->group, k->name))
				continue;
			printf("\t\t%s) ", CMD(v)->name);
			zsh_arguments(CMD(v), zsh_operand(CMD(v)));
		}
		printf("\t\tesac ;;\n");
	}
	printf("\tesac\n}\n_sbxrun \"$@\"\n");
}

/* One complete line of option o under the condition cond. */
static void fish_option(const struct sbx_option *o, const char *cond)
{
	printf("complete -c sbxrun%s%s%s -l %s", cond ? " -n '" : "", cond ? cond : "", cond ? "'" : "",
	       o->lname);
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

/* o under the top-level commands that take it, then under each verb. */
static void fish_option_lines(const struct sbx_option *o)
{
	char cond[256] = "__fish_seen_subcommand_from";
	size_t base = strlen(cond);

	if (o->cmds == SBX_CMD_ALL || o->cmds == SBX_CMD_MAIN) {
		fish_option(o, o->cmds == SBX_CMD_MAIN ? "__fish_use_subcommand" : NULL);
		return;
	}
	for (size_t c = 0; c < NCMDS; c++)
		if (!CMD(c)->group && (o->cmds & CMD(c)->mask))
			snprintf(cond + strlen(cond), sizeof(cond) - strlen(cond), " %s", CMD(c)->name);
	if (strlen(cond) > base)
		fish_option(o, cond);
	for (size_t c = 0; c < NCMDS; c++) {
		if (!CMD(c)->group || !(o->cmds & CMD(c)->mask))
			continue;
		snprintf(cond, sizeof(cond), "__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s",
			 CMD(c)->group, CMD(c)->name);
		fish_option(o, cond);
	}
}

static void fish(void)
{
	printf("# fish completion for sbxrun, generated from its option table (tools/gen-docs.c)\n");
	printf("complete -c sbxrun -f\n");
	for (size_t c = 0; c < NCMDS; c++) {
		if (CMD(c)->group)
			continue;
		printf("complete -c sbxrun -n __fish_use_subcommand -a %s -d '", CMD(c)->name);
		sq(CMD(c)->summary, 0);
		printf("'\n");
	}
	for (size_t c = 0; c < NCMDS; c++)
		if (!CMD(c)->group && !CMD(c)->mask)
			printf("complete -c sbxrun -n '__fish_seen_subcommand_from %s' -a '%s'\n", CMD(c)->name,
			       verbs_of(CMD(c)->name));
	printf("complete -c sbxrun -n '__fish_seen_subcommand_from session; and __fish_seen_subcommand_from stop rm' -a '(");
	sq(values_cmd(options_by_key(SBX_K_SESSION)), 0);
	printf(")'\ncomplete -c sbxrun -n '__fish_seen_subcommand_from image; and __fish_seen_subcommand_from rm inspect export' -a '(");
	sq(values_cmd(options_by_key(SBX_K_IMAGE)), 0);
	printf(")'\ncomplete -c sbxrun -n '__fish_seen_subcommand_from image; and __fish_seen_subcommand_from import' -F\n");
	printf("complete -c sbxrun -n '__fish_seen_subcommand_from profile; and __fish_seen_subcommand_from show export' -a '(");
	sq(values_cmd(options_by_key(SBX_K_PROFILE)), 0);
	printf(")'\n");
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname)
			fish_option_lines(&sbx_options[i]);
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
