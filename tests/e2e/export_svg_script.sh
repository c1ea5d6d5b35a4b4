#!/bin/sh
# The script inside an exported SVG, run by node against a small stand-in
# for the browser's DOM built from the SVG's own elements: clicking a frame
# zooms (it spans the width, callees keep proportions, frames beside it
# hide, frames below it span the width), Reset restores, and a search
# colours matches and reports their count and share counted once.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! command -v node >/dev/null 2>&1; then
	[ "${CI:-}" = true ] && fail "node is missing (PKGS_TEST installs nodejs)"
	echo "skipped: node is not installed"; exit 0
fi
"$HEARTH" export --svg -o "$tmp/out.svg" "$fixture" || fail "export failed"
cat >"$tmp/run.js" <<'JS'
const fs = require('fs');
const svg = fs.readFileSync(process.argv[2], 'utf8');
const unesc = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
	.replace(/&apos;/g, "'").replace(/&amp;/g, '&');
function attrs(s) {
	const a = {};
	for (const m of s.matchAll(/([\w-]+)="([^"]*)"/g)) a[m[1]] = unesc(m[2]);
	return a;
}
function el(a, text) {
	return { a, textContent: text || '', style: {}, handlers: {},
		getAttribute(k) { return k in this.a ? this.a[k] : null; },
		hasAttribute(k) { return k in this.a; },
		setAttribute(k, v) { this.a[k] = String(v); },
		addEventListener(t, f) { this.handlers[t] = f; } };
}
const groups = [], byId = {};
for (const m of svg.matchAll(/<g class="f"([^>]*)>.*?<rect([^>]*)\/><text([^>]*)>(.*?)<\/text><\/g>/g)) {
	const g = el(attrs(m[1])), rect = el(attrs(m[2])), text = el(attrs(m[3]), unesc(m[4]));
	g.querySelector = (s) => (s === 'rect' ? rect : text);
	groups.push(g);
	if (g.a.id) byId[g.a.id] = g;
}
for (const id of ['unzoom', 'search', 'matched']) byId[id] = el({});
let onload = null;
global.document = { querySelectorAll: () => groups, getElementById: (i) => byId[i],
	addEventListener() {} };
global.window = { addEventListener: (t, f) => { onload = f; } };
global.prompt = () => null;
eval(svg.match(/<!\[CDATA\[([\s\S]*?)\]\]>/)[1]);
onload();
const g = (n) => groups.find((x) => x.a['data-n'] === n);
const r = (n) => { const x = g(n).querySelector('rect'); return [+x.a.x, +x.a.width]; };
const check = (ok, what) => { if (!ok) { console.log('FAIL: ' + what); process.exit(1); } };
const near = (a, b) => Math.abs(a - b) < 0.01;
check(groups.length === 9, 'groups: ' + groups.length);
g('build_report').handlers.click();
check(near(r('build_report')[0], 10) && near(r('build_report')[1], 1180), 'zoomed box ' + r('build_report'));
check(near(r('dumps')[1], 1180 * 24 / 62), 'dumps after zoom ' + r('dumps'));
check(near(r('memcpy')[0], 10 + 1180 * 24 / 62), 'memcpy after zoom ' + r('memcpy'));
check(g('parse').style.display === 'none', 'parse not hidden');
check(near(r('main')[1], 1180) && g('main').style.display === '', 'main not spanning');
check(byId.unzoom.style.display === '', 'no Reset zoom');
byId.unzoom.handlers.click();
check(near(r('build_report')[1], 1180 * 0.62) && g('parse').style.display === '', 'not restored');
search('lex,dumps');
check(byId.matched.textContent === '2 matches, 44.0% of the total', 'matched: ' + byId.matched.textContent);
check(g('lex').querySelector('rect').a.fill === 'rgb(230,0,230)', 'lex not highlighted');
check(g('main').querySelector('rect').a.fill !== 'rgb(230,0,230)', 'main highlighted');
search('main,lex');
check(byId.matched.textContent === '2 matches, 100.0% of the total', 'nested: ' + byId.matched.textContent);
search('bldrpt');
check(byId.matched.textContent === '1 match, 62.0% of the total', 'fuzzy: ' + byId.matched.textContent);
console.log('script ok');
JS
node "$tmp/run.js" "$tmp/out.svg" || fail "the SVG's script misbehaved"
echo "export_svg_script: all checks passed"
