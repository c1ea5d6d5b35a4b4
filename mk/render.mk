# render: the viewer (SDL2 + SDL2_ttf; PNG export through SDL2_image).
PKGS_BUILD += libsdl2-image-dev
PKG_LIBS_SDL += $(shell $(PKG_CONFIG) --libs SDL2_image 2>/dev/null)
# The viewer's font comes from fontconfig (render/font_find.c), DejaVu
# when it has none.
PKGS_BUILD += libfontconfig-dev
PKGS_LIBS += fontconfig
PKG_LIBS_SDL += $(shell $(PKG_CONFIG) --libs fontconfig 2>/dev/null)

# The render benchmark: a generated 1,000,000-line profile, load time,
# memory, frame time with the software renderer.
RENDER_BENCH := $(BUILD)/bench/render_bench
$(RENDER_BENCH): bench/render_bench.c $(BUILD)/librender.a $(BUILD)/libprofile.a
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(BUILD)/librender.a $(BUILD)/libprofile.a $(LDFLAGS) $(PKG_LIBS_CORE) $(PKG_LIBS_SDL) $(LDLIBS_EXTRA)

.PHONY: bench-render
bench-render: $(RENDER_BENCH) $(HEARTH)
	$(Q)BUILD=$(BUILD) sh bench/render_bench.sh
# The SVG export is checked in a real browser (headless) and its script
# under node.
PKGS_TEST += nodejs chromium
