# Fixtures for DWARF unwinding: optimised, without frame pointers, so a
# frame-pointer walk through them fails and only CFI gives whole stacks.
UNW_FIX := $(BUILD)/fixtures
NOFP_FLAGS := -O2 -g -fomit-frame-pointer

$(UNW_FIX)/unwind_nofp: FIXTURE_FLAGS := $(NOFP_FLAGS)
$(UNW_FIX)/unwind_replay: FIXTURE_FLAGS := $(NOFP_FLAGS)
$(UNW_FIX)/unwind_cxx: FIXTURE_FLAGS := $(NOFP_FLAGS)
$(UNW_FIX)/unwind_cxx: FIXTURE_LIBS := -L$(UNW_FIX) -lnofp -Wl,-rpath,'$$ORIGIN'
$(UNW_FIX)/unwind_cxx: $(UNW_FIX)/libnofp.so

$(UNW_FIX)/libnofp.so: tests/fixtures/unwindlib/nofp_lib.cc
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)g++ $(NOFP_FLAGS) -fPIC -shared -o $@ $<

fixtures: $(UNW_FIX)/libnofp.so

# Its entry point has no CFI (musl's _start has none either).
$(UNW_FIX)/start_nocfi: FIXTURE_FLAGS := $(NOFP_FLAGS) -nostartfiles
