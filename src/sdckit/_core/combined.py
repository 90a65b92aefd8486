"""Combined disclosure risk of categorical and continuous keys per record (pure NumPy).

The categorical keys give a record the risk 1/f of the frequency rule (f = records sharing its
key values), the continuous keys the risk 1/c of the relative-interval rule (c = records inside
its intervals (x - p|x|, x + p|x|) on every continuous key at once). The combination of the two
is one of:

* ``"joint"``: 1/c_K, with c_K the records that share the key values *and* lie inside the
  intervals (an intruder who knows both; c_K <= min(f, c), so the risk is at least the larger
  of the two);
* ``"max"``: max(1/f, 1/c) (the better of the two routes, each taken alone);
* ``"union"``: 1 - (1 - 1/f)(1 - 1/c) (either route succeeds, the two taken as independent).

A record with a missing continuous value has no continuous risk (NaN); its combined risk is its
categorical one (an intruder can match it on the key values only).
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMBINE_RULES", "combine_risks"]

#: the ways of combining the categorical and the continuous risk of a record
COMBINE_RULES = ("joint", "max", "union")


def combine_risks(
    frequency: np.ndarray, interval_count: np.ndarray, joint_count: np.ndarray, combine: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record: the categorical risk 1/f, the continuous risk 1/c (NaN where c is NaN) and
    their combination by ``combine`` (module docstring), all in (0, 1].

    Parameters
    ----------
    frequency : (n,) number of records with the record's key values (>= 1)
    interval_count : (n,) records inside its intervals on every continuous key (NaN: missing)
    joint_count : (n,) records with its key values inside those intervals (NaN: missing)
    combine : one of :data:`COMBINE_RULES`
    """
    f = np.asarray(frequency, dtype=float)
    c = np.asarray(interval_count, dtype=float)
    k = np.asarray(joint_count, dtype=float)
    r_cat = 1.0 / f
    with np.errstate(invalid="ignore", divide="ignore"):
        r_cont = 1.0 / c
        if combine == "joint":
            r = 1.0 / k
        elif combine == "max":
            r = np.fmax(r_cat, r_cont)
        elif combine == "union":
            r = 1.0 - (1.0 - r_cat) * (1.0 - r_cont)
        else:  # pragma: no cover - the measure checks the choice
            raise ValueError(combine)
    missing = np.isnan(c)
    r = np.where(missing, r_cat, r)
    return r_cat, r_cont, r
