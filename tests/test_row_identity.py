"""Per-record results keep the caller's row identity: the pandas index, and an ``id=`` column
carried into ``to_frame()`` and the command line's ``--records``."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import S002_KEYS, s002_table
from sdckit import MissingColumnError, SdcError
from sdckit.cli import main


def _with_ids():
    d = s002_table()
    return d.with_columns(pl.Series("pid", [f"P{i:03d}" for i in range(d.height)]))


def test_id_column_comes_first_and_follows_the_records():
    d = _with_ids()
    res = sdckit.individual_risk(d, S002_KEYS, weight="w", id="pid")
    out = res.to_frame()
    assert out.columns[0] == "pid" and out["pid"].to_list() == d["pid"].to_list()
    np.testing.assert_array_equal(out["risk"].to_numpy(), res.risk)
    # shuffled input: joined on the id, every record gets the risk it had before
    perm = np.random.default_rng(0).permutation(d.height)
    shuffled = sdckit.individual_risk(d[perm], S002_KEYS, weight="w", id="pid").to_frame()
    joined = d.join(shuffled, on="pid", how="left")
    np.testing.assert_allclose(joined["risk"].to_numpy(), res.risk)


def test_ids_carried_through_derived_results():
    d = _with_ids()
    freq = sdckit.frequencies(d, S002_KEYS, weight="w", id="pid")
    assert sdckit.k_anonymity(freq).to_frame().columns[0] == "pid"
    thr = sdckit.individual_risk(d, S002_KEYS, weight="w", id="pid").threshold(0.01)
    assert thr.to_frame().columns[0] == "pid"
    assert sdckit.suda(d, S002_KEYS, id="pid").to_frame(msus=True).columns[0] == "pid"


def test_ids_never_in_aggregates():
    d = _with_ids()
    res = sdckit.individual_risk(d, S002_KEYS, weight="w", id="pid")
    text = str(res.summary()) + repr(res) + str(res.to_dict())
    assert "P00" not in text


def test_bad_id_is_a_clear_error():
    d = _with_ids()
    with pytest.raises(MissingColumnError, match="id: column.s. nope not found"):
        sdckit.frequencies(d, S002_KEYS, id="nope")
    with pytest.raises(SdcError, match="id: got list"):
        sdckit.frequencies(d, S002_KEYS, id=["pid"])


def test_cli_records_carry_the_id_column(tmp_path):
    path = tmp_path / "data.csv"
    _with_ids().write_csv(path)
    out = tmp_path / "records.csv"
    rc = main(["risk", str(path), "--keys", ",".join(S002_KEYS), "--weight", "w", "--id", "pid", "--records", str(out)])
    assert rc == 0
    rec = pl.read_csv(out)
    assert rec.columns[0] == "pid" and rec["pid"].to_list() == _with_ids()["pid"].to_list()
    out2 = tmp_path / "freq.csv"
    assert main(["freq", str(path), "--keys", ",".join(S002_KEYS), "--id", "pid", "--records", str(out2)]) == 0
    assert pl.read_csv(out2).columns[0] == "pid"
