#!/bin/sh
# An unprivileged neighbour cannot make root's hearth or hearthd write
# through a planted symbolic link:
#  - `hearth record -o` and `hearth snapshot -o` into a directory the
#    neighbour (nobody, through setpriv) owns, where it planted 300 links
#    at every temporary name the old scheme (OUT.tmp.<pid>) would use: the
#    root-owned 0600 victim is untouched and the output is a real profile;
#  - an output replaced in place keeps its mode (0600 stays 0600);
#  - hearthd refuses a state directory owned by nobody, or one that is
#    root's but world-writable, with one sentence, and never writes
#    through the `marks` link planted there;
#  - in a trusted state directory, a `marks` symbolic link makes
#    `hearth mark` fail; the victim is untouched.
set -u
. "$(dirname "$0")/lib.sh"
require_root
S="--socket $T/ctl.sock"
HD= SPIN=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	[ -n "$SPIN" ] && kill "$SPIN" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
chmod 755 "$T"

printf 'root secret\n' >"$T/victim"
chmod 600 "$T/victim"
cp "$T/victim" "$T/victim.orig"
intact() { cmp -s "$T/victim" "$T/victim.orig" || fail "$1 wrote through a planted link into the root-owned victim"; }

mkdir "$T/shared"
chown nobody:nogroup "$T/shared"
chmod 777 "$T/shared"
# plant NAME: as nobody, links NAME.tmp.<pid> -> victim for the next 300
# process ids, where the old temporary name would land (one process, so
# planting uses up none of those ids).
plant() {
	as_nobody perl -e '
		open(my $f, "<", "/proc/sys/kernel/ns_last_pid") or die;
		my $last = <$f>;
		symlink($ARGV[1], "$ARGV[0].tmp." . ($last + $_)) or die for 1 .. 300;
	' "$1" "$T/victim" ||
		fail "nobody could not plant links"
}

sh -c 'while :; do :; done' &
SPIN=$!

plant "$T/shared/rec.folded"
"$HEARTH" record -d 1 -p "$SPIN" -o "$T/shared/rec.folded" 2>"$T/rec.err" ||
	fail "record failed: $(cat "$T/rec.err")"
intact "hearth record"
[ -f "$T/shared/rec.folded" ] && [ ! -L "$T/shared/rec.folded" ] || fail "record wrote no regular file"
[ "$(total "$T/shared/rec.folded")" -gt 0 ] || fail "record's output holds no samples"
ok "record: the planted links were not followed"

hearthd_start --state-dir "$T/state" $S --window 500ms
hearthd_wait_windows 2
plant "$T/shared/snap.folded"
"$HEARTH" snapshot $S --last 5s --pid "$SPIN" -o "$T/shared/snap.folded" 2>"$T/snap.err" ||
	fail "snapshot failed: $(cat "$T/snap.err")"
intact "hearth snapshot"
[ "$(total "$T/shared/snap.folded")" -gt 0 ] || fail "snapshot's output holds no samples"
ok "snapshot: the planted links were not followed"

: >"$T/keep.folded"
chmod 600 "$T/keep.folded"
"$HEARTH" snapshot $S --last 5s --pid "$SPIN" -o "$T/keep.folded" 2>"$T/snap.err" ||
	fail "snapshot failed: $(cat "$T/snap.err")"
[ "$(stat -c %a "$T/keep.folded")" = 600 ] || fail "a 0600 output became $(stat -c %a "$T/keep.folded")"
[ "$(total "$T/keep.folded")" -gt 0 ] || fail "the replaced output holds no samples"
ok "a replaced output keeps mode 0600"

# A trusted state directory where a link named marks appeared anyway.
ln -s "$T/victim" "$T/state/marks"
"$HEARTH" mark $S deploy-1 2>"$T/mark.err" && fail "hearth mark succeeded through a marks link"
intact "hearth mark"
ok "mark through a link fails: $(cat "$T/mark.err")"
kill "$HD"; wait "$HD" 2>/dev/null; HD=

# refused STATE_DIR: hearthd exits at once with the sentence.
refused() {
	timeout 20 "$HEARTHD" --state-dir "$1" $S --window 500ms 2>"$T/refused.log" &&
		fail "hearthd accepted the state directory $2"
	grep -q "refusing the state directory $1: .*writable by no one else" "$T/refused.log" ||
		fail "no sentence for the state directory $2: $(cat "$T/refused.log")"
	intact "hearthd with the state directory $2"
	ok "refused the state directory $2"
}
as_nobody mkdir -m 777 "$T/shared/evil" || fail "nobody could not make a directory"
as_nobody ln -s "$T/victim" "$T/shared/evil/marks"
refused "$T/shared/evil" "owned by nobody"
mkdir -m 777 "$T/open"
chmod 777 "$T/open"
as_nobody ln -s "$T/victim" "$T/open/marks"
refused "$T/open" "writable by others"
ln -s "$T/state" "$T/link"
refused "$T/link" "that is a symbolic link"
exit 0
