# bash completion for sbxrun, generated from its option table (tools/gen-docs.c)
_sbxrun_list() { COMPREPLY=($(compgen -W "$(eval "$1")" -- "$cur")); }
_sbxrun() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" opts
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "run shell session download mcp cp image profile proxy doctor -v -q --verbose --quiet --help --version" -- "$cur"))
		return
	fi
	case "$prev" in
	--profile|-p)
		_sbxrun_list "sbxrun profile ls 2>/dev/null | awk '{print \$1}'"; return ;;
	--image|-i)
		_sbxrun_list "sbxrun image ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return ;;
	--user|-u)
		return ;;
	--hostname )
		return ;;
	--workdir|-w)
		return ;;
	--env|-e)
		return ;;
	--timeout )
		return ;;
	--memory )
		return ;;
	--disk )
		return ;;
	--pids )
		return ;;
	--cpus )
		return ;;
	--net )
		COMPREPLY=($(compgen -W "none packages full " -- "$cur")); return ;;
	--allow )
		return ;;
	--bind )
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--copy )
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--out )
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--json )
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--json-fd )
		return ;;
	--events )
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--session )
		_sbxrun_list "sbxrun session ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return ;;
	--sha256 )
		return ;;
	--listen )
		return ;;
	--auth-file )
		return ;;
	--header-timeout )
		return ;;
	--format )
		COMPREPLY=($(compgen -W "kube seccomp " -- "$cur")); return ;;
	--kind )
		COMPREPLY=($(compgen -W "job pod " -- "$cur")); return ;;
	--image-ref )
		return ;;
	--output|-o)
		return ;;
	esac
	case "${COMP_WORDS[1]}" in
	run)
		opts="-h --help -v -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --copy  --out  --tty -t --raw-tty  --json  --json-fd  --events  --session " ;;
	shell)
		opts="-h --help -v -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --copy  --out  --raw-tty  --json  --json-fd  --events  --session " ;;
	session)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "start ls stop rm" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in stop|rm) _sbxrun_list "sbxrun session ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return ;; esac
		opts="-h --help -v -q --profile -p --image -i --user -u --hostname  --workdir -w --env -e --timeout  --memory  --disk  --pids  --cpus  --net  --allow  --bind  --events " ;;
	download)
		opts="-h --help -v -q --profile -p --session  --sha256 " ;;
	mcp)
		opts="-h --help -v -q --profile -p --image -i --session " ;;
	cp)
		opts="-h --help -v -q --max-size" ;;
	image)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "build import ls rm inspect export" -- "$cur")); return; fi
		case "${COMP_WORDS[2]}" in rm|inspect|export) [[ "$cur" != -* ]] && { _sbxrun_list "sbxrun image ls 2>/dev/null | awk 'NR>1 {print \$1}'"; return; } ;; import) COMPREPLY=($(compgen -f -- "$cur")); return ;; esac
		opts="-h --help -v -q --name -o --output --workspace --mtime --format --max-size" ;;
	profile)
		if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "ls show export" -- "$cur")); return; fi
		[ "${COMP_WORDS[2]}" = show ] && { _sbxrun_list "sbxrun profile ls 2>/dev/null | awk '{print \$1}'"; return; }
		opts="-h --help -v -q --profile -p --image -i --format  --kind  --image-ref  --output -o" ;;
	proxy)
		opts="-h --help -v -q --profile -p --image -i --allow  --events  --listen  --auth-file  --header-timeout " ;;
	doctor)
		opts="-h --help -v -q" ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _sbxrun sbxrun
