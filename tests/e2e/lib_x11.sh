# Shared by the viewer tests (sourced, not run): a private X server, its
# windows, and reading what the viewer drew.
# The caller defines fail() and $tmp, and kills $xpid on exit.

# x11_start FIRST SCREEN: starts Xvfb on the first free display number from
# FIRST with screen geometry SCREEN (e.g. 1600x1000x24), exports DISPLAY,
# sets xpid, and waits until the server answers.
x11_start() {
	n=$1
	while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
	# -noreset: an X server resets when its last client leaves, and the
	# readiness probe below is such a client; a viewer connecting during
	# the reset would be refused.
	Xvfb ":$n" -screen 0 "$2" -nolisten tcp -noreset >"$tmp/xvfb.log" 2>&1 &
	xpid=$!
	export DISPLAY=":$n"
	i=0
	until xdotool getdisplaygeometry >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 50 ] && fail "Xvfb did not start"; sleep 0.1
	done
}

# x11_window TITLE: waits until a visible window whose name matches TITLE
# appears (10 s at most) and sets wid to it.
x11_window() {
	wid=
	i=0
	while [ -z "$wid" ]; do
		# (no --sync: it can trip over windows that come and go)
		wid=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -1)
		i=$((i + 1)); [ $i -gt 100 ] && fail "no viewer window appeared"
		[ -n "$wid" ] || sleep 0.1
	done
}

# wait_for CONDITION WHAT: evaluates the shell CONDITION until it holds,
# 5 s at most, else fails saying WHAT.
wait_for() {
	i=0
	until eval "$1"; do
		i=$((i + 1)); [ $i -gt 50 ] && fail "$2"; sleep 0.1
	done
}

# The viewer's --debug-layout file is $dl, its screenshot $tmp/shot.png:
# field NAME: a layout line's value; px X Y: the screenshot's colour at
# (X, Y) as RRGGBB; ch RRGGBB N: the component at hex digit N (1, 3, 5).
field() { sed -n "s/^$1 //p" "$dl"; }
px() { /usr/bin/convert "$tmp/shot.png" -format "%[hex:p{$1,$2}]" info: | cut -c1-6; }
ch() { printf '%d' "0x$(echo "$1" | cut -c$2-$(($2 + 1)))"; }
