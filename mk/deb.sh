#!/bin/sh
# make deb: copies the source (the files git knows, or the whole tree
# outside a checkout, build folders left out) to OUT/hearth-VERSION and
# runs dpkg-buildpackage -us -uc -b there, so its outputs, which it writes
# beside the source folder, land in OUT. Prints the packages' paths.
set -eu
OUT=$1 VERSION=$2
src=$OUT/hearth-$VERSION
log=$OUT/dpkg-buildpackage.log

deb_version=$(dpkg-parsechangelog -S Version)
if [ "$deb_version" != "$VERSION" ]; then
	echo "hearth: debian/changelog is at $deb_version but the Makefile at $VERSION; add a changelog entry (dch -v $VERSION)" >&2
	exit 1
fi
rm -rf "$OUT"
mkdir -p "$src"
if git rev-parse --show-toplevel >/dev/null 2>&1; then
	# Tracked and new files; not ignored ones (builds), nor deleted ones.
	git ls-files -co --exclude-standard | while IFS= read -r f; do
		[ -e "$f" ] && printf '%s\n' "$f"
	done
else
	find . \( -path ./.git -o -path './build*' \) -prune -o -type f -print
fi | tar -c --verbatim-files-from -T - | tar -x -C "$src"

# The package builds as the Makefile's defaults say, whatever the calling
# make was told (BUILD=, SAN=, -j travel in MAKEFLAGS and the environment).
unset MAKEFLAGS MFLAGS MAKELEVEL BUILD SAN
status=0
(cd "$src" && DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=2} \
	dpkg-buildpackage -us -uc -b) > "$log" 2>&1 || status=$?
[ "${V:-0}" = 1 ] && cat "$log"
if [ $status -ne 0 ]; then
	tail -30 "$log" >&2
	echo "hearth: dpkg-buildpackage failed (log: $log)" >&2
	exit 1
fi
rm -rf "$src"
ls "$OUT"/*.deb
