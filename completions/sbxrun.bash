# bash completion for sbxrun, generated from its option table (tools/gen-docs.c)
_sbxrun_list() { COMPREPLY=($(compgen -W "$(eval "$1")" -- "$cur")); }
_sbxrun() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" opts
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "run shell session net download cp image profile mcp proxy doctor cache changes -h --help -v --verbose --trace -q --quiet --version " -- "$cur"))
		return
	fi
	case "${COMP_WORDS[1]}:$prev" in
	*:--profile|*:-p)
		_sbxrun_list "sbxrun profile ls 2>/dev/null | awk '{print \$1}'"; return ;;
	*:--image|*:-i)
		_sbxrun_list "sbxrun image ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return ;;
	*:--user|*:-u)
		return ;;
	*:--hostname)
		return ;;
	*:--workdir|*:-w)
		return ;;
	*:--env|*:-e)
		return ;;
	*:--timeout)
		return ;;
	*:--memory)
		return ;;
	*:--disk)
		return ;;
	*:--pids)
		return ;;
	*:--cpus)
		return ;;
	*:--net)
		COMPREPLY=($(compgen -W "none packages full " -- "$cur")); return ;;
	*:--allow)
		return ;;
	*:--cache-max)
		return ;;
	*:--bind)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	*:--project)
		return ;;
	changes:--older)
		return ;;
	*:--patch)
		return ;;
	*:--copy)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	*:--out)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	run:--json|shell:--json)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	*:--json-fd)
		return ;;
	*:--events)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	*:--session)
		_sbxrun_list "sbxrun session ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return ;;
	*:--from)
		return ;;
	*:--sha256)
		return ;;
	*:--name|*:-n)
		return ;;
	*:--suite)
		return ;;
	image:--output|image:-o)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	*:--mtime)
		return ;;
	image:--format)
		COMPREPLY=($(compgen -W "tar oci docker " -- "$cur")); return ;;
	*:--max-size)
		return ;;
	*:--max)
		return ;;
	cache:--older)
		return ;;
	*:--listen)
		return ;;
	*:--auth-file)
		return ;;
	*:--header-timeout)
		return ;;
	*:--unread-max)
		return ;;
	*:--answer-timeout)
		return ;;
	*:--for)
		COMPREPLY=($(compgen -W "once session always " -- "$cur")); return ;;
	profile:--format)
		COMPREPLY=($(compgen -W "kube seccomp " -- "$cur")); return ;;
	*:--kind)
		COMPREPLY=($(compgen -W "job pod " -- "$cur")); return ;;
	*:--image-ref)
		return ;;
	profile:--output|profile:-o)
		return ;;
	esac
	case "${COMP_WORDS[1]}" in
	run)
		opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --project  --apply  --exact-modes  --discard  --copy  --out  --tty -t --raw-tty  --json  --json-fd  --events  --session " ;;
	shell)
		opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --project  --apply  --exact-modes  --discard  --copy  --out  --raw-tty  --json  --json-fd  --events  --session " ;;
	session)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "start ls stop rm snapshot snapshots snapshot-rm restore" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in stop|rm) [[ "$cur" != -* ]] && { _sbxrun_list "sbxrun session ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return; } ;; esac
		case "${COMP_WORDS[2]}" in
		start) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --project  --events  --from " ;;
		ls) opts=" --help -h --verbose -v --trace  --quiet -q --json " ;;
		stop) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		rm) opts=" --help -h --verbose -v --trace  --quiet -q --force -f" ;;
		snapshot) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		snapshots) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		snapshot-rm) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		restore) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		esac ;;
	net)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "allow pending deny" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in
		allow) opts=" --help -h --verbose -v --trace  --quiet -q --for " ;;
		pending) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		deny) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		esac ;;
	download)
		opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --session  --sha256 " ;;
	cp)
		opts=" --help -h --verbose -v --trace  --quiet -q --max-size " ;;
	image)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "build import ls rm inspect export" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in rm|inspect|export) [[ "$cur" != -* ]] && { _sbxrun_list "sbxrun image ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return; } ;; import) [[ "$cur" != -* ]] && { COMPREPLY=($(compgen -f -- "$cur")); return; } ;; esac
		case "${COMP_WORDS[2]}" in
		build) opts=" --help -h --verbose -v --trace  --quiet -q --name -n --suite  --system " ;;
		import) opts=" --help -h --verbose -v --trace  --quiet -q --name -n --system " ;;
		ls) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		rm) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		inspect) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		export) opts=" --help -h --verbose -v --trace  --quiet -q --output -o --workspace  --snapshot  --mtime  --format  --max-size " ;;
		esac ;;
	profile)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "ls show export" -- "$cur")); return; fi
		[ "${COMP_WORDS[2]}" = show ] && { _sbxrun_list "sbxrun profile ls 2>/dev/null | awk '{print \$1}'"; return; }
		case "${COMP_WORDS[2]}" in
		ls) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		show) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		export) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --format  --kind  --image-ref  --output -o" ;;
		esac ;;
	mcp)
		opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --project  --session " ;;
	proxy)
		opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --allow  --cache-max  --events  --listen  --auth-file  --header-timeout  --unread-max  --answer-timeout " ;;
	doctor)
		opts=" --help -h --verbose -v --trace  --quiet -q" ;;
	cache)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "ls du prune fill" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in
		ls) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --system " ;;
		du) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --system " ;;
		prune) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --system  --max  --all  --older " ;;
		fill) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --image -i --system " ;;
		esac ;;
	changes)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "ls show diff export apply discard prune" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in
		ls) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		show) opts=" --help -h --verbose -v --trace  --quiet -q --all " ;;
		diff) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		export) opts=" --help -h --verbose -v --trace  --quiet -q --patch " ;;
		apply) opts=" --help -h --verbose -v --trace  --quiet -q --force-rest  --exact-modes " ;;
		discard) opts=" --help -h --verbose -v --trace  --quiet -q" ;;
		prune) opts=" --help -h --verbose -v --trace  --quiet -q --profile -p --older  --all " ;;
		esac ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _sbxrun sbxrun
