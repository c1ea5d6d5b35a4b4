# symbolize/: fixtures with special builds (a shared library, stripped
# copies with and without separate debug files), and the benchmark.
SYM_FIX := $(BUILD)/fixtures

# libc's separate debug file: the tests check DWARF names, lines, inline
# frames and languages in libc against eu-addr2line.
PKGS_TEST += libc6-dbg
# tests/e2e/sym_ksym.sh checks which path read /proc/kallsyms.
PKGS_TEST += strace

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

SYM_EXTRA := $(SYM_FIX)/libsymlib.so $(SYM_FIX)/sym_stripped \
	$(SYM_FIX)/sym_dbglink $(SYM_FIX)/sym_buildid
fixtures: $(SYM_EXTRA)

$(BUILD)/bench/sym_bench: bench/sym_bench.c $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)

# Fuzz targets: the parsers need only these files.
FUZZ_SRCS_fuzz_sym_text := symbolize/maps_parse.c symbolize/perf_map.c \
	symbolize/kallsyms.c symbolize/symtab.c
FUZZ_SRCS_fuzz_sym_elf := symbolize/elf_module.c symbolize/symtab.c
FUZZ_SRCS_fuzz_sym_ksym := symbolize/ksym_parse.c symbolize/ksym_cache.c \
	symbolize/symtab.c
