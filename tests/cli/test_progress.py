"""Long runs talk (issue 39, item 5): a progress bar on stderr when it is a terminal, and nothing otherwise.

In-process tests stand a terminal in for stderr (``isatty()`` true) and draw at once (no delay): the refinements of
``dp`` (grid, step, stage, width so far), the leaves of an event tree, the grid maps and ``check`` of a list (each
certificate's index and verdict). Without a terminal stderr stays empty and ``--json`` prints pure JSON. One test
runs the command under a real pseudo-terminal; a slow one runs the MNIST run at tolerance 1e-7 on one, with the
real delay, and types Ctrl-C (the acceptance test of items 4 and 5 together).
"""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from rdp_verify.cli import main
from rdp_verify.cli.dp import Refining
from rdp_verify.foundations import parallel

ROOT = Path(__file__).resolve().parents[2]
DP = ["dp", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-5"]  # one grid, about a second
EVENT = ["dp", "--event", str(ROOT / "examples" / "event-dpsgd-laplace.json"), "--delta", "1e-5"]
GRID = ["certify", "--q", "0.01,0.1", "--sigma", "4", "--alpha", "32", "--dps", "15"]


class Terminal(io.StringIO):
    """A stderr that says it is a terminal (of no known size)."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A terminal for stderr: set in the test itself (pytest's capture puts its own stderr back after set-up)."""
    monkeypatch.setattr(parallel, "BAR_DELAY", 0.0)  # draw at once: the commands here take about a second

    def install() -> Terminal:
        screen = Terminal()
        monkeypatch.setattr(sys, "stderr", screen)
        return screen

    return install


def lines(screen: Terminal) -> list[str]:
    """What the bars drew, one redraw a line."""
    return [line.strip() for line in screen.getvalue().split("\r") if line.strip()]


def test_dp_shows_its_grids_and_widths_on_a_terminal(terminal, capsys):
    screen = terminal()
    assert main([*DP, "--json"]) == 0
    drawn = lines(screen)
    assert any(line.startswith("dp [00:0") and line.endswith("grid 1 (step 5e-4): discretising, tolerance 1e-3")
               for line in drawn)
    assert any(line.endswith("grid 1 (step 5e-4): composing, tolerance 1e-3") for line in drawn)
    assert any(line.endswith("grid 1 (step 5e-4): done; width 1.58e-4, tolerance 1e-3") for line in drawn)
    assert json.loads(capsys.readouterr().out)["verdict"] == "certified"  # stdout: the JSON alone


def test_refinements_show_the_tightest_width_so_far(terminal):
    screen = terminal()
    with Refining(Fraction(1, 10**7)) as progress:
        progress({"stage": "grid", "grid": 1, "grid_step": Fraction(1, 5000), "best_width": None})
        progress({"stage": "width", "grid": 1, "grid_step": Fraction(1, 5000), "relative_width": 0.000243})
        progress({"stage": "grid", "grid": 2, "grid_step": Fraction(1, 10000), "best_width": 0.000243})
        progress({"stage": "leaf", "leaf": 2, "leaves": 3, "mechanism": "Laplace"})
        progress({"stage": "width", "grid": 2, "grid_step": Fraction(1, 10000), "relative_width": 0.0004})
        progress({"stage": "composing", "grid": 3, "grid_step": Fraction(1, 40000)})
    assert [line.split("] ", 1)[1] for line in lines(screen) if "grid" in line] == [
        "grid 1 (step 2e-4): discretising, tolerance 1e-7",
        "grid 1 (step 2e-4): done; width 2.43e-4, tolerance 1e-7",
        "grid 2 (step 1e-4): discretising; width 2.43e-4, tolerance 1e-7",
        "grid 2 (step 1e-4): leaf 2/3 (Laplace); width 2.43e-4, tolerance 1e-7",
        "grid 2 (step 1e-4): done; width 2.43e-4, tolerance 1e-7",  # a wider grid leaves the tightest one
        "grid 3 (step 2.5e-5): composing; width 2.43e-4, tolerance 1e-7"]


def test_an_event_tree_shows_its_leaves(terminal, capsys):
    screen = terminal()
    assert main([*EVENT, "--json"]) == 0
    drawn = lines(screen)
    assert any("leaf 1/1 (Laplace)" in line for line in drawn)
    assert any(line.endswith("cross-check") for line in drawn)
    assert json.loads(capsys.readouterr().out)["verdict"] == "certified"


def test_check_of_a_list_reports_each_certificate(terminal, capsys, tmp_path):
    screen = terminal()
    assert main([*GRID, "--out", str(tmp_path / "grid.json")]) == 0
    assert any(line.startswith("certifying:") and "2/2" in line for line in lines(screen))
    certs = json.loads((tmp_path / "grid.json").read_text())
    bad = json.loads(json.dumps(certs[1]))
    bad["epsilon"]["upper"] = "1"  # breaks its seal: checked at once
    (tmp_path / "bad.json").write_text(json.dumps([certs[0], bad, certs[1]]))
    screen.seek(0), screen.truncate()
    assert main(["check", str(tmp_path / "bad.json")]) == 1
    drawn = lines(screen)  # tqdm draws at most every 0.1 s: each valid one takes longer
    assert any(line.startswith(f"reading {tmp_path}") for line in drawn)  # parsing a long list, before the checks
    assert any(line.startswith("checking:") and "1/3" in line and "cert/s, [0] confirmed]" in line for line in drawn)
    assert any(line.startswith("checking:") and "3/3" in line and "[2] confirmed, 1 failed]" in line for line in drawn)
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'bad.json'}: FAILED [1] ")


def test_no_terminal_no_bar(capsys, monkeypatch):
    monkeypatch.setattr(parallel, "BAR_DELAY", 0.0)
    assert main([*EVENT, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["verdict"] == "certified"
    assert main(GRID) == 0
    out, err = capsys.readouterr()
    assert err == "" and len(json.loads(out)) == 2


def test_the_bar_is_erased_and_the_clock_ticks(terminal):
    screen = terminal()
    with parallel.progress_bar(bar_format="{desc} [{elapsed}]") as bar, parallel.ticking(bar, every=0.05):
        bar.set_description_str("waiting", refresh=False)
        time.sleep(0.3)  # no update: only the ticking thread draws
    drawn = screen.getvalue()
    assert "waiting [00:00]" in drawn
    assert drawn.endswith("\r")  # erased at the end (tqdm erases only a bar it knows it drew)
    assert drawn.rstrip("\r ").endswith("]")  # the last drawing was blanked over, not left behind


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pseudo-terminal")
def test_dp_under_a_pseudo_terminal(tmp_path):
    # the command line itself, its stderr a pseudo-terminal of no known size (as under script(1)), its stdout a pipe:
    # the bar reaches the terminal and the JSON stays pure. BAR_DELAY is 0 so that a one-second run draws
    program = ("import sys; from rdp_verify.foundations import parallel; parallel.BAR_DELAY = 0.0; "
               "from rdp_verify.cli import main; sys.exit(main(sys.argv[1:]))")
    controller, device = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", program, *EVENT, "--json"], stdout=subprocess.PIPE,
                                stderr=device, stdin=subprocess.DEVNULL, cwd=tmp_path)
        os.close(device)
        screen = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the device closed: the command ended
                break
            if not chunk:
                break
            screen += chunk
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(controller)
    assert proc.returncode == 0 and json.loads(out)["verdict"] == "certified"
    text = screen.decode()
    assert "dp [00:0" in text and "grid 1 (step " in text and "leaf 1/1 (Laplace)" in text
    assert text.endswith("\r")  # the bar erased: the terminal is left clean


def run_on_a_terminal(args: list[str], until: bytes, then: bytes = b"\x03", timeout: float = 120.0):
    """Run ``rdp-verify args`` with a pseudo-terminal (80 x 24) as its controlling terminal, stdin, stdout and
    stderr; once ``until`` appears on the screen, type ``then`` (Ctrl-C). The screen and the exit status."""
    import fcntl
    import select
    import struct
    import termios

    pid, controller = pty.fork()
    if pid == 0:  # the child: the command, in a session of its own whose terminal is the pseudo-terminal
        os.execv(sys.executable, [sys.executable, "-m", "rdp_verify.cli", *args])
    fcntl.ioctl(controller, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    screen, typed, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([controller], [], [], 0.2)[0]:
                continue
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the command ended
                break
            if not chunk:
                break
            screen += chunk
            if not typed and until in screen:
                os.write(controller, then)
                typed = True
    finally:
        os.close(controller)
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return screen.decode(errors="replace"), status


@pytest.mark.slow  # about 10 s: the acceptance test of issue 39's items 4 and 5 on a real (pseudo-)terminal
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pseudo-terminal")
def test_the_mnist_run_at_tolerance_1e_7_talks_and_stops_on_ctrl_c():
    # MNIST (q = 256/60000, sigma = 1.1, 14063 steps) at tolerance 1e-7 takes minutes: its grids show as they come,
    # with the real one-second delay; Ctrl-C in the third grid stops it and its workers with one line
    screen, status = run_on_a_terminal(["dp", "--q", "256/60000", "--sigma", "1.1", "--steps", "14063", "--delta",
                                        "1e-5", "--tolerance", "1e-7", "--jobs", "2"], until=b"grid 3 (step 5e-5)")
    assert status == 130
    assert "dp [00:0" in screen and "grid 2 (step 1e-4): discretising; width 2.43e-4, tolerance 1e-7" in screen
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen
    assert screen.rstrip().endswith("rdp-verify: interrupted")
    assert screen.count("interrupted") == 1


def test_the_progress_callback_hears_every_grid_and_changes_nothing():
    from rdp_verify.curves.accountant import bracket
    from rdp_verify.foundations.run import Phase
    from rdp_verify.mechanisms.laplace import Laplace

    phases, delta = [Phase(Fraction(1, 100), Fraction(1), 200)], Fraction(1, 10**5)
    leaves = [(Laplace(Fraction(20)), 3)]
    heard: list[dict] = []
    told = bracket(phases, delta=delta, tolerance=Fraction(1, 10**4), leaves=leaves, progress=heard.append)
    quiet = bracket(phases, delta=delta, tolerance=Fraction(1, 10**4), leaves=leaves)
    widths = [(r["grid_step"], r["relative_width"]) for r in told.refinements]
    assert (told.lower, told.upper, widths) == (quiet.lower, quiet.upper,
                                                [(r["grid_step"], r["relative_width"]) for r in quiet.refinements])
    grids = len(told.refinements)
    assert [e["stage"] for e in heard] == ["grid", "leaf", "composing", "width"] * grids
    assert [(e["grid_step"], e["relative_width"]) for e in heard if e["stage"] == "width"] == widths
    assert heard[1] == {"stage": "leaf", "leaf": 1, "leaves": 1, "mechanism": "Laplace"}
