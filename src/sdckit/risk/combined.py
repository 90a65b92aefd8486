"""Combined disclosure risk of categorical and continuous keys per record, and the global risk
as its mean."""

from __future__ import annotations

import numpy as np

from .._core.combined import COMBINE_RULES, combine_risks
from .._declare import Param, declare
from .._errors import SdcError
from .._prepare import Roles
from .._progress import step
from .._validation import as_name_list
from ..engines import in_memory_engine, local_records
from ..results.combined import CombinedRiskResult
from ..scenario import accepts_scenario
from .continuous import _core, numeric_data

__all__ = ["CombinedRiskResult", "combined_risk"]


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", "Continuous key variables", role="numeric_keys"),
    Param("p", "number"),
    Param("c_min", "int", "The smallest number of candidates a record must have to be safe"),
    Param("combine", "choice", choices=COMBINE_RULES),
    Param("missing"),
    excluded="needs both kinds of keys and a linkage model the user chooses",
)
def combined_risk(
    data,
    keys,
    variables,
    *,
    p: float = 0.2,
    c_min: int = 3,
    combine: str = "joint",
    missing=None,
    engine=None,
) -> CombinedRiskResult:
    r"""Per-record disclosure risk from categorical and continuous keys together.

    Separately safe keys can be unsafe together: twelve records may share a combination of
    categories and ten may lie within 20 % of a value, yet only one record both. For record i
    with f_i records sharing its categorical key values, c_i records inside its relative
    intervals on every continuous key at once, and c_{K,i} records doing both,

    .. math::

        r^{cat}_i = 1/f_i, \qquad r^{con}_i = 1/c_i, \qquad
        r_i = \begin{cases}
            1 / c_{K,i} & \text{joint (default)} \\
            \max(r^{cat}_i, r^{con}_i) & \text{max} \\
            1 - (1 - r^{cat}_i)(1 - r^{con}_i) & \text{union}
        \end{cases}

    where record h is inside record i's interval on variable j when
    :math:`x_{hj} \in (x_{ij} - p|x_{ij}|,\ x_{ij} + p|x_{ij}|)` or :math:`x_{hj} = x_{ij}`
    (the relative-interval rule of :func:`relative_interval_risk`; record i counts itself, so
    every risk lies in (0, 1]). The **global risk** is the mean of r_i over the records, and a
    record is unsafe when r_i > 1/c_min (fewer than c_min candidates under ``"joint"``).

    The combination is a choice: ``"joint"`` is the intruder who knows both kinds of key and
    looks for records matching on all of them (c_{K,i} <= min(f_i, c_i), so it is never below
    either risk alone); ``"max"`` the intruder who uses the better of the two kinds alone;
    ``"union"`` counts either kind succeeding, the two taken as independent.

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict)
    keys : str or list of str
        Categorical key variables (a missing value, null or one of ``missing``, is one more
        category: records are grouped by exact equality).
    variables : str or list of str
        Continuous key variables.
    p : float in (0, 1), default 0.2
        Relative half-width of the intervals.
    c_min : int >= 1, default 3
        A record with fewer than c_min candidates (risk above 1/c_min) is unsafe.
    combine : {"joint", "max", "union"}, default "joint"
        How the categorical and continuous risks combine (above).
    missing : value or list of values, optional
        Extra values to treat as missing in the ``keys`` columns, besides null and NaN.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    CombinedRiskResult
        ``risk``, ``categorical_risk``, ``continuous_risk`` per record; ``global_risk`` (their
        mean), ``n_unsafe``, ``n_unsafe_only_combined``.

    Notes
    -----
    A record with a missing continuous value has no continuous risk; its combined risk is its
    categorical one (an intruder matches it on the key values only), and it is not counted in
    other records' intervals. Counts are unweighted (the sample itself).

    References
    ----------
    Mlodak, A., Pietrzak, M. and Jozefowski, T. (2022), The trade-off between the risk of
    disclosure and data utility in SDC: a case of data from a survey of accidents at work,
    *Statistical Journal of the IAOS* 38; the handbook chapter on the measurement of disclosure
    risk (complex measurement of the risk of categorical and continuous variables).
    """
    eng = in_memory_engine(engine, "combined_risk", data)
    pp, cm = float(p), int(c_min)  # p, c_min and combine: checked by the declaration
    key_names = tuple(as_name_list(keys, "keys"))
    names = as_name_list(variables, "variables")
    both = sorted(set(names) & set(key_names))
    if both:
        raise SdcError(
            f"keys: {', '.join(both)} also given as variables; a column is either a categorical key "
            "or a continuous variable"
        )
    d = numeric_data(data, names, keys=key_names, missing=Roles.of(missing=missing).missing, engine=eng)
    step("counting the records inside the intervals")
    groups = np.asarray(d.groups)
    frequency = np.bincount(groups)[groups].astype(float)
    core = _core()
    c = core.joint_relative_interval_counts(d.X, pp)
    ck = core.joint_relative_interval_counts(d.X, pp, groups)
    r_cat, r_cont, r = combine_risks(frequency, c, ck, combine)
    return CombinedRiskResult(
        keys=key_names,
        variables=tuple(d.names),
        p=pp,
        c_min=cm,
        combine=combine,
        frequency=frequency,
        interval_count=c,
        joint_count=ck,
        categorical_risk=r_cat,
        continuous_risk=r_cont,
        risk=r,
        n=d.X.shape[0],
        backend=d.backend,
        records=local_records(),
        row_index=d.row_index,
    )
