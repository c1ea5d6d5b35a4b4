# profile/build*.c: the tree built from sorted stacks. The folded fuzz
# target names its sources (mk/profile.mk); the builder's page helper is
# one of them.
$(BUILD)/fuzz/fuzz_folded: FUZZ_SRCS_fuzz_folded += profile/build_ahead.c
