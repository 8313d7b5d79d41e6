# sbxrun - build, test, demo, install. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/sbxrun
MANDIR = $(PREFIX)/share/man/man1
VERSION = 0.1

# libarchive, libcurl and libcrypto are loaded on first use (src/lazylib.c):
# only their headers are needed at build time.
PKGS = libseccomp libcap-ng inih json-c
LAZY_PKGS = libarchive libcurl libcrypto
CC ?= cc
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(LAZY_PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl

WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wno-missing-field-initializers -Wno-format-truncation
HARDEN = -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) $(HARDEN) $(PKG_CFLAGS) \
	  -DSBX_DATADIR='"$(DATADIR)"' -DSBX_VERSION='"$(VERSION)"'
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

SRCS := $(wildcard src/*.c)
OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(BUILD)/main.o,$(OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps check unit integration demo install uninstall clean fuzz images bench

all: $(BIN)

$(BIN): $(BUILD)/sbxrun
	cp $< $@

$(BUILD)/sbxrun: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/%.o: src/%.c $(wildcard src/*.h) | $(BUILD)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)/tests

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(LIB_OBJS) | $(BUILD)
	$(CC) $(CFLAGS) -iquote src -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(PKG_LIBS)

deps:
	sh tests/deps.sh

unit: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do $$t || exit 1; done

# The full suite: dependencies, build, test images, unit and integration
# tests as an unprivileged user (and some as root). Ends "N passed, N failed".
check: deps
	$(MAKE) all $(UNIT_BINS) tests/helper/probe
	bash tests/run.sh

tests/helper/probe: tests/helper/probe.c
	$(CC) -static -O2 -Wall -o $@ $<

demo: deps all
	bash tests/demo.sh

fuzz:
	bash tests/fuzz/run.sh

# Benchmarks against peers (hyperfine): see bench/README.md.
bench: all
	bash bench/run.sh

install: sbxrun
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/profiles $(DESTDIR)$(DATADIR)/rootfs
	install -m 0755 sbxrun $(DESTDIR)$(BINDIR)/sbxrun
	install -m 0644 profiles/*.ini $(DESTDIR)$(DATADIR)/profiles/
	cp -R rootfs/. $(DESTDIR)$(DATADIR)/rootfs/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/sbxrun
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-san build-fuzz sbxrun sbxrun-san tests/helper/probe
