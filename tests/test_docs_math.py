"""The site's formulas are typeset by MathJax in a real browser, offline.

The docs write formulas as LaTeX (MyST's ``dollarmath``: ``$...$`` and ``$$...$$``); Sphinx turns them
into ``\\(...\\)`` and ``\\[...\\]`` spans that MathJax typesets in the reader's browser. MathJax comes
from the ``sphinx-mathjax-offline`` package, copied into ``_static/mathjax`` (docs/conf.py), so neither
the build nor a reader needs the network. The checks, on the site built once per session
(tests/conftest.py):

* every page with formulas loads MathJax from the site's own files, and nothing from elsewhere;
* no page's visible text (outside code) keeps a ``$`` that ``dollarmath`` did not turn into a formula;
* in headless Chromium (Debian's ``chromium``) with every host name unresolvable, each such page ends up
  with one typeset ``mjx-container`` per formula, no MathJax error, no undefined macro (MathJax shows
  those in red) and no raw delimiter left in its visible text. One browser opens every page, each in a
  fresh tab, driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``); a page's DOM is
  read once MathJax's start-up typesetting has finished (``MathJax.startup.promise``).

Without Chromium the browser test skips, unless RDP_VERIFY_REQUIRE_BROWSER=1 (tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

MATHJAX = "_static/mathjax/tex-chtml.js"  # set by sphinx-mathjax-offline
# Pages that state formulas: if one of them loses its math (say dollarmath is switched off), the
# checks below would pass vacuously on it.
PAGES_WITH_MATH = {"index", "auditors", "privacy-curves", "researchers", "cdp", "library-authors", "calibration",
                   "cluster", "mathematics", "certificates"}
MATH_NODE = re.compile(r'class="math notranslate nohighlight"')
BROWSER_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves: nothing can be fetched
                "--remote-debugging-pipe")  # the DevTools protocol on fds 3 (requests) and 4 (replies)
PAGE_TIMEOUT = 180  # seconds per page: MathJax typesets a page in well under one; this only stops a hang
# the page's DOM once MathJax has typeset it (its start-up promise settles after the first typesetting);
# without MathJax on the page, the DOM as loaded, and the count of typeset formulas says so
TYPESET_DOM = """(async () => {
  const startup = window.MathJax && window.MathJax.startup;
  if (startup && startup.promise) await startup.promise;
  return document.documentElement.outerHTML;
})()"""


class VisibleText(HTMLParser):
    """The text a reader sees, without code, scripts, styles and typeset formulas."""

    SKIP = {"script", "style", "pre", "code", "head", "noscript", "textarea", "mjx-container", "svg"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def pages(site: Path) -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(site.glob("*.html"))}


def math_pages(site: Path) -> dict[str, int]:
    """Page name: number of formulas Sphinx wrote into it."""
    return {name: n for name, html in pages(site).items() if (n := len(MATH_NODE.findall(html)))}


@pytest.fixture(scope="module")
def site(docs_build) -> Path:
    assert docs_build.returncode == 0, docs_build.stderr[-3000:]
    return docs_build.html


def test_pages_with_formulas_load_mathjax_from_the_site(site):
    found = math_pages(site)
    assert PAGES_WITH_MATH <= set(found), f"pages without formulas: {sorted(PAGES_WITH_MATH - set(found))}"
    assert (site / MATHJAX).is_file() and (site / "_static/mathjax/output/chtml/fonts/woff-v2").is_dir()
    for name, html in pages(site).items():
        scripts = re.findall(r'<script[^>]*\bsrc="([^"]*)"', html)
        assert not [s for s in scripts if re.match(r"(?i)(https?:)?//", s)], f"{name}.html loads a remote script"
        assert (MATHJAX in scripts) == (name in found), f"{name}.html: MathJax loaded {MATHJAX in scripts}"


def test_no_dollar_left_in_the_text(site):
    stray = {name: re.findall(r".{0,40}\$.{0,40}", visible_text(html)) for name, html in pages(site).items()}
    assert not {name: hits for name, hits in stray.items() if hits}, "a $ that dollarmath did not parse"


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """One headless Chromium, driven over the DevTools protocol on a pipe.

    ``--remote-debugging-pipe``: the browser reads requests on its fd 3 and writes replies and events on
    its fd 4, each a JSON message ending in a NUL byte. Starting the browser costs far more than loading
    a page, so every page is opened in a fresh tab of this one browser.
    """

    def __init__(self, executable: str, profile: Path, log: Path):
        requests_read, self._requests = os.pipe()
        self._replies, replies_write = os.pipe()
        # the browser's ends moved to fds 10 and up, so that putting them on 3 and 4 overwrites neither
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (requests_read, replies_write)]
        os.close(requests_read)
        os.close(replies_write)
        redirect = f"3<&{ends[0]} 4>&{ends[1]} {ends[0]}<&- {ends[1]}>&-"
        with log.open("wb") as stderr:  # the browser's own messages, for a failure report
            self._proc = subprocess.Popen(
                ["bash", "-c", f'exec "$0" "$@" {redirect}', executable, *BROWSER_ARGS,
                 f"--user-data-dir={profile}", "about:blank"],
                pass_fds=ends, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
        for fd in ends:
            os.close(fd)
        self._log, self._buffer, self._last_id, self._events = log, b"", 0, []

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise TimeoutError(f"no answer from the browser within {PAGE_TIMEOUT} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                tail = self._log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the browser closed its pipe (exit {self._proc.poll()}): {tail}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """The result of one request (events that arrive meanwhile are kept for ``wait_for``)."""
        self._last_id += 1
        message = {"id": self._last_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._requests, data):]
        deadline = time.monotonic() + PAGE_TIMEOUT
        while True:
            reply = self._receive(deadline)
            if reply.get("id") != self._last_id:
                self._events.append(reply)
            elif "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            else:
                return reply["result"]

    def wait_for(self, event: str, session: str) -> None:
        deadline = time.monotonic() + PAGE_TIMEOUT
        while True:
            for i, message in enumerate(self._events):
                if message.get("method") == event and message.get("sessionId") == session:
                    del self._events[: i + 1]
                    return
            self._events.append(self._receive(deadline))

    def typeset_dom(self, url: str) -> str:
        """The DOM of the page at ``url``, in a fresh tab, after MathJax's typesetting."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        try:
            session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            self.send("Page.enable", session)
            self.send("Page.navigate", session, url=url)
            self.wait_for("Page.loadEventFired", session)
            result = self.send("Runtime.evaluate", session, expression=TYPESET_DOM, awaitPromise=True,
                               returnByValue=True)
            if "exceptionDetails" in result:
                raise RuntimeError(f"reading the typeset page failed: {result['exceptionDetails']}")
            return result["result"]["value"]
        finally:
            try:
                self.send("Target.closeTarget", targetId=target)
            except (OSError, RuntimeError, TimeoutError):
                pass  # the page's own failure, if any, is the one reported

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._requests)
        os.close(self._replies)


def test_formulas_are_typeset_in_a_browser_offline(site, tmp_path):
    executable = chromium()
    if executable is None:
        pytest.skip("no Chromium browser on PATH: apt-get install chromium (Debian's package)")
    problems = []
    browser = Chromium(executable, tmp_path / "profile", tmp_path / "chromium.log")
    try:
        expected = sorted(math_pages(site).items())
        for i, (name, count) in enumerate(expected):
            try:
                dom = browser.typeset_dom((site / f"{name}.html").as_uri())
            except (OSError, RuntimeError, TimeoutError) as error:
                problems.append(f"{name}: the browser did not give the typeset page: {error}")
                if isinstance(error, TimeoutError) or not browser.alive():  # no use waiting on every other page
                    problems.append(f"not checked: {', '.join(n for n, _ in expected[i + 1:])}")
                    break
                continue
            typeset = dom.count("<mjx-container")
            text = visible_text(dom)
            raw = re.findall(r".{0,30}(?:\$|\\\(|\\\)|\\\[|\\\]).{0,30}", text)
            if typeset != count:
                problems.append(f"{name}: {typeset} of {count} formulas typeset")
            if "<mjx-merror" in dom or 'mathcolor="red"' in dom:
                problems.append(f"{name}: MathJax reports a TeX error or an undefined macro")
            if raw:
                problems.append(f"{name}: raw delimiters in the text: {raw[:5]}")
    finally:
        browser.close()
    assert not problems, "\n".join(problems)
