"""Check the built book in headless Chromium.

For every chapter page under ``<html>/book/``:

* load it with Chromium (offline flags, fresh profile, virtual time) at 500 px, wait until
  MathJax has typeset, and dump the rendered DOM (one run serves the math check and the
  500 px check below; a second run takes the screenshot);
* if the page source contains math, require at least one typeset
  ``<mjx-container>`` element (MathJax is served locally; with the CDN default
  the count is 0 offline);
* require every ``<img>`` to resolve: a local file that exists and is a
  decodable image, or an embedded ``data:`` image;
* require every chapter figure to stay legible in a 500 px wide window: an image that
  records its resolution (matplotlib writes it) may be at most ``MAX_FIGURE_INCHES`` wide,
  since a wider figure is scaled down until its 10 pt labels are smaller than 8 px
  (stack the panels instead of putting them side by side);
* require that nothing is cut at 500 px: the page does not scroll sideways, and no text,
  formula, code or image reaches past the right edge of a box that clips it (content wider
  than the column must wrap or sit in a box that scrolls, as code cells do); measured in the
  rendered page by a script run on a temporary copy of it, after MathJax has typeset;
* require every interactive figure (``dpcp_tutorial.experiments.interactive``) to draw its
  first frame and to draw another when its slider is moved (in the same script);
* require that the API page (``api.html``) speaks of the material only: no issue number or decision of the
  project's tracker in any docstring it shows (``tests/_history.py``);
* with ``--narrow``, save screenshots under ``<html>/../screenshots/``: ``PAGE.png``
  (1280 px wide, the top of the page) and, for chapters, ``PAGE-narrow.png`` (500 px
  wide, the whole page up to ``NARROW_HEIGHT`` px), to be looked at. Screenshots are for a
  person to look at, not a check, and each costs one more Chromium run per page (the
  narrow ones are the expensive part: a chapter is tens of thousands of pixels tall at
  500 px), so ``make test`` leaves them out and ``make screenshots`` takes them.

Usage: ``python tests/check_pages.py _build/html [--narrow] [PAGE ...]`` (part of ``make test``;
PAGE names such as ``06_dpcp`` restrict it to those pages). Exits non-zero and lists every
failing page.
"""

from __future__ import annotations

import base64
import concurrent.futures
import html
import html.parser
import io
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

from PIL import Image

from _history import built_page_problems    # tests/_history.py (this script runs from tests/)

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--hide-scrollbars", "--virtual-time-budget=15000",
]
WIDE, NARROW, NARROW_HEIGHT = "1280,1600", 500, 60000
#: widest legible figure, in inches: at 500 px the content column is about 460 px wide, so a
#: figure W inches wide shows 10 pt text at 10 * 460 / (72 W) px, at least 8 px for W <= 8
MAX_FIGURE_INCHES = 8.0
ROOT = pathlib.Path(__file__).resolve().parent.parent
MATH_MARKERS = ('class="math', "\\(", "\\[")


class _ImgCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources.append(dict(attrs).get("src") or "")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_pages: Chromium not found; install it with `apt-get install -y chromium`")


def _run_chromium(browser: str, page: pathlib.Path, *extra: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
            capture_output=True, text=True, timeout=180,
        )
    return result.stdout


def _too_wide(image: Image.Image) -> str | None:
    dpi = image.info.get("dpi")
    if not dpi or not dpi[0]:
        return None
    inches = image.width / float(dpi[0])
    if inches > MAX_FIGURE_INCHES + 0.05:
        return f"{inches:.1f} in wide at {float(dpi[0]):.0f} dpi (at most {MAX_FIGURE_INCHES:g} in)"
    return None


def _broken_images(page: pathlib.Path, source: str) -> list[str]:
    parser = _ImgCollector()
    parser.feed(source)
    broken = []
    wide = []
    for src in parser.sources:
        try:
            if src.startswith("data:"):
                payload = base64.b64decode(src.split(",", 1)[1])
                Image.open(io.BytesIO(payload)).verify()
                wide.append((src[:40], _too_wide(Image.open(io.BytesIO(payload)))))
                continue
            if urllib.parse.urlparse(src).scheme in ("http", "https"):
                broken.append(f"{src} (remote image; the book must work offline)")
                continue
            target = (page.parent / urllib.parse.unquote(src.split("#")[0])).resolve()
            if target.suffix.lower() == ".svg":
                if not target.is_file() or b"<svg" not in target.read_bytes()[:4096]:
                    broken.append(src)
                continue
            Image.open(target).verify()
            wide.append((src, _too_wide(Image.open(target))))
        except Exception as exc:  # any failure to resolve or decode is a broken image
            broken.append(f"{src} ({type(exc).__name__})")
    return broken, [f"{src}: {why}" for src, why in wide if why]


#: run in a temporary copy of a page: after the page has loaded and MathJax has typeset (polled
#: under Chromium's virtual time), list every leaf element, formula or image that reaches past a
#: clipping ancestor (overflow hidden or clip) with no scrolling box in between, and whether the
#: page itself scrolls sideways; the result is written into the DOM for --dump-dom
NARROW_SCRIPT = """
<script>
window.addEventListener('load', function () {
  function report() {
    var main = document.querySelector('main') || document.body, cut = [];
    var all = main.querySelectorAll('*');
    for (var i = 0; i < all.length; i++) {
      var el = all[i], leaf = el.tagName === 'MJX-CONTAINER' || el.tagName === 'IMG' || el.tagName === 'svg';
      if (!leaf && (el.children.length || el.closest('mjx-container'))) continue;
      var r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      for (var a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        var ox = getComputedStyle(a).overflowX;
        if (ox === 'auto' || ox === 'scroll') break;
        if (ox === 'hidden' || ox === 'clip') {
          var box = a.getBoundingClientRect();
          if (r.right > box.right + 1 || r.left < box.left - 1)
            cut.push((el.textContent || el.getAttribute('src') || el.tagName).trim().slice(0, 70));
          break;
        }
      }
    }
    var figures = [];
    document.querySelectorAll('.dpcp-interactive').forEach(function (fig) {
      var svg = fig.querySelector('svg'), slider = fig.querySelector('input[type=range]');
      var before = svg ? svg.innerHTML : '', drawn = fig.querySelectorAll('.dpcp-series').length, changed = false;
      if (slider) {
        slider.value = slider.value === slider.max ? slider.min : slider.max;
        slider.dispatchEvent(new Event('input'));
        changed = svg.innerHTML !== before && fig.querySelectorAll('.dpcp-series').length > 0;
      }
      figures.push({id: fig.id, drawn: drawn, changed: changed});
    });
    var out = document.createElement('pre');
    out.id = 'narrow-check-result';
    out.textContent = JSON.stringify({sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
                                      cut: cut, figures: figures});
    document.body.appendChild(out);
  }
  var waited = 0;
  (function poll() {
    var formulas = document.querySelectorAll('.math'), pending = 0;
    for (var i = 0; i < formulas.length; i++) if (!formulas[i].querySelector('mjx-container')) pending++;
    if ((pending || waited === 0) && waited < 20000) { waited += 250; setTimeout(poll, 250); return; }
    report();
  })();
});
</script>"""


def _cut_at_500px(browser: str, page: pathlib.Path) -> tuple[list[str], str]:
    """What a 500 px window cannot show on ``page`` (empty when everything wraps or scrolls), and the rendered
    DOM (dumped after MathJax has typeset every formula, or after 20 s)."""
    source = page.read_text(encoding="utf-8")
    with tempfile.NamedTemporaryFile("w", suffix=".html", prefix=".narrow-", dir=page.parent,
                                     encoding="utf-8", delete=False) as copy:
        copy.write(source.replace("</body>", NARROW_SCRIPT + "</body>", 1))
    try:
        dom = _run_chromium(browser, pathlib.Path(copy.name), f"--window-size={NARROW},2000", "--dump-dom",
                            "--virtual-time-budget=30000")
    finally:
        pathlib.Path(copy.name).unlink()
    found = re.search(r'<pre id="narrow-check-result"[^>]*>(.*?)</pre>', dom, re.S)
    if not found:
        return ["the 500 px check did not run (no result in the rendered page)"], dom
    result = json.loads(html.unescape(found.group(1)))
    problems = ["the page scrolls sideways at 500 px"] if result["sideways"] else []
    problems += [f"cut at 500 px (wrap it, or let its box scroll): {text!r}" for text in result["cut"]]
    expected = source.count('class="dpcp-interactive"')
    if len(result["figures"]) != expected:
        problems.append(f"{expected} interactive figures in the page source, {len(result['figures'])} rendered")
    for figure in result["figures"]:
        if not figure["drawn"]:
            problems.append(f"interactive figure {figure['id']!r} draws nothing")
        elif not figure["changed"]:
            problems.append(f"interactive figure {figure['id']!r} does not change when its slider moves")
    return problems, dom


def _is_notebook(page: pathlib.Path) -> bool:
    """A page built from a notebook (a chapter, the intro, a case study, a computed reference page)."""
    return (ROOT / "book" / (page.stem + ".ipynb")).is_file()


def check_page(browser: str, page: pathlib.Path, shots: pathlib.Path, narrow: bool = False) -> list[str]:
    """Return a list of problems found on one page (empty when it is fine)."""
    source = page.read_text(encoding="utf-8")
    broken, wide = _broken_images(page, source)
    problems = [f"broken image {b}" for b in broken]
    computed = _is_notebook(page)
    if computed:  # chapters and other computed pages: figures must be legible at 500 px
        problems += [f"figure too wide for a 500 px window, {w}" for w in wide]
    cut, dom = _cut_at_500px(browser, page)        # one Chromium run for the 500 px check and the math
    body = source.split('<main', 1)[-1]
    if any(marker in body for marker in MATH_MARKERS) and "<mjx-container" not in dom:
        problems.append("page has math but Chromium rendered no <mjx-container> (MathJax not typeset)")
    problems += cut
    if narrow:
        _run_chromium(browser, page, f"--window-size={WIDE}", f"--screenshot={shots / (page.stem + '.png')}")
    if narrow and computed:  # computed pages: the whole page at 500 px, to look at the figures
        shot = shots / (page.stem + "-narrow.png")
        _run_chromium(browser, page, f"--window-size={NARROW},{NARROW_HEIGHT}", f"--screenshot={shot}")
        _crop_blank_bottom(shot)
    return problems


def _crop_blank_bottom(path: pathlib.Path) -> None:
    """Cut the empty space below the end of a tall screenshot."""
    if not path.is_file():
        return
    with Image.open(path) as image:
        image.load()
    box = Image.eval(image.convert("L"), lambda v: 255 - v).getbbox()
    if box and box[3] < image.height - 20:
        image.crop((0, 0, image.width, box[3] + 20)).save(path)


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    narrow = "--narrow" in argv[1:]
    html_dir = pathlib.Path(args[0] if args else "_build/html")
    pages = sorted((html_dir / "book").glob("*.html"))
    if args[1:]:
        pages = [p for p in pages if p.stem in args[1:]]
    if not pages:
        print(f"check_pages: no pages under {html_dir / 'book'}; build the book first (make book)")
        return 1
    shots = html_dir.parent / "screenshots"
    if narrow:
        shots.mkdir(exist_ok=True)
    browser = _chromium()
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda p: (p, check_page(browser, p, shots, narrow)), pages)
        for page, problems in results:
            status = "ok" if not problems else "FAIL"
            print(f"{status:4s} {page.relative_to(html_dir)}")
            for problem in problems:
                print(f"     - {problem}")
            failures += bool(problems)
    api = html_dir / "book" / "api.html"
    history = built_page_problems(api) if api in pages else []
    if api in pages:
        print(f"{'ok' if not history else 'FAIL':4s} {api.relative_to(html_dir)}: no history of the project")
        for problem in history:
            print(f"     - {problem}")
    print(f"screenshots of every page (PAGE.png at 1280 px, PAGE-narrow.png at 500 px): {shots}" if narrow
          else "no screenshots (make screenshots takes them)")
    print(f"check_pages: {len(pages) - failures} passed, {failures} failed")
    return 1 if failures or history else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
