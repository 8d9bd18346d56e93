"""Every version of a pinned peer (dp-accounting, prv-accountant, autodp, riskcal, jax-privacy) that the documentation
names is the version pyproject.toml pins: the docs' peer findings are those versions' behaviour."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAMES = r"dp[-_]accounting|prv[-_]accountant|autodp|riskcal|jax[-_]privacy"
# a name, optionally 's, then a version: small dotted components, not a value (7.36331e-05, 2.3817, 21.8 ms)
MENTION = re.compile(rf"\b({NAMES})(?:'s)?(?:\s+|==)v?(\d{{1,2}}(?:\.\d{{1,2}}){{1,3}})(?![\d.]*\d)(?!e[-+]?\d)"
                     r"(?!\s?(?:ms|s|%)(?!\w))", re.IGNORECASE)


def key(name: str) -> str:
    return name.lower().replace("_", "-")


def pins() -> dict[str, str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    found = dict(re.fullmatch(r"([\w.-]+)==([\w.]+)", req).groups() for req in extras["peers"] + extras["fdp-peers"])
    return {key(name): version for name, version in found.items()}


def mentions(text: str) -> list[tuple[int, str, str]]:
    return [(text.count("\n", 0, m.start()) + 1, key(m.group(1)), m.group(2)) for m in MENTION.finditer(text)]


def agrees(mentioned: str, pinned: str) -> bool:
    """0.6 and 0.6.0 name the pin 0.6.0; 0.9 and 0.6.1 do not."""
    return pinned.split(".")[:len(mentioned.split("."))] == mentioned.split(".")


def test_mentions_are_read_as_versions_only():
    text = ("dp_accounting 0.9's h, dp-accounting==0.6.0, prv_accountant\n0.2 (wrapped); values: dp_accounting 7.36331e-05, "
            "prv_accountant 2.3817, dp_accounting 21.8 ms, autodp 0.2.3.1.")
    assert mentions(text) == [(1, "dp-accounting", "0.9"), (1, "dp-accounting", "0.6.0"), (1, "prv-accountant", "0.2"),
                              (2, "autodp", "0.2.3.1")]
    assert agrees("0.6", "0.6.0") and agrees("0.6.0", "0.6.0") and not agrees("0.9", "0.6.0")
    assert not agrees("0.6.1", "0.6.0") and not agrees("0.60", "0.6.0")
    assert set(pins()) == {"dp-accounting", "prv-accountant", "autodp", "riskcal", "jax-privacy"}


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in [ROOT / "README.md",
                                                                                  *(ROOT / "docs").glob("*.md")]))
def test_named_peer_versions_match_the_pins(page):
    pinned = pins()
    wrong = [f"{page}:{line}: {name} {version} (pinned: {pinned[name]})"
             for line, name, version in mentions((ROOT / page).read_text()) if not agrees(version, pinned[name])]
    assert not wrong, "\n".join(wrong)
