"""Progress feedback: shown when asked (or on a terminal), silent otherwise."""

from __future__ import annotations

import pytest

from sdckit import SdcError
from sdckit._progress import progress_bar


def test_progress_bar_shown_when_asked(capsys):
    with progress_bar(True, total=3, desc="pairs") as bar:
        bar.step("first")
        bar.update(3)
    assert "pairs" in capsys.readouterr().err


def test_progress_bar_silent_when_not_asked(capsys):
    with progress_bar(False, total=3, desc="pairs") as bar:
        bar.step("first")
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_progress_none_means_terminal_only(capsys):
    # under pytest stderr is captured, not a terminal: nothing is drawn
    with progress_bar(None, total=1, desc="x") as bar:
        bar.update()
    assert capsys.readouterr().err == ""


def test_progress_must_be_a_bool():
    with pytest.raises(SdcError, match="progress: got 'yes'"):
        progress_bar("yes", total=1, desc="x")


def test_measures_show_their_steps_when_asked(capsys):
    import sdckit
    from conftest import S002_KEYS, s002_table

    sdckit.individual_risk(s002_table(), S002_KEYS, weight="w", progress=True)
    err = capsys.readouterr().err
    assert "individual_risk" in err and "counting key patterns" in err
    sdckit.individual_risk(s002_table(), S002_KEYS, weight="w", progress=False)
    assert capsys.readouterr().err == ""
    with pytest.raises(SdcError, match="progress: got 1"):
        sdckit.frequencies(s002_table(), S002_KEYS, progress=1)
