# hearth — an always-on eBPF profiler.
#
#   make            build build/hearth, build/hearthd and build/hearth-view
#   make run        install missing Debian packages (as root), build, and
#                   profile the whole host for 10 s into a flame graph
#   make test       build with ASan+UBSan and run every test
#   make bench      run the benchmarks against perf, bpftrace, libbpf-tools
#   make install    PREFIX=/usr/local DESTDIR=
#   make uninstall  the same PREFIX and DESTDIR: removes what install put
#   make deb        Debian packages in build/deb (dpkg-buildpackage -b)
#   make clean
#
# V=1 prints every command. VMLINUX_H=path uses a prebuilt vmlinux.h on a
# machine without /sys/kernel/btf/vmlinux. Changing a flag (SAN=1, PREFIX=,
# CC=, CLANG=, CFLAGS or LDFLAGS in the environment) rebuilds what it
# affects.

.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
.SECONDEXPANSION:

V ?= 0
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BUILD ?= build
SAN ?= 0
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

VMLINUX_H ?= $(BUILD)/vmlinux.h
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

# Debian packages: to build, to test, to benchmark.
PKGS_BUILD := gcc make pkg-config clang llvm libbpf-dev bpftool libelf-dev \
	libdw-dev zlib1g-dev libsdl2-dev libsdl2-ttf-dev libsystemd-dev \
	fonts-dejavu-core elfutils libcurl4-openssl-dev
PKGS_TEST := libcmocka-dev xvfb xdotool x11-apps imagemagick libxml2-utils \
	binutils libclang-rt-14-dev util-linux golang-go \
	python3.11 python3.11-dev
PKGS_BENCH := linux-perf bpftrace libbpf-tools valgrind heaptrack

PKGS_LIBS := libbpf libelf libdw zlib sdl2 SDL2_ttf libsystemd libcurl
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS_LIBS) 2>/dev/null)
PKG_LIBS_CORE = $(shell $(PKG_CONFIG) --libs libbpf libelf libdw zlib libsystemd 2>/dev/null)
PKG_LIBS_SDL = $(shell $(PKG_CONFIG) --libs sdl2 SDL2_ttf 2>/dev/null)
# Only hearthd pushes (agent/push*.c): the other programs link no libcurl.
PKG_LIBS_PUSH = $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)

CFLAGS ?= -O2 -g
LIBEXECDIR := $(PREFIX)/libexec/hearth
CFLAGS += -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
	-I. -I$(BUILD) $(PKG_CFLAGS) \
	-DHEARTH_VERSION='"$(VERSION)"' -DHEARTH_FONT_DIR='"/usr/share/fonts/truetype/dejavu"'
LDLIBS_EXTRA := -lpthread -lm
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -I. -Wall -Werror

# One library per part; files named *_main.c are program entry points.
PARTS := profile symbolize agent render
define part_srcs
$(filter-out %_main.c,$(wildcard $(1)/*.c))
endef
$(foreach p,$(PARTS),$(eval SRC_$(p) := $(call part_srcs,$(p))))
$(foreach p,$(PARTS),$(eval OBJ_$(p) := $(patsubst %.c,$(BUILD)/%.o,$(SRC_$(p)))))

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))

# The viewer and PNG export draw with SDL: they are linked into
# hearth-view only, which hearth execs for them (cli/viewer.h), so every
# other subcommand starts without loading SDL and its libraries.
VIEWER_SRCS := cli/view.c cli/export_png.c cli/view_main.c
LAUNCH_SRCS := cli/viewer_exec.c cli/hearth_main.c
CLI_SRCS := $(filter-out $(VIEWER_SRCS) $(LAUNCH_SRCS),$(wildcard cli/*.c))
CLI_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRCS))
VIEWER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(VIEWER_SRCS))
LAUNCH_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LAUNCH_SRCS))

HEARTH := $(BUILD)/hearth
HEARTHD := $(BUILD)/hearthd
HEARTH_VIEW := $(BUILD)/hearth-view

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c tests/fixtures/*.cc)
FIXTURE_BINS := $(patsubst tests/fixtures/%,$(BUILD)/fixtures/%,$(basename $(FIXTURE_SRCS)))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

# Fixtures: frame pointers and debug info unless a fragment says otherwise
# (target-specific FIXTURE_FLAGS in mk/*.mk).
FIXTURE_FLAGS ?= -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
FIXTURE_LIBS ?= -pthread

.PHONY: all run test unit bench install uninstall clean deps deps-test deps-bench fixtures fuzz check-tools
all: $(HEARTH) $(HEARTHD) $(HEARTH_VIEW)

# Fragments add rules for their part (fixtures with special flags, extra
# test targets); they never redefine the targets above.
-include mk/*.mk

# ---- dependencies -------------------------------------------------------
deps:
	$(Q)sh mk/deps.sh $(PKGS_BUILD)
deps-test: deps
	$(Q)sh mk/deps.sh $(PKGS_TEST)
deps-bench: deps
	$(Q)sh mk/deps.sh $(PKGS_BENCH)

# ---- BPF ----------------------------------------------------------------
$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)if [ ! -r /sys/kernel/btf/vmlinux ]; then \
		echo "hearth: this kernel has no BTF (/sys/kernel/btf/vmlinux); build with VMLINUX_H=path/to/vmlinux.h" >&2; exit 1; fi
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX_H) $(BUILD)/.flags-bpf
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -include $(VMLINUX_H) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o $(BUILD)/.flags-bpf
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- C objects ----------------------------------------------------------
$(BUILD)/%.o: %.c $(BPF_SKELS) $(BUILD)/.flags-cc
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Only the viewer's launcher knows where hearth-view is installed, so a new
# PREFIX rebuilds it alone (and relinks hearth).
$(BUILD)/cli/viewer_exec.o: CFLAGS += -DHEARTH_LIBEXEC_DIR='"$(LIBEXECDIR)"'
$(BUILD)/cli/viewer_exec.o: $(BUILD)/.flags-prefix

# Each group of flags is written to $(BUILD)/.flags-GROUP, rewritten only
# when it changes; what a group builds depends on its file. So changing a
# flag (SAN=1, CFLAGS=, LDFLAGS=, PREFIX=, CC=, CLANG=, ...) rebuilds what
# it affects, and nothing else. FORCE is phony: the check runs every time.
# (The groups, FLAGS_TRACKED_*, are set at the end of this file.)
$(BUILD)/.flags-%: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '%s\n' '$(subst ','\'',$(FLAGS_TRACKED_$*))' | cmp -s - $@ || \
		printf '%s\n' '$(subst ','\'',$(FLAGS_TRACKED_$*))' > $@
.PHONY: FORCE
FORCE:

$(BUILD)/lib%.a: $$(OBJ_$$*)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

LIBS_ALL := $(BUILD)/libagent.a $(BUILD)/librender.a $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
LIBS_DAEMON := $(BUILD)/libagent.a $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a

# hearth links no SDL, and only the libraries it calls; whatever needs
# hearth needs its viewer too.
$(HEARTH): $(CLI_OBJS) $(LAUNCH_OBJS) $(LIBS_ALL) $(BUILD)/.flags-ld | $(HEARTH_VIEW)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $(CLI_OBJS) $(LAUNCH_OBJS) $(LIBS_ALL) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)

$(HEARTH_VIEW): $(CLI_OBJS) $(VIEWER_OBJS) $(LIBS_ALL) $(BUILD)/.flags-ld
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(VIEWER_OBJS) $(LIBS_ALL) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(LDLIBS_EXTRA)

# The daemon links no SDL: a headless server needs no display libraries.
$(HEARTHD): $(BUILD)/agent/hearthd_main.o $(LIBS_DAEMON) $(BUILD)/.flags-ld
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(BUILD)/agent/hearthd_main.o $(LIBS_DAEMON) $(PKG_LIBS_CORE) $(PKG_LIBS_PUSH) $(LDLIBS_EXTRA)

# ---- tests --------------------------------------------------------------
$(BUILD)/tests/%: tests/unit/%.c $(LIBS_ALL) $(BUILD)/.flags-cc $(BUILD)/.flags-ld
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIBS_ALL) $(LDFLAGS) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(PKG_LIBS_PUSH) -lcmocka $(LDLIBS_EXTRA)

$(BUILD)/fixtures/%: tests/fixtures/%.c $(BUILD)/.flags-fixture
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(FIXTURE_FLAGS) -o $@ $< $(FIXTURE_LIBS)

$(BUILD)/fixtures/%: tests/fixtures/%.cc $(BUILD)/.flags-fixture
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)g++ $(FIXTURE_FLAGS) -o $@ $< $(FIXTURE_LIBS)

fixtures: $(FIXTURE_BINS)

# Fuzz targets: clang + libFuzzer, each compiled with the sources it names
# in FUZZ_SRCS_<target> (set in mk/*.mk), default the profile part.
$(BUILD)/fuzz/%: tests/fuzz/%.c $(SRC_profile) $(SRC_symbolize) $(SRC_agent) $(BPF_SKELS) $(BUILD)/.flags-fuzz
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -std=c17 -g -O1 -D_GNU_SOURCE -I. -I$(BUILD) $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ $< \
		$(if $(FUZZ_SRCS_$*),$(FUZZ_SRCS_$*),$(SRC_profile)) $(PKG_LIBS_CORE) -lm

fuzz: $(FUZZ_BINS)

unit: $(UNIT_BINS)

# The README's test command. Runs as root in CI; installs what it needs.
# The sanitized build on every CPU: serial, it took a fifth of the run.
test: deps-test
	$(Q)$(MAKE) --no-print-directory -j$$(nproc) BUILD=build-test SAN=1 all unit fixtures fuzz
	$(Q)BUILD=build-test sh tests/run.sh

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh mk/run.sh $(BUILD)

bench: deps-bench
	$(Q)$(MAKE) --no-print-directory all fixtures
	$(Q)BUILD=$(BUILD) sh bench/run.sh

# ---- install ------------------------------------------------------------
MANPAGES := $(wildcard man/*.[0-9])
# man/NAME.S -> share/man/manS/NAME.S
MAN_DEST = $(DESTDIR)$(PREFIX)/share/man/man$(subst .,,$(suffix $(1)))/$(notdir $(1))
UNITDIR := /lib/systemd/system
# bash-completion's loader looks in $$XDG_DATA_DIRS, /usr/local/share and
# /usr/share among them; one file serves both commands.
COMPLETIONDIR = $(PREFIX)/share/bash-completion/completions
# The push drop-in is shipped, not enabled: the admin copies it into
# /etc/systemd/system/hearthd.service.d/ (see hearthd(8)).
PUSHDROPINDIR = $(PREFIX)/share/hearth

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(LIBEXECDIR)
	install -m 0755 $(HEARTH) $(DESTDIR)$(PREFIX)/bin/hearth
	install -m 0755 $(HEARTH_VIEW) $(DESTDIR)$(LIBEXECDIR)/hearth-view
	install -m 0755 $(HEARTHD) $(DESTDIR)$(PREFIX)/sbin/hearthd
	$(Q)$(foreach m,$(MANPAGES),install -D -m 0644 $(m) $(call MAN_DEST,$(m)) &&) true
	install -D -m 0644 etc/bash-completion/hearth $(DESTDIR)$(COMPLETIONDIR)/hearth
	install -D -m 0644 etc/bash-completion/hearth $(DESTDIR)$(COMPLETIONDIR)/hearthd
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)/usr/lib/sysusers.d $(DESTDIR)/usr/lib/tmpfiles.d $(DESTDIR)/etc/hearth
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/hearthd.service > $(DESTDIR)$(UNITDIR)/hearthd.service
	install -m 0644 systemd/hearth.sysusers $(DESTDIR)/usr/lib/sysusers.d/hearth.conf
	install -m 0644 systemd/hearth.tmpfiles $(DESTDIR)/usr/lib/tmpfiles.d/hearth.conf
	$(Q)[ -f $(DESTDIR)/etc/hearth/hearthd.conf ] || install -m 0644 etc/hearthd.conf $(DESTDIR)/etc/hearth/hearthd.conf
	install -D -m 0644 systemd/hearthd-push.conf $(DESTDIR)$(PUSHDROPINDIR)/hearthd-push.conf

# Removes what install put there. The config goes only when it is the
# shipped one, unchanged; the store (/var/lib/hearth) is never touched.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/hearth $(DESTDIR)$(LIBEXECDIR)/hearth-view $(DESTDIR)$(PREFIX)/sbin/hearthd
	rm -f $(foreach m,$(MANPAGES),$(call MAN_DEST,$(m)))
	rm -f $(DESTDIR)$(COMPLETIONDIR)/hearth $(DESTDIR)$(COMPLETIONDIR)/hearthd
	rm -f $(DESTDIR)$(UNITDIR)/hearthd.service $(DESTDIR)/usr/lib/sysusers.d/hearth.conf $(DESTDIR)/usr/lib/tmpfiles.d/hearth.conf
	rm -f $(DESTDIR)$(PUSHDROPINDIR)/hearthd-push.conf
	$(Q)rmdir $(DESTDIR)$(PUSHDROPINDIR) 2>/dev/null || true
	$(Q)if cmp -s etc/hearthd.conf $(DESTDIR)/etc/hearth/hearthd.conf; then \
		rm -f $(DESTDIR)/etc/hearth/hearthd.conf; rmdir $(DESTDIR)/etc/hearth 2>/dev/null || true; \
	elif [ -f $(DESTDIR)/etc/hearth/hearthd.conf ]; then \
		echo "hearth: kept $(DESTDIR)/etc/hearth/hearthd.conf: it was changed"; fi
	$(Q)rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true

clean:
	rm -rf build build-test

# make print-NAME prints a variable (VERSION, PKGS_BUILD, ...) for scripts.
print-%:
	@printf '%s\n' '$($*)'

# The flag groups (see $(BUILD)/.flags-%), taken once every fragment has
# added its part, as simple variables: a target-specific value (a fixture's
# FIXTURE_FLAGS, viewer_exec.o's CFLAGS) never leaks into them.
FLAGS_TRACKED_cc := $(CC) $(CPPFLAGS) $(CFLAGS)
FLAGS_TRACKED_ld := $(CC) $(LDFLAGS) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(PKG_LIBS_PUSH) $(LDLIBS_EXTRA)
FLAGS_TRACKED_bpf := $(CLANG) $(BPF_CFLAGS) $(BPFTOOL)
FLAGS_TRACKED_fuzz := $(CLANG) $(PKG_CFLAGS) $(PKG_LIBS_CORE)
FLAGS_TRACKED_fixture := $(FIXTURE_FLAGS) $(FIXTURE_LIBS)
FLAGS_TRACKED_prefix := $(LIBEXECDIR)
# The benchmarks' tools (mk/*.mk: $(BUILD)/bench/NAME from bench/NAME.c)
# compile and link with $(CC) $(CFLAGS) $(LDFLAGS).
$(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c)): $(BUILD)/.flags-cc $(BUILD)/.flags-ld

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
