# symbolize/cfi_*: the CFI compiler's fixtures and fuzz targets.
CFI_FIX := $(BUILD)/fixtures

# The no-frame-pointer fixture linked at a fixed address (not a PIE): its
# module base is 0x400000, not 0.
$(CFI_FIX)/unwind_nofp_nopie: tests/fixtures/unwind_nofp.c $(BUILD)/.flags-fixture
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -O2 -g -fomit-frame-pointer -no-pie -o $@ $< -pthread

fixtures: $(CFI_FIX)/unwind_nofp_nopie

# The fuzz target damages a real binary: the fixture above, stripped,
# compiled in as a byte array.
$(BUILD)/fuzz/cfi_seed.c: $(CFI_FIX)/unwind_nofp
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)strip --strip-all -o $@.elf $<
	$(Q){ echo 'const unsigned char cfi_seed[] = {'; \
		od -An -v -tx1 $@.elf | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo '};'; \
		echo 'const unsigned long cfi_seed_len = sizeof(cfi_seed);'; } > $@
	$(Q)rm -f $@.elf
$(BUILD)/fuzz/fuzz_cfi_compile: $(BUILD)/fuzz/cfi_seed.c
FUZZ_SRCS_fuzz_cfi_compile := symbolize/cfi_compile.c symbolize/cfi_walk.c \
	symbolize/elf_module.c symbolize/symtab.c $(BUILD)/fuzz/cfi_seed.c
$(BUILD)/fuzz/fuzz_cfi_cache: $(BUILD)/fuzz/cfi_seed.c
FUZZ_SRCS_fuzz_cfi_cache := symbolize/cfi_cache.c $(FUZZ_SRCS_fuzz_cfi_compile)

# bench/cfi_cost.sh's tool.
$(BUILD)/bench/cfi_cost: bench/cfi_cost.c $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymbolize.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(LDLIBS_EXTRA)
bench: $(BUILD)/bench/cfi_cost
