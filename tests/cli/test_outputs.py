"""Every output path of every command is checked before the command runs (issue 23).

The outputs are enumerated from the parser (:meth:`rdp_verify.cli.common.Parser.add_output` records
them), so a new command or flag cannot escape: it fails :func:`test_every_writing_command_is_covered`
until it has base arguments here. Each command's function is replaced by one that raises, so a bad
path must be refused by ``main`` before anything of the command runs; a good path reaches it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import rdp_verify.cli as cli
from rdp_verify.cli import main

# Arguments that would start a long computation, per command (several variants where a flag changes
# what the outputs are). Paths under tmp_path are not read: the command never runs.
BASE: dict[tuple[str, ...], list[list[str]]] = {
    ("certify",): [["--q", "0.001,0.01,0.1", "--sigma", "0.5,1,4", "--alpha", "1.5,2,8,32,128", "--dps", "60"]],
    ("rdp",): [["--q", "0.01", "--sigma", "1.1", "--orders", "dp_accounting_default", "--dps", "50"],
               ["--event", "examples/event-dpsgd-laplace.json", "--orders", "dp_accounting_default"]],
    ("dp",): [["--q", "256/60000", "--sigma", "1.1", "--steps", "1000000", "--delta", "1e-20", "--tolerance", "1e-6"]],
    ("tradeoff",): [["--q", "256/60000", "--sigma", "1.1", "--steps", "1000000", "--fpr", "1e-30"]],
    ("calibrate",): [["--target-epsilon", "1", "--delta", "1e-10", "--q", "256/60000", "--steps", "100000"]],
    ("audit",): [["--q", "0.001", "--sigma", "1", "--steps", "1000000", "--delta", "1e-10", "--epsilon", "1"],
                 ["--q", "0.001", "--sigma", "1", "--steps", "1000000", "--canaries", "examples/canaries-mu3.csv"]],
    ("compare",): [["--against", "all"], ["--dp", "--against", "all"]],
    ("golden",): [[], ["--dp"], ["--grid", "examples/grid-small.json"]],
    ("figure1",): [["--json"]],
    ("table1",): [[]],
    ("cdp", "zcdp"): [["--q", "0.01", "--sigma", "1", "--rho", "0.001"]],
    ("cdp", "tcdp"): [["--q", "0.01", "--sigma", "1", "--rho", "0.001", "--omega", "5"]],
    ("cdp", "best-rho"): [["--q", "0.01", "--sigma", "1"]],
    ("cdp", "largest-omega"): [["--q", "0.01", "--sigma", "1", "--rho", "0.001"]],
    ("cdp", "concentrated"): [["--q", "0.01", "--sigma", "2", "--mu", "0.125", "--tau", "0.5"]],
    ("cdp", "compose"): [["--sigma", "1,2,3"]],
    ("cdp", "dp"): [["--epsilon", "1"]],
}

# Options that name a file or directory the command READS.
INPUTS = {("check", "file"), ("dp", "--phases"), ("dp", "--event"), ("audit", "--event"), ("rdp", "--event"), ("tradeoff", "--phases"),
          ("tradeoff", "--event"), ("calibrate", "--event"), ("compare", "--canaries"), ("audit", "--claims"), ("audit", "--canaries"), ("golden", "--grid"), ("golden", "--verify")}


class Computed(Exception):
    """Raised instead of running a command: reaching it means no output check refused."""


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every command and sub-command that runs something."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
    if parser.get_default("func") is not None:
        yield path, parser


def _outputs() -> dict[tuple[str, ...], tuple]:
    return {path: p.get_default("outputs") for path, p in _commands(cli.build_parser()) if p.get_default("outputs")}


def _cases():
    """(command path, base arguments, output) for every writing command, variant and output flag."""
    for path, outputs in sorted(_outputs().items()):
        for base in BASE.get(path, []):
            for out in outputs:
                yield pytest.param(path, base, out, id=" ".join([*path, *base[:1], out.option]))


@pytest.fixture
def no_command(monkeypatch):
    """Every command's function raises :class:`Computed` instead of computing."""
    build = cli.build_parser

    def stubbed() -> argparse.ArgumentParser:
        parser = build()
        for _, p in _commands(parser):
            p.set_defaults(func=_computed)
        return parser

    monkeypatch.setattr(cli, "build_parser", stubbed)


def _computed(ns: argparse.Namespace) -> int:
    raise Computed


def _kind(path: tuple[str, ...], argv: list[str], out) -> str:
    if not callable(out.kind):
        return out.kind
    ns = cli.build_parser().parse_args([*path, *argv, out.option, "x"])
    return out.kind(ns)


def _bad_paths(tmp: Path, kind: str) -> list[tuple[str, str]]:
    """(path, why it is refused) for an output of this kind; tmp holds the directory dir.png and the file file."""
    suffix = ".png" if kind == "plot" else ".json"
    if kind.endswith("directory"):
        return [(str(tmp / "file"), "exists and is not a directory"),
                (str(tmp / "file" / "sub"), f"{tmp / 'file'} is not a directory"),
                ("/proc/rdp-verify-out", "directory /proc is not writable")]
    bad = [(str(tmp / "dir.png"), "is a directory"),
           (str(tmp / "missing" / f"x{suffix}"), f"directory {tmp / 'missing'} does not exist"),
           (str(tmp / "file" / f"x{suffix}"), f"{tmp / 'file'} is not a directory"),
           (f"/proc/x{suffix}", "directory /proc is not writable")]
    if kind == "plot":
        bad.append((str(tmp / "x.txt"), "must end in .png, .svg or .pdf"))
    return bad


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_every_writing_command_is_covered():
    assert set(_outputs()) == set(BASE), "give base arguments for every command that writes files"
    assert all(BASE.values())


def test_every_file_option_is_an_output_or_an_input():
    recorded = set()
    for path, p in _commands(cli.build_parser()):
        outputs = {out.dest for out in p.get_default("outputs") or ()}
        inputs = {inp.dest for inp in p.get_default("inputs") or ()}
        recorded |= {(path[0], inp.option if inp.option.startswith("-") else inp.dest)
                     for inp in p.get_default("inputs") or ()}
        for action in p._actions:
            named = str(action.metavar or "")
            if any(word in named for word in ("FILE", "DIR", ".json")):
                flag = action.option_strings[0] if action.option_strings else action.dest
                assert action.dest in outputs or (path[0], flag) in INPUTS, f"{' '.join(path)} {flag}: output or input?"
                assert (action.dest in outputs) != (action.dest in inputs), f"{' '.join(path)} {flag}: not recorded"
    assert recorded == INPUTS  # every input is recorded (add_input), so no output may replace it


# commands' required flags, so that the parser reaches the output check
REQUIRED = {("rdp",): ["--orders", "2"], ("compare",): ["--against", "all"],
            ("calibrate",): ["--target-epsilon", "1", "--delta", "1e-5"]}


def _onto_input_cases():
    outputs = _outputs()
    for path, p in _commands(cli.build_parser()):
        for inp in p.get_default("inputs") or ():
            for out in outputs.get(path, ()):
                yield pytest.param(path, inp, out, id=" ".join([*path, inp.option, out.option]))


@pytest.mark.parametrize("path, inp, out", list(_onto_input_cases()))
@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hard link"])
def test_an_output_onto_an_input_is_refused_before_the_command_runs(path, inp, out, spelling, tmp_path, capsys,
                                                                     monkeypatch, no_command):
    # before: `audit --canaries mine.csv --out mine.csv` replaced the canaries by the report (issue 39, item 3)
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "input.png"  # a figure's suffix: a --plot onto it is refused for naming the input
    source.write_text("keep")
    other = {"same": "input.png", "dotted": f"./../{tmp_path.name}/input.png", "symlink": "link.png",
             "hard link": "hard.png"}[spelling]
    if spelling == "symlink":
        (tmp_path / "link.png").symlink_to(source)
    elif spelling == "hard link":
        (tmp_path / "hard.png").hardlink_to(source)
    given = f"elsewhere.csv,{other}" if inp.many else other
    argv = [*path, *REQUIRED.get(path, []), *([inp.option] if inp.option.startswith("-") else []), given,
            out.option, "input.png"]
    before = _tree(tmp_path)
    code = main(argv)  # raises Computed if the command ran
    stdout, stderr = capsys.readouterr()
    assert code == 2 and stdout == ""
    assert stderr == (f"rdp-verify: error: {out.option} input.png names the input of {inp.option} ({other}): "
                      "refused, it would replace what the command reads\n")
    assert _tree(tmp_path) == before and source.read_text() == "keep"


def test_an_output_beside_an_input_reaches_the_command(tmp_path, no_command):
    (tmp_path / "canaries.csv").write_text("score,member\n")
    with pytest.raises(Computed):
        main(["audit", "--q", "1", "--sigma", "1", "--steps", "1", "--canaries", str(tmp_path / "canaries.csv"),
              "--out", str(tmp_path / "canaries.json")])


@pytest.mark.parametrize("path, base, out", list(_cases()))
def test_bad_output_is_refused_before_the_command_runs(path, base, out, tmp_path, capsys, no_command):
    (tmp_path / "dir.png").mkdir()  # a directory with a figure's name: refused as a directory, not as a name
    (tmp_path / "file").write_text("keep")
    before = _tree(tmp_path)
    kind = _kind(path, base, out)
    for bad, why in _bad_paths(tmp_path, kind):
        code = main([*path, *base, out.option, bad])  # raises Computed if the command ran
        stdout, stderr = capsys.readouterr()
        assert code == 2 and stdout == ""
        assert len(stderr.splitlines()) == 1 and stderr.startswith(f"rdp-verify: error: {out.option} {bad}: "), stderr
        assert why in stderr, stderr
        assert _tree(tmp_path) == before and (tmp_path / "file").read_text() == "keep"
    assert not any(Path("/proc").glob("x.*")) and not Path("/proc/rdp-verify-out").exists()


@pytest.mark.parametrize("path, base, out", list(_cases()))
def test_good_output_reaches_the_command(path, base, out, tmp_path, no_command):
    kind = _kind(path, base, out)
    if kind.endswith("directory"):
        good = tmp_path / "new" / "sub"  # made with its parents, after the computation
    else:
        good = tmp_path / ("x.svg" if kind == "plot" else "x.json")
    with pytest.raises(Computed):
        main([*path, *base, out.option, str(good)])
    assert _tree(tmp_path) == []  # the check wrote nothing, made no directory


def test_an_existing_dataset_directory_is_accepted(tmp_path, no_command):
    # golden --grid resumes into the directory it made before: an existing directory is no error there
    with pytest.raises(Computed):
        main(["golden", "--grid", "examples/grid-small.json", "--out", str(tmp_path)])


def test_stdout_dash_is_not_a_path(no_command):
    with pytest.raises(Computed):
        main(["compare", "--against", "all", "--json", "-"])


def test_certify_into_a_missing_folder_computes_nothing(tmp_path, capsys, monkeypatch):
    # the real command, not a stub: the engine would raise if it were reached
    import rdp_verify.certificates.certify as engine

    def never(*args, **kwargs):
        raise AssertionError("certify ran before the output was checked")

    monkeypatch.setattr(engine, "certify", never)
    out = tmp_path / "missing" / "cert.json"
    code = main(["certify", "--q", "0.01", "--sigma", "4", "--alpha", "32", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and err == f"rdp-verify: error: --out {out}: directory {out.parent} does not exist\n"
    assert _tree(tmp_path) == []


def _two_output_cases():
    for path, outputs in sorted(_outputs().items()):
        files = [o for o in outputs if not callable(o.kind) and o.kind in ("file", "plot")]
        for first, second in zip(files, files[1:]):
            for base in BASE.get(path, [])[:1]:
                yield pytest.param(path, base, first, second, id=" ".join([*path, first.option, second.option]))


@pytest.mark.parametrize("path, base, first, second", list(_two_output_cases()))
def test_two_outputs_onto_one_file_are_refused(path, base, first, second, tmp_path, capsys, monkeypatch, no_command):
    # before: `dp --out same.png --plot same.png` wrote the certificate, then the figure over it (exit 0)
    monkeypatch.chdir(tmp_path)
    code = main([*path, *base, first.option, "same.png", second.option, "./same.png"])
    stdout, stderr = capsys.readouterr()
    assert code == 2 and stdout == "" and "refused, one would replace the other" in stderr
    assert len(stderr.splitlines()) == 1 and _tree(tmp_path) == []
