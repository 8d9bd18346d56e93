"""``rdp-verify --help`` lists every exit code a subcommand can return, as its subcommands' epilogs and code do."""

import argparse
import ast
import re
from pathlib import Path

import rdp_verify.cli
from rdp_verify.cli import build_parser

CLI = Path(rdp_verify.cli.__file__).parent


def listed_codes(epilog: str) -> set[int]:
    """The codes of an epilog's 'Exit codes: 0 ok, 1 ..., 2 bad input' text (a digit followed by a word)."""
    at = epilog.lower().find("exit codes")
    return {int(c) for c in re.findall(r"(?<![\w.])(\d+)(?= [a-z`])", epilog[at:])} if at >= 0 else set()


def parsers(parser: argparse.ArgumentParser):
    """Every parser under ``parser`` (subcommands and their own subcommands, e.g. ``cdp zcdp``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from parsers(sub)


def returned_codes(source: str) -> set[int]:
    """The exit codes a command module returns literally: ``return 3``, ``return 3 if ... else 0``, ``EXIT = {...}``."""
    codes = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return) and node.value is not None:
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            codes |= {v.value for v in values if isinstance(v, ast.Constant) and type(v.value) is int}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXIT" for t in node.targets):
            codes |= {v.value for v in node.value.values if isinstance(v, ast.Constant)}
    return codes


def test_listed_codes_reads_an_epilog():
    assert listed_codes("Examples: rdp 2 x\nExit codes: 0 ok, 1 a claim failed, 2 bad input, 3 partial\n(1e6 x).") \
        == {0, 1, 2, 3}


def test_top_level_help_lists_every_subcommand_exit_code():
    top = build_parser()
    listed = listed_codes(top.epilog)
    assert {0, 1, 2} <= listed
    documented = set().union(*(listed_codes(p.epilog or "") for p in parsers(top)))
    # main()'s own 130 (interrupted) and 141 (broken pipe) are the shell's conventions, not a command's verdict
    returned = set().union(*(returned_codes(f.read_text()) for f in CLI.glob("*.py") if f.name != "__init__.py"))
    assert 3 in documented and 3 in returned  # dp and rdp: partial
    assert documented <= listed, f"not in rdp-verify --help: {sorted(documented - listed)}"
    assert returned <= listed, f"not in rdp-verify --help: {sorted(returned - listed)}"


def test_top_level_help_text_and_module_docstring_name_exit_code_3(capsys):
    try:
        build_parser().parse_args(["--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert 3 in listed_codes(out) and "partial" in out
    assert "3 partial" in " ".join(rdp_verify.cli.__doc__.split())
