"""Sphinx configuration: MyST Markdown pages, the CLI reference generated from argparse
(sphinx-argparse) and the API reference generated from the docstrings (autodoc).

Build (the test suite runs the same with warnings as errors, tests/test_docs.py):
    sphinx-build -W -b html docs docs/_build/html
"""

import rdp_verify

project = "rdp_verify"
author = "rdp_verify developers"
release = version = rdp_verify.__version__
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinxarg.ext",
    # MathJax 3 shipped inside the package and copied to _static/mathjax: the site typesets its
    # formulas ($...$ and $$...$$, MyST's dollarmath) without any network access.
    "sphinx-mathjax-offline",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
html_theme = "furo"
html_title = f"rdp_verify {release}"
# "misc.highlighting_failure": Pygments cannot lex a quoted string spread over "> " lines; it retries
# in relaxed mode and the block renders correctly.
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
