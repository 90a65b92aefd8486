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


# -- the watcher: following and cancelling a computation (the app's progress bar and Cancel) --
def test_watcher_follows_named_steps_and_a_counted_stage_without_a_bar(capsys):
    from sdckit._progress import Watcher, step, watch

    w = Watcher()
    with watch(w):
        step("reading")
        assert w.snapshot()["label"] == "reading" and w.snapshot()["share"] is None
        with progress_bar(False, total=4, desc="search") as bar:
            bar.update(1)
            step("household risk")  # a step inside the counted stage is its detail
            snap = w.snapshot()
            assert (snap["label"], snap["detail"], snap["share"]) == ("search", "household risk", 0.25)
            with progress_bar(False, total=10, desc="inner") as inner:  # a nested count is not the shown one
                inner.update(10)
            assert w.snapshot()["share"] == 0.25 and w.snapshot()["label"] == "search"
            bar.update(3)
            assert w.snapshot()["share"] == 1.0
        assert w.snapshot()["share"] is None  # the counted stage is over
        step("writing")
        assert w.snapshot()["label"] == "writing"
    assert capsys.readouterr().err == ""  # followed, never drawn


def test_a_cancelled_computation_stops_at_its_next_checkpoint_and_leaves_its_input():
    import threading

    import sdckit
    from conftest import S002_KEYS, s002_table
    from sdckit._errors import Cancelled
    from sdckit._progress import Watcher, watch

    data = s002_table()
    before = data.clone()
    w = Watcher()
    w.cancel()
    with watch(w), pytest.raises(Cancelled):
        sdckit.individual_risk(data, S002_KEYS)
    assert data.equals(before)
    assert not issubclass(Cancelled, SdcError)  # not an input error

    # the watcher belongs to its context: a computation in another thread is not cancelled
    out = []
    with watch(w):
        t = threading.Thread(target=lambda: out.append(sdckit.individual_risk(data, S002_KEYS)))
        t.start()
        t.join()
    assert len(out) == 1

    # cancelled in the middle of a search: stops at the next candidate
    counted = []

    class Stop(Watcher):
        def _counted(self, label, total, opening):
            super()._counted(label, total, opening)
            if opening:
                counted.append(total)
                self.cancel()

    with watch(Stop()), pytest.raises(Cancelled):
        sdckit.search(data, sdckit.Scenario(keys=S002_KEYS), target={"k": 3}, progress=False)
    assert counted and counted[0] > 1
