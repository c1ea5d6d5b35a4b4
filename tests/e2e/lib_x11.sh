# Shared by the viewer tests (sourced, not run): a private X server.
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
