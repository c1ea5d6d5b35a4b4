# Fixtures of the exec tests: one source built twice, without PIE, so the
# two images put their code at the same addresses under different names.
EXEC_SPIN_FLAGS := -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -no-pie -fno-pie
$(BUILD)/fixtures/exec_spin: FIXTURE_FLAGS := $(EXEC_SPIN_FLAGS)

$(BUILD)/fixtures/exec_spin_b: tests/fixtures/exec_spin.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(EXEC_SPIN_FLAGS) -DSPIN_FN=spin_other -o $@ $<

fixtures: $(BUILD)/fixtures/exec_spin_b
