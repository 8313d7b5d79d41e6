/* csignore.h - which paths of a project its own .gitignore rules ignore,
 * as git reads them (libgit2, loaded on first use): what `changes show`
 * folds into one line per directory. The rules are the host's, read from
 * DIR and the repository around it, never from the change set: a
 * .gitignore the sandbox wrote would let it hide anything. */
#ifndef SBX_CSIGNORE_H
#define SBX_CSIGNORE_H

#include <stdbool.h>

struct cs_ignore;

/* The rules of the git work tree that holds project (a directory, absolute),
 * or NULL when there are none to read: project is in no work tree (or one
 * owned by another user, which git would not read either), or libgit2 is
 * not installed. Nothing is then folded. */
struct cs_ignore *csignore_open(const char *project);
/* Whether path (relative to project; dir: a directory) is ignored. A path
 * with a component ".git" never is. */
bool csignore_match(struct cs_ignore *ig, const char *path, bool dir);
void csignore_close(struct cs_ignore *ig);

#endif
