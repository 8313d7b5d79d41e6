# sbxrun - build, test, demo, install. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/sbxrun
MANDIR = $(PREFIX)/share/man/man1
VERSION = 0.1

# libarchive, libcurl, libcrypto and libssl are loaded on first use (src/base/lazylib.c),
# libsystemd only to ask systemd for a delegated cgroup (src/sandbox/scope.c),
# zlib for export --patch, libxml2 for Maven's metadata (src/pkg/mavenmeta.c), libgit2 for the .gitignore fold of changes show
# (src/undo/csignore.c; its soname, read here, changes with each release):
# only their headers are needed at build time.
PKGS = libseccomp libcap-ng inih json-c
LAZY_PKGS = libarchive libcurl libcrypto libssl libsystemd zlib libgit2 libxml-2.0
CC ?= cc
# The builds of check, demo and the other test targets (a second make, after
# `deps`) use every core.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# pkg-config runs when make starts: the targets that install the build
# dependencies first (check, demo) build in a second make, after `deps`.
PKG_CONFIG ?= pkg-config
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) $(LAZY_PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -ldl
LIBGIT2_SONAME := $(shell objdump -p $$($(PKG_CONFIG) --variable=libdir libgit2 2>/dev/null)/libgit2.so 2>/dev/null | sed -n 's/^ *SONAME *//p')
# The four are linked statically where their archives are installed (the
# -dev packages ship them): mapping and relocating four shared objects cost
# 0.2 ms of every start (bench/README.md). LINK_SHARED=1 links them shared,
# as a distribution may prefer (a library update then needs no rebuild).
ifneq ($(LINK_SHARED),1)
ifeq ($(words $(foreach l,seccomp cap-ng inih json-c,$(filter /%,$(shell $(CC) -print-file-name=lib$(l).a 2>/dev/null)))),4)
PKG_LIBS := -Wl,-Bstatic $(shell $(PKG_CONFIG) --libs --static $(PKGS) 2>/dev/null) -Wl,-Bdynamic -ldl
endif
endif

WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wno-missing-field-initializers -Wno-format-truncation
HARDEN = -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) $(HARDEN) $(PKG_CFLAGS) -iquote src \
	  -DSBX_DATADIR='"$(DATADIR)"' -DSBX_VERSION='"$(VERSION)"' \
	  $(if $(LIBGIT2_SONAME),-DSBX_LIBGIT2='"$(LIBGIT2_SONAME)"')
LDFLAGS += -pie -Wl,-z,relro,-z,now
ifeq ($(WERROR),1)
CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
BUILD = build-san
BIN = sbxrun-san
else
BUILD = build
BIN = sbxrun
endif

# src/ by layer (HACKING.md): cmd -> mcp, cluster -> undo -> session -> sandbox -> gateway -> net, store, term, pkg -> base.
LAYERS = cmd mcp cluster undo session sandbox gateway net store term pkg base
SRCS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
HDRS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.h))
OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(BUILD)/cmd/main.o,$(OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps check check-net check-slow check-vm13 check-vm13-smoke vm13-image unit integration demo install install-apparmor uninstall clean fuzz images bench bench-ab bench-net bench-cred bench-undo docs check-vm check-vm-full check-fresh

all: $(BIN)

$(BIN): $(BUILD)/sbxrun
	cp $< $@

$(BUILD)/sbxrun: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/%.o: src/%.c $(HDRS) | $(BUILD)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)/tests $(addprefix $(BUILD)/,$(LAYERS))

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(LIB_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(PKG_LIBS)

DOCS = man/sbxrun.1 completions/sbxrun.bash completions/_sbxrun completions/sbxrun.fish

$(BUILD)/gen-docs: tools/gen-docs.c $(LIB_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(PKG_LIBS)

# The man page and completions come from the option table: regenerate them
# after changing it (make check fails while a committed one differs).
docs: $(BUILD)/gen-docs
	$(BUILD)/gen-docs man > man/sbxrun.1
	$(BUILD)/gen-docs bash > completions/sbxrun.bash
	$(BUILD)/gen-docs zsh > completions/_sbxrun
	$(BUILD)/gen-docs fish > completions/sbxrun.fish

DEPS_CMD ?= sh tests/deps.sh
deps:
	$(DEPS_CMD)

unit: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do $$t || exit 1; done

# The full suite: dependencies, build, test images, unit and integration
# tests as an unprivileged user (and some as root). Ends "N passed, N failed".
# Hermetic: no network beyond the distribution's archive; the tests that
# reach further are in the tier `net`, listed as skipped here (tests/README.md).
check: deps
	$(MAKE) -j$(JOBS) all $(UNIT_BINS) tests/helper/probe tests/helper/nouserns tests/helper/preload.so $(BUILD)/gen-docs
	bash tests/run.sh

# The tier `net`: the tests that reach beyond the distribution's archive
# (the npm registry), as make check runs the others.
check-net: deps
	$(MAKE) -j$(JOBS) all tests/helper/probe
	SBX_TIER=net bash tests/run.sh

# The tier `slow`: tests that take minutes of their own and stay out of make
# check's (and CI's) time, such as building a Debian 13 image.
check-slow: deps
	sh tests/deps.sh slow
	$(MAKE) -j$(JOBS) all tests/helper/probe
	SBX_TIER=slow bash tests/run.sh

# The tests that depend on the host's kernel and cgroups, in a Debian 12 VM
# (its own 6.1 kernel, systemd, cgroup v2) under QEMU: tests/vm/README.md.
# In the same boot, the package of `make deb` installed and tried (check-deb).
check-vm: deps
	sh tests/deps.sh vm
	$(MAKE) -j$(JOBS) all tests/helper/probe tests/helper/nouserns tests/helper/preload.so deb
	bash tests/vm/check.sh --deb $$(ls $(DEB_OUT)/sbxrun_*.deb)

# check-vm with every file in every mode, the `# vm-modes:` lines ignored
# (tests/vm/README.md); about ten minutes more under TCG, not part of CI.
check-vm-full: deps
	sh tests/deps.sh vm
	$(MAKE) -j$(JOBS) all tests/helper/probe tests/helper/nouserns tests/helper/preload.so deb
	SBX_VM_ALL_MODES=1 bash tests/vm/check.sh --deb $$(ls $(DEB_OUT)/sbxrun_*.deb)

# The same in a Debian 13 VM (its 6.12 kernel, systemd 257, AppArmor 4.1
# enabled): the package of `make deb` (built here, on Debian 12) installed,
# its AppArmor profile loaded, removed and purged; whole, not part of CI
# (tests/vm/README.md: what it runs and how long it takes).
check-vm13: deps
	sh tests/deps.sh vm
	$(MAKE) -j$(JOBS) all tests/helper/probe tests/helper/nouserns tests/helper/preload.so deb
	SBX_VM_SUITE=trixie bash tests/vm/check.sh --deb $$(ls $(DEB_OUT)/sbxrun_*.deb) $(VM13_FILES)

# CI's short pass of check-vm13: as a user under the user's systemd manager,
# a run, a session, the memory, pids, cpu and disk limits, and the package
# (install, profile loaded, remove, purge). `make vm13-image` builds the VM
# alone (CI builds it beside check-vm).
VM13_SMOKE_FILES = 20-run.sh 26-session.sh 40-limits.sh 45-cgroup2.sh
VM13_SMOKE_TESTS = test_debian_and_python test_disk_quota_gives_enospc test_lifecycle_and_persistence \
	test_memory_bomb_is_a_cgroup_oom_kill test_fork_bomb_is_held_by_pids_max test_cpus_half_is_held_by_cpu_max \
	test_disk_storage_stops_one_file_at_the_quota
vm13-image: deps
	sh tests/deps.sh vm
	SBX_VM_SUITE=trixie sh tests/vm/build.sh > /dev/null
check-vm13-smoke: deps
	sh tests/deps.sh vm
	$(MAKE) -j$(JOBS) all tests/helper/probe tests/helper/nouserns tests/helper/preload.so deb
	SBX_VM_SUITE=trixie SBX_TESTS="$(VM13_SMOKE_TESTS)" bash tests/vm/check.sh --modes user-systemd \
		--deb $$(ls $(DEB_OUT)/sbxrun_*.deb) $(VM13_SMOKE_FILES)

# The README's two commands as the first ones on a bare Debian 12 (a VM with
# no build dependencies, networked through QEMU): a clean clone, make demo,
# make check. About an hour under software emulation; not part of CI.
check-fresh: deps
	sh tests/deps.sh vm
	bash tests/vm/fresh.sh

tests/helper/probe: tests/helper/probe.c
	$(CC) -static -O2 -Wall -o $@ $<

tests/helper/nouserns: tests/helper/nouserns.c
	$(CC) -static -O2 -Wall -o $@ $<

# A library for LD_PRELOAD that says where its constructor ran (the AppArmor
# tests: tests/vm/guest-deb.sh, tests/integration/14-hostchild.sh).
tests/helper/preload.so: tests/helper/preload.c
	$(CC) -shared -fPIC -O2 -Wall -o $@ $<

DEMO_CMD ?= bash tests/demo.sh
demo: deps
	$(MAKE) -j$(JOBS) all
	$(DEMO_CMD)

fuzz:
	bash tests/fuzz/run.sh

# Benchmarks against peers (hyperfine): see bench/README.md.
bench: all
	sh tests/deps.sh bench
	bash bench/run.sh

# Start-up of this build against an earlier revision: make bench-ab BASE=REV.
bench-ab: all
	sh tests/deps.sh bench
	bash bench/ab.sh $(or $(BASE),$(error bench-ab: say which revision, BASE=REV))

# What --net packages adds to a start, beside --net none (and BASE's, when
# given): make bench-net [BASE=REV].
bench-net: all
	sh tests/deps.sh bench
	bash bench/netstart.sh $(BASE)

# What a brokered HTTPS request adds over a tunnelled one ([credentials],
# bench/cred.sh), as a user whose store holds the node image.
bench-cred: all
	bash bench/cred.sh

# Issue 36's undo and branch goals: run --project on a 1 GB checkout, changes
# diff and apply of 10,000 files, session snapshot and fork (bench/undo.sh).
bench-undo: all
	sh tests/deps.sh bench
	bash bench/undo.sh

# A Debian package (debian/, debhelper) in build/deb/: source and binary
# packages, built by dpkg-buildpackage in a copy of the checkout's files (git
# ls-files: committed and new, not ignored), so it writes nothing beside the
# checkout and cleans nothing in it; then lintian, which fails it on an error
# or a warning. Installs debhelper and lintian first ($(DEPS_CMD) deb).
DEB_OUT = build/deb
.PHONY: deb check-deb
deb:
	$(DEPS_CMD) deb
	@git rev-parse --is-inside-work-tree > /dev/null 2>&1 || { echo "make deb: needs a git checkout (it packages the files git lists)" >&2; exit 2; }
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/sbxrun-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		tar -c --null -T - --ignore-failed-read --warning=no-failed-read | tar -x -C $(DEB_OUT)/sbxrun-$(VERSION)
	cd $(DEB_OUT)/sbxrun-$(VERSION) && dpkg-buildpackage --no-sign -jauto > ../build.log 2>&1 || { tail -40 ../build.log; exit 1; }
	rm -rf $(DEB_OUT)/sbxrun-$(VERSION)
	lintian --fail-on error,warning $(DEB_OUT)/*.changes
	@ls $(DEB_OUT)/*.deb

# The package alone on Debian 12 (the VM of check-vm, which does this too;
# tests/vm/guest-deb.sh): apt installs it, the user sbxtest imports the
# minimal test image and runs `sbxrun run -- true`, man and `sbxrun profile
# ls` find what it installed.
check-deb: deb
	sh tests/deps.sh vm
	$(MAKE) -j$(JOBS) all tests/helper/probe tests/helper/nouserns tests/helper/preload.so
	bash tests/vm/check.sh --modes "" --deb $$(ls $(DEB_OUT)/sbxrun_*.deb)

BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d

install: sbxrun
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/profiles $(DESTDIR)$(DATADIR)/rootfs \
		$(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 sbxrun $(DESTDIR)$(BINDIR)/sbxrun
	install -m 0644 profiles/*.ini $(DESTDIR)$(DATADIR)/profiles/
	install -m 0644 rootfs/*.packages $(DESTDIR)$(DATADIR)/rootfs/
	install -m 0755 rootfs/build.sh $(DESTDIR)$(DATADIR)/rootfs/
	install -m 0644 man/sbxrun.1 $(DESTDIR)$(MANDIR)/sbxrun.1
	install -m 0644 completions/sbxrun.bash $(DESTDIR)$(BASHCOMPDIR)/sbxrun
	install -m 0644 completions/_sbxrun $(DESTDIR)$(ZSHCOMPDIR)/_sbxrun
	install -m 0644 completions/sbxrun.fish $(DESTDIR)$(FISHCOMPDIR)/sbxrun.fish

# Ubuntu 23.10+ (kernel.apparmor_restrict_unprivileged_userns=1): a profile
# that lets the installed binary make user namespaces. Separate from install,
# which never writes /etc.
install-apparmor:
	install -d $(DESTDIR)/etc/apparmor.d
	sed 's|/usr/local/bin/sbxrun|$(BINDIR)/sbxrun|' contrib/apparmor-sbxrun > $(DESTDIR)/etc/apparmor.d/sbxrun
	chmod 0644 $(DESTDIR)/etc/apparmor.d/sbxrun
	if [ -z "$(DESTDIR)" ] && command -v apparmor_parser >/dev/null; then apparmor_parser -r /etc/apparmor.d/sbxrun; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/sbxrun $(DESTDIR)$(MANDIR)/sbxrun.1 $(DESTDIR)$(BASHCOMPDIR)/sbxrun \
		$(DESTDIR)$(ZSHCOMPDIR)/_sbxrun $(DESTDIR)$(FISHCOMPDIR)/sbxrun.fish
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-san build-fuzz sbxrun sbxrun-san tests/helper/probe tests/helper/nouserns tests/helper/preload.so
