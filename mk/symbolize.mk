# symbolize/: fixtures with special builds (a shared library, stripped
# copies with and without separate debug files), and the benchmark.
SYM_FIX := $(BUILD)/fixtures

# libc's separate debug file: the tests check DWARF names, lines, inline
# frames and languages in libc against eu-addr2line.
PKGS_TEST += libc6-dbg
# tests/e2e/sym_ksym.sh checks which path read /proc/kallsyms.
PKGS_TEST += strace
# tests/e2e/sym_jit_runtimes.sh: JIT runtimes' perf maps.
PKGS_TEST += nodejs openjdk-17-jdk-headless

$(SYM_FIX)/sym_funcs: FIXTURE_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline
$(SYM_FIX)/sym_cpp: FIXTURE_FLAGS := -O2 -g -fno-omit-frame-pointer
$(SYM_FIX)/sym_jit: FIXTURE_FLAGS := -O1 -g -fno-omit-frame-pointer
$(SYM_FIX)/sym_uselib: FIXTURE_FLAGS := -O1 -g -fno-omit-frame-pointer
$(SYM_FIX)/sym_uselib: FIXTURE_LIBS := -L$(SYM_FIX) -lsymlib -Wl,-rpath,'$$ORIGIN' -pthread
$(SYM_FIX)/sym_uselib: $(SYM_FIX)/libsymlib.so

$(SYM_FIX)/libsymlib.so: tests/fixtures/symlib/symlib.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -O1 -g -fPIC -shared -fno-omit-frame-pointer -o $@ $<

# Stripped, nothing else: frames read sym_stripped+0x...
$(SYM_FIX)/sym_stripped: $(SYM_FIX)/sym_funcs
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# Stripped with a .gnu_debuglink to a debug file in the same folder.
$(SYM_FIX)/sym_dbglink: $(SYM_FIX)/sym_funcs
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -o $@ $<
	$(Q)objcopy --add-gnu-debuglink=$@.debug $@

# Stripped, debug file only under a debug root by build-id
# ($(SYM_FIX)/debugroot/.build-id/xx/rest.debug).
$(SYM_FIX)/sym_buildid: $(SYM_FIX)/sym_funcs
	$(call msg,STRIP,$@)
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p'); \
	d=$(SYM_FIX)/debugroot/.build-id/$$(echo $$id | cut -c1-2); \
	mkdir -p $$d && objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug
	$(Q)strip --strip-all -o $@ $<

# Debug files fetched by build-id from debuginfod servers: libdebuginfod's
# header to build (the library itself is loaded with dlopen, only when
# servers are named); the elfutils debuginfod server and iproute2 (a
# private network namespace around it) for tests/e2e/sym_debuginfod.sh.
PKGS_BUILD += libdebuginfod-dev
PKGS_TEST += debuginfod iproute2 curl

# Rust names are demangled by libiberty, linked in statically.
PKGS_BUILD += libiberty-dev
LDLIBS_EXTRA += -liberty

# Linked by LLD, which puts the read-only and the executable segments on
# the same file page: the load bias must come from the segment holding an
# address, not from the page. -gdwarf-aranges because eu-addr2line, which
# the tests compare against, finds no line without .debug_aranges (clang
# emits none by default).
PKGS_TEST += lld rustc
LLD_FLAGS := -O1 -g -gdwarf-aranges -fno-omit-frame-pointer -fuse-ld=lld
$(SYM_FIX)/sym_funcs_lld: tests/fixtures/sym_funcs.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang $(LLD_FLAGS) -fno-inline -o $@ $<

$(SYM_FIX)/libshapes_lld.so: tests/fixtures/lldcxx/shapes.cc tests/fixtures/lldcxx/shapes.h
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang++ $(LLD_FLAGS) -fPIC -shared -o $@ $<

$(SYM_FIX)/sym_cxx_lld: tests/fixtures/lldcxx/main.cc $(SYM_FIX)/libshapes_lld.so
	$(call msg,FIXTURE,$@)
	$(Q)clang++ $(LLD_FLAGS) -o $@ $< -L$(SYM_FIX) -lshapes_lld -Wl,-rpath,'$$ORIGIN'

# Rust, by Debian's rustc (not a toolchain earlier on PATH), in both
# manglings (legacy is rustc's default), linked by BFD and by LLD.
RUSTC := /usr/bin/rustc
RUST_FLAGS := -g -C opt-level=1 -C force-frame-pointers=yes \
	-C llvm-args=-generate-arange-section
RUST_FIX := $(foreach m,legacy v0,$(foreach l,bfd lld,$(SYM_FIX)/sym_rust_$(m)_$(l)))
$(RUST_FIX): tests/fixtures/rust/sym_rust.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RUSTC) $(RUST_FLAGS) $(if $(findstring _v0_,$@),-C symbol-mangling-version=v0) \
		-C link-arg=-fuse-ld=$(lastword $(subst _, ,$@)) -o $@ $<

# rustfilt's demangling (rustc-demangle, Debian's source of the crate):
# what the tests compare Rust names with.
PKGS_TEST += librust-rustc-demangle-dev
RUSTC_DEMANGLE_SRC = $(firstword $(wildcard /usr/share/cargo/registry/rustc-demangle-*/src/lib.rs))
$(SYM_FIX)/librustfilt_demangle.rlib:
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RUSTC) --edition 2015 --crate-type rlib --crate-name rustfilt_demangle \
		-C opt-level=1 -o $@ $(RUSTC_DEMANGLE_SRC)
$(SYM_FIX)/rustfilt: tests/fixtures/rust/rustfilt.rs $(SYM_FIX)/librustfilt_demangle.rlib
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) --edition 2018 -C opt-level=1 \
		--extern rustfilt_demangle=$(SYM_FIX)/librustfilt_demangle.rlib -o $@ $<

# Go (golang-go): one program built with its symbols and DWARF, and
# stripped of both as production builds are, named from .gopclntab.
$(SYM_FIX)/sym_go: tests/fixtures/gofix/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)go build -o $@ $<
$(SYM_FIX)/sym_go_stripped: tests/fixtures/gofix/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)go build -ldflags='-s -w' -o $@ $<

# debuginfod: built with its DWARF (version 4, so its build-id is not
# sym_funcs'), stripped of everything, its debug file alone in a folder
# that tests/e2e/sym_debuginfod.sh serves with the debuginfod server.
# Nothing on disk names it otherwise.
$(SYM_FIX)/sym_dbgd: tests/fixtures/sym_funcs.c $(BUILD)/.flags-fixture
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)/dbgd-served
	$(Q)gcc -O1 -g -gdwarf-4 -fno-omit-frame-pointer -fno-inline -o $@.full $<
	$(Q)objcopy --only-keep-debug $@.full $(@D)/dbgd-served/sym_dbgd.debug
	$(Q)strip --strip-all -o $@ $@.full
	$(Q)rm -f $@.full

SYM_EXTRA := $(SYM_FIX)/libsymlib.so $(SYM_FIX)/sym_stripped \
	$(SYM_FIX)/sym_dbglink $(SYM_FIX)/sym_buildid \
	$(SYM_FIX)/sym_funcs_lld $(SYM_FIX)/sym_cxx_lld $(RUST_FIX) \
	$(SYM_FIX)/rustfilt $(SYM_FIX)/sym_go $(SYM_FIX)/sym_go_stripped \
	$(SYM_FIX)/sym_dbgd
fixtures: $(SYM_EXTRA)

$(BUILD)/bench/sym_bench: bench/sym_bench.c $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)

# bench/debuginfod_cost.sh: its fetch timer, and the server it runs.
PKGS_BENCH += debuginfod libc6-dbg iproute2 curl
fixtures: $(BUILD)/bench/debuginfod_fetch
$(BUILD)/bench/debuginfod_fetch: bench/debuginfod_fetch.c $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)

# Fuzz targets: the parsers need only these files.
FUZZ_SRCS_fuzz_sym_text := symbolize/maps_parse.c symbolize/perf_map.c \
	symbolize/kallsyms.c symbolize/symtab.c
FUZZ_SRCS_fuzz_sym_elf := symbolize/elf_module.c symbolize/symtab.c
FUZZ_SRCS_fuzz_sym_ksym := symbolize/ksym_parse.c symbolize/ksym_cache.c \
	symbolize/symtab.c
FUZZ_SRCS_fuzz_sym_gopcln := symbolize/gopclntab.c symbolize/elf_module.c \
	symbolize/symtab.c
