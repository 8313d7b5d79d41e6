/* csname.h - the sandbox's names and bytes as a person sees them: what
 * `changes show`, `changes diff` and the MCP tools print of a change set.
 * Everything a sandbox chose (a name, a symlink's target, a file's lines)
 * is untrusted text on its way to a terminal. */
#ifndef SBX_CSNAME_H
#define SBX_CSNAME_H

#include <stdio.h>

/* A name on one line, nothing in it that acts on a terminal or reorders
 * what is shown: '\\', '\n', '\t' and other C0 controls and DEL escaped as
 * changeset_escape does (\\\\, \n, \t, \xNN), and each byte of a C1
 * control (U+0080-U+009F), a bidirectional control (U+202A-U+202E,
 * U+2066-U+2069, U+200E, U+200F, U+061C), another invisible format
 * character (U+200B-U+200D, U+2060, U+FEFF), a line or paragraph
 * separator (U+2028, U+2029), a byte that is not valid UTF-8, or a space
 * that begins or ends the name or one of its components, as \xNN.
 * Any other UTF-8 stays as it is. Freed by the caller. */
char *csname_show(const char *s);
/* PATH as it is written in entries and shown: '\\' and bytes below 0x20
 * and 0x7f escaped (\\n, \\t, \\xNN), so a name with a newline is one line. */
char *changeset_escape(const char *s);
/* The inverse; NULL on a malformed escape. */
char *changeset_unescape(const char *s);

/* prefix and path as git writes a name in a diff's headers: as they are,
 * or, when they hold a control character, '"', '\\' or a byte past 0x7f,
 * in double quotes with C escapes (\t, \n, \", \\, \ooo), as git does with
 * core.quotePath; `git apply` reads either. Freed by the caller. */
char *csname_git(const char *prefix, const char *path);
/* A stream that writes to out what is written to it, with every byte that
 * acts on a terminal shown as `cat -v` would: C0 controls but tab and
 * newline as ^X (a carriage return as ^M, ESC as ^[), DEL as ^?, a C1,
 * bidirectional or format character as <U+XXXX>, a byte that is not valid
 * UTF-8 as \xNN. fclose flushes it (out stays open). NULL on failure. */
FILE *csname_escaping(FILE *out);
/* A mode as ls writes it ("-rw-r--r--", "lrwxrwxrwx") from a type of
 * changeset.h and the permission bits. */
void csname_mode(char type, unsigned perm, char out[11]);

#endif
