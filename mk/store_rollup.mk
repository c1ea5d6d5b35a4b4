# The store's roll-up test (tests/e2e/daemon_rollup.sh) builds its store
# and its reference merge with the daemon benchmark's store tool, so the
# tool is built with the fixtures.
fixtures: $(BUILD)/bench/daemon_store_tool

# The store reader's fuzz target: hostile segments and indexes.
FUZZ_SRCS_fuzz_store_scan := agent/store_scan.c agent/store_marks.c agent/trusted_dir.c agent/store_codec.c \
	agent/store_codec_read.c $(SRC_profile)
# ... and over whole damaged files: the writer's count at open too.
FUZZ_SRCS_fuzz_store_files := agent/store.c agent/store_rollup.c agent/store_scan.c \
	agent/store_marks.c agent/trusted_dir.c agent/store_codec.c agent/store_codec_read.c \
	$(SRC_profile)
