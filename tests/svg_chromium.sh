#!/bin/sh
# tests/svg_chromium.sh — the flame graph works in a real browser: headless
# Chromium loads an HTML page holding the SVG, hovers a frame (details text
# shows function, path:line, samples and share), clicks it (zoom widens it
# and hides unrelated frames), resets, and searches (matched share). The
# page writes its verdict into the DOM, which --dump-dom prints (the
# script spells it so that its own source never matches the PASS pattern). The
# standalone SVG is loaded too, to check its script runs there as well. The
# inverted graph (report --inverted) goes through the same.
# Skips (77) when chromium is missing, except under CI=true where it fails.
. "$TOP_SRCDIR/tests/lib.sh"

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$c; break; fi
done
if [ -z "$CHROMIUM" ]; then
	if [ "${CI:-}" = true ]; then
		echo "not ok - chromium is not installed (apt-get install chromium)"; exit 1
	fi
	echo "chromium is not installed: skipping (apt-get install chromium)"; exit 77
fi

sed "s|@SRCDIR@|$TOP_SRCDIR|g" "$TOP_SRCDIR/tests/report/cache-service.profile.json" > "$TMP/profile.json"
"$XGDBPROF" report --format svg -o "$TMP/flame.svg" "$TMP/profile.json" || { echo "not ok - svg"; exit 1; }
"$XGDBPROF" report --format svg --inverted -o "$TMP/icicle.svg" "$TMP/profile.json" ||
	{ echo "not ok - inverted svg"; exit 1; }

# page SVG CHECKS: an HTML page holding the SVG inline (without its XML
# declaration) and the checks (a script body calling expect(ok, what)).
page() {
	echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>harness</title></head><body>'
	sed 1d "$1"
	cat <<'HTML'
<pre id="verdict">VERDICT: NOT RUN</pre>
<script>
(function () {
  var problems = [];
  function expect(ok, what) { if (!ok) problems.push(what); }
  try {
HTML
	cat "$2"
	cat <<'HTML'
  } catch (err) {
    problems.push('exception: ' + err);
  }
  document.getElementById('verdict').textContent =
    'VERDICT: ' + (problems.length ? 'FAIL ' + problems.join('; ') : 'PA' + 'SS');
})();
</script></body></html>
HTML
}

cat > "$TMP/plain.js" <<'JS'
    var frames = document.getElementsByClassName('f'), g = null, other = null;
    for (var i = 0; i < frames.length; i++) {
      var n = frames[i].getAttribute('data-n');
      /* the widest of its boxes: under insert_worker -> insert, 44 samples */
      if (n === 'sled::tree::Tree::view_for_key' &&
          (!g || +frames[i].getAttribute('data-w') > +g.getAttribute('data-w'))) g = frames[i];
      if (n === 'syscall') other = frames[i];
    }
    expect(document.getElementById('xgp-svg').getAttribute('data-ready') === 'yes', 'script did not run');
    expect(g && other, 'frames not found');
    var rect = g.getElementsByTagName('rect')[0];
    expect(rect.getBBox().width > 100, 'frame not rendered: bbox width ' + rect.getBBox().width);
    g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    var details = document.getElementById('xgp-details').textContent;
    expect(details.indexOf('sled::tree::Tree::view_for_key') >= 0, 'hover: no function in "' + details + '"');
    expect(details.indexOf('/tests/report/sled_tree.rs:39') >= 0, 'hover: no path:line in "' + details + '"');
    expect(details.indexOf('44 samples (44.00%)') >= 0, 'hover: no samples/share in "' + details + '"');
    var w0 = +rect.getAttribute('width'), x0 = +rect.getAttribute('x');
    g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    var w1 = +rect.getAttribute('width'), x1 = +rect.getAttribute('x');
    expect(w1 > w0 && Math.abs(w1 - 1180) < 0.5 && Math.abs(x1 - 10) < 0.5,
           'zoom: width ' + w0 + ' -> ' + w1 + ', x ' + x0 + ' -> ' + x1);
    expect(other.classList.contains('hide'), 'zoom: unrelated frame still shown');
    expect(document.getElementById('xgp-reset').style.display !== 'none', 'zoom: no reset control');
    document.getElementById('xgp-reset').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(Math.abs(+rect.getAttribute('width') - w0) < 0.01, 'reset: width ' + rect.getAttribute('width'));
    expect(!other.classList.contains('hide'), 'reset: frame still hidden');
    window.xgp.search('below_leaf');
    var matched = document.getElementById('xgp-matched').textContent;
    expect(matched.indexOf('Matched: 65.00%') === 0, 'search: "' + matched + '"');
    expect(document.getElementsByClassName('match').length === 3, 'search: ' +
           document.getElementsByClassName('match').length + ' frames highlighted');
    window.xgp.search('Tree::(insert|view_for_key)');
    matched = document.getElementById('xgp-matched').textContent;
    expect(matched.indexOf('Matched: 74.00%') === 0, 'nested matches count once: "' + matched + '"');
    /* Copy path: the button copies the selected (clicked) frame's
     * path:line, whatever the pointer crossed on its way to the button (it
     * used to copy the last hovered frame: clone3.S instead of tree.rs),
     * and Shift-click on a frame copies its path:line instead of zooming.
     * The clipboard API is hidden so that the fallback (a selected
     * textarea and execCommand('copy')) runs, and execCommand is watched.
     * Mutation seen failing: copyBtn copying the last hovered frame. */
    window.xgp.clearSearch();
    var svgEl = document.getElementById('xgp-svg'), copyBtn = document.getElementById('xgp-copy'), seen = [];
    Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true });
    document.execCommand = function (cmd) {
      var a = document.activeElement;
      seen.push(cmd + ' ' + (a && a.tagName.toLowerCase() === 'textarea' ? a.value : '(nothing selected)'));
      return true;
    };
    expect(copyBtn && copyBtn.textContent === 'Copy path', 'no Copy path button');
    var want = g.getAttribute('data-l');
    expect(/\/tests\/report\/sled_tree\.rs:39$/.test(want), 'frame has no path:line: "' + want + '"');
    g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    g.dispatchEvent(new MouseEvent('mouseout', { bubbles: true }));
    expect(g.classList.contains('sel'), 'click: the frame is not marked selected');
    document.getElementById('xgp-reset').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    /* on the way to the button the pointer crosses other frames */
    var crossed = [other, frames[frames.length - 1]];
    for (var i = 0; i < crossed.length; i++) {
      crossed[i].dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
      crossed[i].dispatchEvent(new MouseEvent('mouseout', { bubbles: true }));
    }
    expect(document.getElementById('xgp-details').textContent.indexOf('selected: sled::tree::Tree::view_for_key') === 0,
           'after the pointer left: details "' + document.getElementById('xgp-details').textContent + '"');
    copyBtn.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(svgEl.getAttribute('data-copied') === want, 'copy button: copied "' + svgEl.getAttribute('data-copied') + '"');
    expect(seen.length === 1 && seen[0] === 'copy ' + want, 'copy button: clipboard got ' + JSON.stringify(seen));
    expect(document.getElementById('xgp-details').textContent === 'copied ' + want, 'copy button: no "copied" note');
    var caller = null;
    for (var i = 0; i < frames.length; i++)
      if (frames[i].getAttribute('data-n') === 'sled::tree::Tree::insert') caller = frames[i];
    var wantOther = caller.getAttribute('data-l'), wBefore = rect.getAttribute('width');
    expect(/sled_tree\.rs:[0-9]+$/.test(wantOther) && wantOther !== want, 'caller path:line "' + wantOther + '"');
    caller.dispatchEvent(new MouseEvent('click', { bubbles: true, shiftKey: true }));
    expect(svgEl.getAttribute('data-copied') === wantOther && seen[1] === 'copy ' + wantOther,
           'shift-click: copied ' + JSON.stringify(seen));
    expect(rect.getAttribute('width') === wBefore && !g.classList.contains('hide'), 'shift-click also zoomed');
    expect(document.getElementsByTagName('textarea').length === 0, 'the textarea was left in the page');
    /* Layout in a 900-px window: the picture scales to it, the longest
     * details line stays left of the button, "Matched" clear of the subtitle */
    var longest = frames[0];
    for (var i = 0; i < frames.length; i++)
      if (frames[i].getAttribute('data-n').length > longest.getAttribute('data-n').length) longest = frames[i];
    longest.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    var d = document.getElementById('xgp-details').getBoundingClientRect(), b = copyBtn.getBoundingClientRect();
    expect(window.innerWidth <= 900, 'the window is ' + window.innerWidth + ' px, not 900');
    expect(b.right <= window.innerWidth + 0.5, 'Copy path ends at ' + b.right + ' px in a ' + window.innerWidth + '-px window');
    expect(d.right <= b.left, 'details line (to ' + d.right + ' px) runs into Copy path (from ' + b.left + ' px)');
    window.xgp.search('Tree');
    var mr = document.getElementById('xgp-matched').getBoundingClientRect(),
        sr = document.getElementById('xgp-subtitle').getBoundingClientRect();
    expect(mr.top >= sr.bottom || mr.bottom <= sr.top || mr.left >= sr.right || mr.right <= sr.left,
           '"Matched" overlaps the subtitle');
JS
page "$TMP/flame.svg" "$TMP/plain.js" > "$TMP/harness.html"

# The inverted graph (an icicle merged leaf first): the hot leaf below_leaf
# is one box on the first row under "all", with its callers beneath it; the
# same hover, zoom, reset and search work on it.
cat > "$TMP/icicle.js" <<'JS'
    var frames = document.getElementsByClassName('f'), g = null, other = null, root = null, caller = null;
    for (var i = 0; i < frames.length; i++) {
      var n = frames[i].getAttribute('data-n'), d = frames[i].getAttribute('data-d');
      if (d === '0') root = frames[i];
      if (d === '1' && n === 'sled::tree::below_leaf') g = frames[i];
      if (d === '1' && n === 'syscall') other = frames[i];
      if (d === '2' && n === 'sled::tree::Tree::view_for_key') caller = frames[i];
    }
    function y(f) { return +f.getElementsByTagName('rect')[0].getAttribute('y'); }
    function box(f) { return f.getElementsByTagName('rect')[0].getBBox(); }
    expect(document.getElementById('xgp-svg').getAttribute('data-ready') === 'yes', 'script did not run');
    expect(root && g && other && caller, 'frames not found (leaf on row 1, its caller on row 2)');
    expect(box(root).y < box(g).y && box(g).y < box(caller).y,
           'not top down: all at ' + box(root).y + ', leaf at ' + box(g).y + ', caller at ' + box(caller).y);
    expect(box(g).width > 100, 'leaf not rendered: bbox width ' + box(g).width);
    g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    var details = document.getElementById('xgp-details').textContent;
    expect(details.indexOf('sled::tree::below_leaf') >= 0, 'hover: no function in "' + details + '"');
    expect(details.indexOf('65 samples (65.00%)') >= 0, 'hover: no samples/share in "' + details + '"');
    var rect = g.getElementsByTagName('rect')[0], w0 = +rect.getAttribute('width');
    g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(Math.abs(+rect.getAttribute('width') - 1180) < 0.5 && Math.abs(+rect.getAttribute('x') - 10) < 0.5,
           'zoom: width ' + w0 + ' -> ' + rect.getAttribute('width'));
    expect(other.classList.contains('hide'), 'zoom: unrelated leaf still shown');
    expect(!caller.classList.contains('hide') && y(caller) > y(g), 'zoom: the caller beneath is gone');
    expect(root.classList.contains('parent'), 'zoom: all is not shown as the parent');
    document.getElementById('xgp-reset').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(Math.abs(+rect.getAttribute('width') - w0) < 0.01, 'reset: width ' + rect.getAttribute('width'));
    expect(!other.classList.contains('hide'), 'reset: frame still hidden');
    window.xgp.search('below_leaf');
    var matched = document.getElementById('xgp-matched').textContent;
    expect(matched.indexOf('Matched: 65.00%') === 0, 'search: "' + matched + '"');
    expect(document.getElementsByClassName('match').length === 1, 'search: ' +
           document.getElementsByClassName('match').length + ' frames highlighted, want the one merged leaf');
    window.xgp.search('Tree::(insert|view_for_key)');
    matched = document.getElementById('xgp-matched').textContent;
    expect(matched.indexOf('Matched: 74.00%') === 0, 'nested matches count once: "' + matched + '"');
JS
page "$TMP/icicle.svg" "$TMP/icicle.js" > "$TMP/icicle.html"

run_chromium() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/profile.XXXXXX")" --virtual-time-budget=5000 --window-size=900,700 \
		--dump-dom "$1" 2>"$TMP/chromium.err"
}

run_chromium "file://$TMP/harness.html" > "$TMP/harness.dom"
if grep -q 'VERDICT: PASS' "$TMP/harness.dom"; then
	ok "flame graph in chromium: hover, click-zoom, reset, search, copy path (button and Shift-click)"
else
	not_ok "flame graph in chromium: $(grep -o 'VERDICT:[^<]*' "$TMP/harness.dom" || tail -3 "$TMP/chromium.err")"
fi

# With an editor chosen (--links=vscode) and a source map, "Open in editor"
# opens the selected frame at its line in the developer's checkout.
"$XGDBPROF" --links=vscode -s "$TOP_SRCDIR/tests/report=/home/dev/checkout" report --format svg \
	-o "$TMP/editor.svg" "$TMP/profile.json" || { echo "not ok - svg with --links=vscode"; exit 1; }
cat > "$TMP/editor.js" <<'JS'
    var frames = document.getElementsByClassName('f'), g = null, opened = [];
    for (var i = 0; i < frames.length; i++)
      if (frames[i].getAttribute('data-n') === 'sled::tree::Tree::view_for_key' &&
          (!g || +frames[i].getAttribute('data-w') > +g.getAttribute('data-w'))) g = frames[i];
    var openBtn = document.getElementById('xgp-open');
    expect(openBtn && openBtn.textContent === 'Open in editor', 'no Open in editor button');
    window.xgpOpen = function (u) { opened.push(u); };
    openBtn.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(opened.length === 0 && document.getElementById('xgp-details').textContent.indexOf('click a frame first') === 0,
           'Open with nothing selected: ' + JSON.stringify(opened));
    g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    frames[1].dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    openBtn.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(opened.length === 1 && opened[0] === 'vscode://file/home/dev/checkout/sled_tree.rs:39:1',
           'Open: ' + JSON.stringify(opened));
JS
page "$TMP/editor.svg" "$TMP/editor.js" > "$TMP/editor.html"
run_chromium "file://$TMP/editor.html" > "$TMP/editor.dom"
if grep -q 'VERDICT: PASS' "$TMP/editor.dom"; then
	ok "flame graph with --links=vscode: Open in editor opens the selected frame through the source map"
else
	not_ok "flame graph with --links=vscode: $(grep -o 'VERDICT:[^<]*' "$TMP/editor.dom" || tail -3 "$TMP/chromium.err")"
fi
check "without an editor chosen, no Open button" sh -c "! grep -q 'id=.xgp-open' '$TMP/flame.svg'"

run_chromium "file://$TMP/icicle.html" > "$TMP/icicle.dom"
if grep -q 'VERDICT: PASS' "$TMP/icicle.dom"; then
	ok "inverted flame graph in chromium: leaf on top, callers beneath, hover, click-zoom, reset, search"
else
	not_ok "inverted flame graph in chromium: $(grep -o 'VERDICT:[^<]*' "$TMP/icicle.dom" || tail -3 "$TMP/chromium.err")"
fi

check "flame graph with the copy button is well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$TMP/flame.svg"
run_chromium "file://$TMP/flame.svg" > "$TMP/svg.dom"
check "standalone SVG: its script runs in chromium" grep -q 'data-ready="yes"' "$TMP/svg.dom"
run_chromium "file://$TMP/icicle.svg" > "$TMP/icicle-svg.dom"
check "standalone inverted SVG: its script runs in chromium" grep -q 'data-ready="yes"' "$TMP/icicle-svg.dom"
finish
