# The load benchmark: CPU and wall time of each step of loading a folded
# profile (read + parse, sort, the viewer's model). Not built by `all`:
#   make BUILD=build build/bench/parse_bench
#   build/bench/parse_bench build/bench/render_bench-1000000.folded
PARSE_BENCH := $(BUILD)/bench/parse_bench
$(PARSE_BENCH): bench/parse_bench.c $(BUILD)/librender.a $(BUILD)/libprofile.a
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/librender.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(LDLIBS_EXTRA)
