# Every shell example of README.md, docs/*.md and the man page runs as
# written (issue 29), as the unprivileged test user with the test images
# (`minimal` is the default profile's image). tests/examples.sh extracts and
# runs them, and stops the sessions they leave; docs/testing.md says how an
# example is marked illustrative.

test_examples_readme() { cd "$TOP" && bash tests/examples.sh run README.md; }
test_examples_man_page() { cd "$TOP" && bash tests/examples.sh run man/sbxrun.1; }
test_examples_docs() { cd "$TOP" && bash tests/examples.sh run docs/*.md; }

# An example without a language, or one that fails, fails the test, naming
# the file and the line.
test_examples_convention_is_enforced() {
	printf '# t\n\n```\nsbxrun run -- true\n```\n' > "$TESTDIR/bad.md"
	run bash "$TOP/tests/examples.sh" list "$TESTDIR/bad.md"
	assert_status 1
	assert_contains "$out" "$TESTDIR/bad.md:3: a fence without a language"
	printf '```sh\nsbxrun run -i tiny -- false\nsbxrun run -i tiny -- true   # fails\n```\n' > "$TESTDIR/fails.md"
	run bash "$TOP/tests/examples.sh" run "$TESTDIR/fails.md"
	assert_status 1
	assert_contains "$out" "$TESTDIR/fails.md:2: example failed (exit 1): sbxrun run -i tiny -- false"
	assert_contains "$out" "$TESTDIR/fails.md:3: example should fail (exit 0)"
	assert_contains "$out" "2 run, 2 failed"
	# the marker holds for the one block after it, not the next
	printf '<!-- illustrative: not here -->\n```sh\nfalse\n```\n\n```sh\ntrue\n```\n' > "$TESTDIR/two.md"
	run bash "$TOP/tests/examples.sh" list "$TESTDIR/two.md"
	assert_contains "$out" "skip $TESTDIR/two.md:2"
	assert_contains "$out" "run $TESTDIR/two.md:7"
}
