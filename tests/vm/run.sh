#!/bin/bash
# tests/vm/run.sh [--share HOSTDIR:GUESTDIR[:ro|rw]]... -- CMD [ARG...]
# Boots the VM of tests/vm/build.sh (built first if needed) with QEMU, the
# cached disk in snapshot mode (never modified), each HOSTDIR shared over
# virtio-9p at GUESTDIR (read-only unless :rw), and runs CMD there as root
# from a system service (sbx-vm-job.service) once systemd, dbus and the
# lingering user sbxtest's manager are up. CMD's stdout and stderr stream to
# ours; its exit status is ours. Harness failures (no boot, timeout) print
# "vm: ..." and exit 125.
# Environment: SBX_VM_TIMEOUT (whole run, default 3600 s), SBX_VM_BOOT_TIMEOUT
# (boot to the job under TCG, default 600 s), SBX_VM_ACCEL=kvm|tcg (default:
# try KVM, fall back to TCG, verdict cached per host kernel and CPU),
# SBX_VM_KVM_DEADLINE (60 s to the job under KVM, else TCG), SBX_VM_KVM_CPU
# (host), SBX_VM_MEM (2G), SBX_VM_SMP (2), SBX_VM_NET=none|user (a NIC on
# QEMU's user-mode network; default none), SBX_VM_KEEP=1 keeps the control dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "vm: $*" >&2; exit 125; }
shares=()
while [ $# -gt 0 ]; do
	case $1 in
	--share) [ $# -ge 2 ] || die "--share needs HOSTDIR:GUESTDIR[:ro|rw]"; shares+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "usage: run.sh [--share HOSTDIR:GUESTDIR[:ro|rw]]... -- CMD [ARG...]"
img=$(sh "$here/build.sh" | tail -1) && [ -s "$img/disk.img" ] || die "no VM image (tests/vm/build.sh failed)"
cache=$(dirname "$img")

ctl=$(mktemp -d "${TMPDIR:-/tmp}/sbxvm.XXXXXX")
chmod 0755 "$ctl"
qpid="" tails=()
# QEMU runs in a subshell (so that the shell reports no "Aborted" of its own
# on our stderr); stop() ends QEMU by its pidfile and waits for the subshell.
stop() {
	[ -n "$qpid" ] || return 0
	[ -s "$ctl/qemu.pid" ] || sleep 1
	if [ -s "$ctl/qemu.pid" ]; then kill "$(cat "$ctl/qemu.pid")"; else kill "$qpid"; fi 2>/dev/null
	wait "$qpid" 2>/dev/null; qpid=""
}
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	stop
	[ ${#tails[@]} -gt 0 ] && kill "${tails[@]}" 2>/dev/null
	if [ "${SBX_VM_KEEP:-}" = 1 ]; then echo "vm: control dir kept: $ctl" >&2; else rm -rf "$ctl"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The job: CMD, quoted for bash. The shares: one 9p tag each.
{ printf 'exec'; printf ' %q' "$@"; echo; } > "$ctl/job"
virtfs=(-virtfs "local,path=$ctl,mount_tag=sbxctl,security_model=none")
: > "$ctl/mounts"
n=0
for s in "${shares[@]}"; do
	IFS=: read -r hdir gdir mode <<<"$s"
	mode=${mode:-ro}
	[ -d "$hdir" ] && [ -n "$gdir" ] || die "--share $s: not HOSTDIR:GUESTDIR[:ro|rw] with an existing HOSTDIR"
	case $hdir$gdir in *,*|*' '*) die "--share $s: no commas or spaces in paths, please" ;; esac
	case $mode in ro|rw) ;; *) die "--share $s: mode is ro or rw" ;; esac
	n=$((n + 1))
	ro=""; [ "$mode" = ro ] && ro=",readonly=on"
	virtfs+=(-virtfs "local,path=$(cd "$hdir" && pwd),mount_tag=share$n,security_model=none$ro")
	echo "share$n $gdir $mode" >> "$ctl/mounts"
done

# No network in the VM unless SBX_VM_NET=user (QEMU's user-mode NAT).
case ${SBX_VM_NET:-none} in
none) nic=(-nic none) ;;
user) nic=(-nic "user,model=virtio-net-pci"); : > "$ctl/net" ;;
*) die "SBX_VM_NET is none or user" ;;
esac

# KVM on this host or not: probed once per host kernel, CPU model and QEMU.
hostkey=$( { uname -r; grep -m1 '^model name' /proc/cpuinfo; qemu-system-x86_64 --version | head -1; } | sha256sum | cut -c1-16)
verdict=$cache/accel-$hostkey
case ${SBX_VM_ACCEL:-} in
tcg|kvm) accels=$SBX_VM_ACCEL; why="forced by SBX_VM_ACCEL" ;;
"")	if [ ! -w /dev/kvm ]; then accels=tcg; why="no writable /dev/kvm"
	elif [ -f "$verdict" ] && [ "$(head -c3 "$verdict")" = tcg ]; then
		accels=tcg; why="kvm did not boot here before: $(cut -d' ' -f2- "$verdict"); remove $verdict to try again"
	else accels="kvm tcg"; why=""; fi ;;
*) die "SBX_VM_ACCEL is kvm or tcg" ;;
esac

start=$(date +%s)
timeout=${SBX_VM_TIMEOUT:-3600}
# no_timer_check: under TCG on a loaded host the kernel's early check of
# the IO-APIC timer can miss its ticks and panic ("IO-APIC + timer doesn't
# work!", seen with the host's load at 12); the check proves nothing here.
boot() { # accel: starts QEMU in the background
	local a=(-accel tcg -cpu max)
	[ "$1" = kvm ] && a=(-accel kvm -cpu "${SBX_VM_KVM_CPU:-host}")
	rm -f "$ctl/started" "$ctl/rc" "$ctl/qemu.pid"
	: > "$ctl/stdout"; : > "$ctl/stderr"; : > "$ctl/console.log"
	(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot "${a[@]}" \
		-m "${SBX_VM_MEM:-2G}" -smp "${SBX_VM_SMP:-2}" \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 systemd.show_status=1 no_timer_check" \
		-drive "file=$img/disk.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		-device virtio-rng-pci "${nic[@]}" -serial "file:$ctl/console.log" -monitor none \
		-pidfile "$ctl/qemu.pid" "${virtfs[@]}"; exit $?) > "$ctl/qemu.log" 2>&1 &
	qpid=$!
}
# Waits for the guest's boot marker: 0 seen, 1 QEMU ended, 2 deadline passed.
wait_marker() { # seconds
	local end=$(($(date +%s) + $1))
	while [ ! -f "$ctl/started" ]; do
		kill -0 "$qpid" 2>/dev/null || return 1
		[ "$(date +%s)" -lt "$end" ] || return 2
		sleep 0.5
	done
}
last_console() { tr -d '\r' < "$ctl/console.log" | grep -a . | tail -"${1:-1}"; }

for accel in $accels; do
	boot "$accel"
	if [ "$accel" = kvm ] && [ "$accels" != kvm ]; then
		wait_marker "${SBX_VM_KVM_DEADLINE:-60}"
		r=$?
		[ $r = 0 ] && { echo kvm > "$verdict"; break; }
		stop
		case $r in
		1) why="qemu ended: $(grep -a . "$ctl/qemu.log" | grep -v Aborted | tail -1)" ;;
		2) why="no job after ${SBX_VM_KVM_DEADLINE:-60} s; console's last line: $(last_console | grep . || echo '(none)')" ;;
		esac
		echo "tcg $why" > "$verdict"
		why="kvm did not boot: $why"
		continue
	fi
	wait_marker "${SBX_VM_BOOT_TIMEOUT:-600}"
	case $? in
	1) echo "vm: qemu ended before the job started ($accel):" >&2; tail -5 "$ctl/qemu.log" >&2; last_console 30 >&2; die "the guest did not boot" ;;
	2) echo "vm: no job after ${SBX_VM_BOOT_TIMEOUT:-600} s ($accel); the console ends with:" >&2; last_console 30 >&2; die "the guest did not boot" ;;
	esac
done
echo "vm: accelerator $accel${why:+ ($why)}; booted in $(($(date +%s) - start)) s: $(cat "$ctl/started")" >&2

# Stream the job's output until QEMU ends; end it at the overall timeout,
# or shortly after the job's status is in when the guest does not power off.
tail -n +1 -s 0.5 -f --pid="$qpid" "$ctl/stdout" & tails+=($!)
tail -n +1 -s 0.5 -f --pid="$qpid" "$ctl/stderr" >&2 & tails+=($!)
done_at=""
while kill -0 "$qpid" 2>/dev/null; do
	now=$(date +%s)
	if [ $((now - start)) -ge "$timeout" ]; then
		stop; wait "${tails[@]}" 2>/dev/null
		die "timeout: the VM ran for $timeout s (SBX_VM_TIMEOUT); the job did not finish"
	fi
	if [ -f "$ctl/rc" ]; then
		[ -n "$done_at" ] || done_at=$now
		[ $((now - done_at)) -lt 30 ] || { echo "vm: the guest did not power off; stopping it" >&2; stop; }
	fi
	sleep 0.5
done
wait "${tails[@]}" 2>/dev/null
tails=() qpid=""
[ -s "$ctl/rc" ] || { last_console 30 >&2; die "the guest ended without the job's exit status (console above)"; }
rc=$(cat "$ctl/rc")
echo "vm: job exited with $rc after $(($(date +%s) - start)) s" >&2
exit "$rc"
