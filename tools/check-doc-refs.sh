#!/bin/bash
# tools/check-doc-refs.sh - every document the repository's files cite
# (a name ending in .md: README.md, docs/limits.md, ../HACKING.md) is in the
# repository, found from the top or from the citing file's folder. Prints
# FILE:LINE and the missing name for each one that is not; exits 1 then.
# `make check` runs it (docs/testing.md).
cd "$(dirname "$0")/.." || exit 2
bad=0
while IFS= read -r hit; do
	file=${hit%%:*} rest=${hit#*:} line=${rest%%:*} name=${rest#*:}
	case $name in [A-Za-z0-9_./-]*) ;; *) name=${name#?} ;; esac  # the character before
	name=${name%%#*}                        # a link's anchor
	case $file in
	*.c | *.h) case $name in *[A-Z/]*) ;; *) continue ;; esac ;;  # in C, a struct field named md is no document
	esac
	case $name in
	//*) continue ;;                        # a URL
	bench/results-HOST.md) continue ;;      # what bench/run.sh writes, HOST its name
	esac
	[ -f "$name" ] || [ -f "$(dirname "$file")/$name" ] && continue
	echo "$file:$line: cites $name, which is not in the repository"
	bad=1
done < <(git grep -I -n -o -E '(^|[^A-Za-z0-9_.$}/-])[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' -- ':!*.tar*' ':!tests/fuzz/corpus')
exit $bad
