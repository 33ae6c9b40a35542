"""Check the built book in headless Chromium.

Two Chromium processes (one per worker), each driven over the DevTools protocol on a pipe, load the pages
one after another in a fresh profile, offline. For every page under ``<html>/book/``:

* load it in a window 500 px wide and wait until MathJax has typeset; one script run in the loaded page then
  gives the math check and the 500 px checks below;
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
  than the column must wrap or sit in a box that scrolls, as code cells do);
* require every interactive figure (``dpcp_tutorial.experiments.interactive``) to draw its
  first frame and to draw another when its slider is moved (in the same script);
* require that the API page (``api.html``) speaks of the material only: no issue number or decision of the
  project's tracker in any docstring it shows (``tests/_history.py``);
* with ``--narrow``, save screenshots under ``<html>/../screenshots/``: ``PAGE.png``
  (1280 px wide, the top of the page) and, for chapters, ``PAGE-narrow.png`` (500 px
  wide, the whole page up to ``NARROW_HEIGHT`` px), to be looked at. Screenshots are for a
  person to look at, not a check, and each costs one more load of the page and two captures
  (the narrow ones are the expensive part: a chapter is tens of thousands of pixels tall at
  500 px), so ``make test`` leaves them out and ``make screenshots`` takes them.

Usage: ``python tests/check_pages.py _build/html [--narrow] [PAGE ...]`` (part of ``make test``;
PAGE names such as ``06_dpcp`` restrict it to those pages). Exits non-zero and lists every
failing page.
"""

from __future__ import annotations

import base64
import concurrent.futures
import fcntl
import html.parser
import io
import json
import os
import pathlib
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

from PIL import Image

from _history import built_page_problems    # tests/_history.py (this script runs from tests/)

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--hide-scrollbars",
]
WIDE, NARROW, CHECK_HEIGHT, NARROW_HEIGHT = (1280, 1600), 500, 2000, 60000
#: seconds that Chromium may take to answer one command (loading a page, typesetting its math)
ANSWER_TIMEOUT = 120
#: pages checked at once, one Chromium each
WORKERS = 2
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


#: evaluated in a loaded page: wait until MathJax has typeset (its startup promise, then no formula left
#: without output; at most 20 s), then list every leaf element, formula or image that reaches past a clipping
#: ancestor (overflow hidden or clip) with no scrolling box in between, whether the page scrolls sideways, and
#: what each interactive figure draws before and after its slider moves
WAIT_FOR_MATH = """
  var start = Date.now();
  function sleep(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  function late() { return Date.now() - start > 20000; }
  if (document.querySelector('script[src*="mathjax"]')) {
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && !late()) await sleep(50);
    if (window.MathJax && MathJax.startup && MathJax.startup.promise)
      await Promise.race([MathJax.startup.promise.catch(function () {}), sleep(20000)]);
  }
  function pending() {
    var formulas = document.querySelectorAll('.math'), count = 0;
    for (var i = 0; i < formulas.length; i++) if (!formulas[i].querySelector('mjx-container')) count++;
    return count;
  }
  while (pending() && !late()) await sleep(50);
"""
CHECK_SCRIPT = "(async function () {" + WAIT_FOR_MATH + """
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
  return {sideways: document.documentElement.scrollWidth > window.innerWidth + 1, cut: cut, figures: figures,
          typeset: document.querySelectorAll('mjx-container').length,
          height: document.documentElement.scrollHeight};
})()"""
TYPESET_SCRIPT = "(async function () {" + WAIT_FOR_MATH + "  return document.documentElement.scrollHeight; })()"


class ChromiumError(RuntimeError):
    """Chromium did not answer in time, closed its pipe, refused a command, or the check's script failed."""


#: run by ``python -c`` with the arguments ``COMMANDS_FD ANSWERS_FD CHROMIUM ARG...``
_AT_3_AND_4 = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
               "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execv(sys.argv[3], sys.argv[3:])")


class _Browser:
    """One headless Chromium with one tab, driven over the DevTools protocol on a pipe.

    With ``--remote-debugging-pipe`` Chromium reads commands (JSON, each ended by a NUL byte) on its file
    descriptor 3 and writes answers and events on 4. Starting Chromium costs about a core-second, as much as
    checking a chapter, so each worker starts one and loads page after page in the same tab.
    """

    def __init__(self, binary: str):
        self._profile = tempfile.mkdtemp(prefix=".check-pages-")
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # the child's ends, copied to descriptors from 10 up (never 3 or 4, which the launcher overwrites)
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands_read, answers_write)]
        os.close(commands_read)
        os.close(answers_write)
        try:   # a small launcher moves them to 3 and 4 and becomes Chromium (safe in threads, unlike preexec_fn)
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _AT_3_AND_4, *map(str, ends), binary, *CHROMIUM_FLAGS,
                 f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=ends)
        finally:
            for fd in ends:
                os.close(fd)
        self._unread, self._last_id, self._events, self._closed = b"", 0, [], False
        try:
            target = self._send("Target.createTarget", url="about:blank")["targetId"]
            self._session = self._send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            self._send("Page.enable", self._session)
        except ChromiumError:
            self.close()
            raise

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._unread:
            if not select.select([self._answers], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise ChromiumError("Chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise ChromiumError("Chromium closed its DevTools pipe (it crashed or was killed)")
            self._unread += chunk
        message, self._unread = self._unread.split(b"\0", 1)
        return json.loads(message)

    def _send(self, method: str, session: str | None = None, timeout: float = ANSWER_TIMEOUT, **params) -> dict:
        self._last_id += 1
        command = {"id": self._last_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        data = json.dumps(command).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._commands, data):]
        except OSError as exc:
            raise ChromiumError(f"Chromium's DevTools pipe is closed ({exc.strerror})") from exc
        deadline = time.monotonic() + timeout
        while True:
            message = self._message(deadline)
            if message.get("id") == self._last_id:
                if "error" in message:
                    raise ChromiumError(f"Chromium refused {method}: {message['error']}")
                return message.get("result", {})
            self._events.append(message)

    def _wait_for_event(self, name: str) -> None:
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while not any(e.get("method") == name and e.get("sessionId") == self._session for e in self._events):
            self._events.append(self._message(deadline))
        self._events.clear()

    def _evaluate(self, script: str):
        answer = self._send("Runtime.evaluate", self._session, expression=script, awaitPromise=True,
                            returnByValue=True)
        if "exceptionDetails" in answer:
            raise ChromiumError(f"the page check's script failed: {answer['exceptionDetails'].get('text')}")
        return answer["result"]["value"]

    def load(self, page: pathlib.Path, width: int, height: int, script: str = CHECK_SCRIPT):
        """Load ``page`` in a ``width`` x ``height`` window and return what ``script`` finds in it."""
        self.resize(width, height)
        self._events.clear()
        self._send("Page.navigate", self._session, url=page.resolve().as_uri())
        self._wait_for_event("Page.loadEventFired")
        return self._evaluate(script)

    def resize(self, width: int, height: int) -> None:
        self._send("Emulation.setDeviceMetricsOverride", self._session, width=width, height=height,
                   deviceScaleFactor=1, mobile=False)

    def screenshot(self, path: pathlib.Path) -> None:
        """Save the window as a PNG."""
        path.write_bytes(base64.b64decode(self._send("Page.captureScreenshot", self._session, format="png")["data"]))

    def close(self) -> None:
        """Stop Chromium (killed if it does not close within 10 s) and remove its profile; again does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self._send("Browser.close", timeout=10)
            self._process.wait(timeout=10)
        except (ChromiumError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._commands)
            os.close(self._answers)
            shutil.rmtree(self._profile, ignore_errors=True)


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


def _is_notebook(page: pathlib.Path) -> bool:
    """A page built from a notebook (a chapter, the intro, a case study, a computed reference page)."""
    return (ROOT / "book" / (page.stem + ".ipynb")).is_file()


def _problems_at_500px(found: dict, source: str) -> list[str]:
    """What a 500 px window cannot show (empty when everything wraps or scrolls), from ``CHECK_SCRIPT``'s
    answer."""
    problems = ["the page scrolls sideways at 500 px"] if found["sideways"] else []
    problems += [f"cut at 500 px (wrap it, or let its box scroll): {text!r}" for text in found["cut"]]
    expected = source.count('class="dpcp-interactive"')
    if len(found["figures"]) != expected:
        problems.append(f"{expected} interactive figures in the page source, {len(found['figures'])} rendered")
    for figure in found["figures"]:
        if not figure["drawn"]:
            problems.append(f"interactive figure {figure['id']!r} draws nothing")
        elif not figure["changed"]:
            problems.append(f"interactive figure {figure['id']!r} does not change when its slider moves")
    return problems


def check_page(browser: _Browser, page: pathlib.Path, shots: pathlib.Path, narrow: bool = False) -> list[str]:
    """Return a list of problems found on one page (empty when it is fine)."""
    source = page.read_text(encoding="utf-8")
    broken, wide = _broken_images(page, source)
    problems = [f"broken image {b}" for b in broken]
    computed = _is_notebook(page)
    if computed:  # chapters and other computed pages: figures must be legible at 500 px
        problems += [f"figure too wide for a 500 px window, {w}" for w in wide]
    found = browser.load(page, NARROW, CHECK_HEIGHT)      # one load for the 500 px check and the math
    body = source.split('<main', 1)[-1]
    if any(marker in body for marker in MATH_MARKERS) and not found["typeset"]:
        problems.append("page has math but Chromium rendered no <mjx-container> (MathJax not typeset)")
    problems += _problems_at_500px(found, source)
    if narrow and computed:  # computed pages: the whole page at 500 px, to look at the figures
        browser.resize(NARROW, min(found["height"], NARROW_HEIGHT))
        browser.screenshot(shots / (page.stem + "-narrow.png"))
    if narrow:
        browser.load(page, *WIDE, script=TYPESET_SCRIPT)
        browser.screenshot(shots / (page.stem + ".png"))
    return problems


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
    binary = _chromium()
    failures = 0
    idle = queue.Queue()
    try:
        for _ in range(WORKERS):
            idle.put(_Browser(binary))

        def check(page):
            browser = idle.get()
            try:
                return page, check_page(browser, page, shots, narrow)
            except ChromiumError as exc:        # the page hung or crashed Chromium: a fresh one checks the next pages
                browser.close()
                browser = _Browser(binary)
                return page, [f"Chromium could not check this page: {exc}"]
            finally:
                idle.put(browser)

        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for page, problems in pool.map(check, pages):
                status = "ok" if not problems else "FAIL"
                print(f"{status:4s} {page.relative_to(html_dir)}")
                for problem in problems:
                    print(f"     - {problem}")
                failures += bool(problems)
    finally:
        while not idle.empty():
            idle.get().close()
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
