# The diff, sandwich, call tree and live views (render/views.c and friends):
# their benchmark. `make bench-diff` (and `make bench`, through
# bench/diff_bench.sh) prints merge, frame and live-update times for two
# generated 1,000,000-line profiles (DIFF_BENCH_LINES, DIFF_BENCH_LIVE_LINES).
DIFF_BENCH := $(BUILD)/bench/diff_bench
$(DIFF_BENCH): bench/diff_bench.c $(BUILD)/librender.a $(BUILD)/libprofile.a
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/librender.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(LDLIBS_EXTRA)

bench: $(DIFF_BENCH)

.PHONY: bench-diff
bench-diff: $(DIFF_BENCH)
	$(Q)BUILD=$(BUILD) sh bench/diff_bench.sh
