#!/bin/sh
# The viewer's font (and so export --png's) comes from fontconfig, with
# DejaVu Sans when fontconfig has none:
#  - HEARTH_FONT asks fontconfig for a family: "DejaVu Sans Mono" and
#    "DejaVu Serif" draw pictures unlike DejaVu Sans's and each other's;
#  - with a fontconfig configuration that knows no fonts the picture is
#    DejaVu Sans's, the same as with HEARTH_FONT_DIR naming DejaVu's
#    folder (which bypasses fontconfig);
#  - the same command twice draws the same bytes (so a difference is the
#    font's).
. tests/e2e/lib.sh
in=tests/fixtures/profiles/small.folded
dejavu=/usr/share/fonts/truetype/dejavu
for f in DejaVuSans.ttf DejaVuSansMono.ttf DejaVuSerif.ttf; do
	[ -f "$dejavu/$f" ] || fail "$dejavu/$f is missing (package fonts-dejavu-core)"
done
png() { # NAME ENV...
	n=$1; shift
	env -u DISPLAY -u HEARTH_FONT -u HEARTH_FONT_DIR "$@" "$HEARTH" export --png --width 600 \
		-o "$T/$n.png" "$in" > "$T/$n.log" 2>&1 || { cat "$T/$n.log"; fail "export --png ($n) failed"; }
	md5sum < "$T/$n.png" | cut -d' ' -f1
}
cat > "$T/empty.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig></fontconfig>
CONF
dv=$(png dejavu HEARTH_FONT_DIR=$dejavu)
dv2=$(png dejavu2 HEARTH_FONT_DIR=$dejavu)
[ "$dv" = "$dv2" ] || fail "the same export drew different bytes"
mono=$(png mono "HEARTH_FONT=DejaVu Sans Mono")
serif=$(png serif "HEARTH_FONT=DejaVu Serif")
none=$(png none FONTCONFIG_FILE="$T/empty.conf")
echo "DejaVu Sans $dv, Mono $mono, Serif $serif, no fontconfig fonts $none"
[ "$mono" != "$dv" ] && [ "$serif" != "$dv" ] && [ "$mono" != "$serif" ] ||
	fail "HEARTH_FONT did not change the font fontconfig gives"
[ "$none" = "$dv" ] || fail "with no fontconfig fonts the picture is not DejaVu Sans's"
ok "fontconfig's font for HEARTH_FONT; DejaVu Sans when it has none"
