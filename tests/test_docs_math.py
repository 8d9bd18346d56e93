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
  those in red) and no raw delimiter left in its visible text.

Without Chromium the browser test skips, unless RDP_VERIFY_REQUIRE_BROWSER=1 (tests/conftest.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
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
                "--virtual-time-budget=15000")  # let MathJax's asynchronous typesetting finish


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


def test_formulas_are_typeset_in_a_browser_offline(site, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("no Chromium browser on PATH: apt-get install chromium (Debian's package)")
    problems = []
    for name, count in sorted(math_pages(site).items()):
        page = site / f"{name}.html"
        proc = subprocess.run([browser, *BROWSER_ARGS, f"--user-data-dir={tmp_path / name}", "--dump-dom",
                               page.as_uri()], capture_output=True, text=True, timeout=180)
        dom = proc.stdout
        typeset = dom.count("<mjx-container")
        text = visible_text(dom)
        raw = re.findall(r".{0,30}(?:\$|\\\(|\\\)|\\\[|\\\]).{0,30}", text)
        if proc.returncode != 0 or typeset != count:
            problems.append(f"{name}: {typeset} of {count} formulas typeset (exit {proc.returncode})")
        if "<mjx-merror" in dom or 'mathcolor="red"' in dom:
            problems.append(f"{name}: MathJax reports a TeX error or an undefined macro")
        if raw:
            problems.append(f"{name}: raw delimiters in the text: {raw[:5]}")
    assert not problems, "\n".join(problems)
