# also-as-root
# vm-modes: user-systemd
# ptrace inside the sandbox (issue 4's escape suite keeps it allowed among the
# sandbox's own processes): a real gdb, installed through the packages proxy,
# runs a program; that it cannot disable ASLR shows personality() stays
# denied. Its own file so that check-vm can leave it out (30-escape's probe
# tries ptrace and personality there in every mode; the apt install takes
# minutes under TCG) and run it, when named, in one mode.

# gdb asks for ADDR_NO_RANDOMIZE, which the filter refuses: it must warn and
# still run the program (gdb is installed from the image's own apt sources).
test_gdb_runs_a_program_without_disabling_aslr() {
	run "$SBX" run -p packages --image minimal --timeout 10m -- sh -c '
		apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends gdb >/dev/null 2>&1 || echo "apt failed"
		gdb -batch -ex run --args /bin/echo gdb-ran-it 2>&1'
	assert_status 0
	assert_not_contains "$out" "apt failed"
	assert_contains "$out" "gdb-ran-it"
	assert_contains "$out" "exited normally"
	assert_contains "$out" "Error disabling address space randomization: Operation not permitted"
}
