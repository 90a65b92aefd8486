"""A synthetic file as a variant of the assessment: its records are not the original's, so the
loss of every change (which pairs records) does not apply. It is measured as a released file
(the risk rules on its own keys), with the risk of a synthetic file
(:func:`sdckit.synthetic_risk`: closeness to the original records and the attacks, beyond a
control file when one is given), its utility (:func:`sdckit.synthetic_utility`: pMSE and the
distances of the key tables) and the published estimates (:func:`sdckit.estimates_change`'s
comparison without the pairing). On the risk-utility map every variant is then placed by how far
its estimates move, the one utility measure masked and synthetic files share."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._errors import SdcError
from .._progress import step
from .._roles import names
from ..scenario import Scenario
from .tradeoff import estimates_of

__all__ = ["synthetic_parts", "synthetic_scenario"]

#: the roles a synthetic file may lack (its own weights, households, strata): those the roles
#: table marks ``may_lack``
_OPTIONAL_ROLES = names(may_lack=True)


def synthetic_scenario(sc: Scenario, columns, notes: list, prefix: str) -> Scenario:
    """The scenario for a synthetic file: a role whose column the file lacks is left out (its
    risk is then unweighted, without households), with a note naming it."""
    lacking: dict[str, Any] = {}
    for role in _OPTIONAL_ROLES:
        value = getattr(sc, role)
        names = value if isinstance(value, tuple) else ((value,) if value else ())
        if names and any(c not in columns for c in names):
            lacking[role] = () if isinstance(value, tuple) else None
    if lacking:
        notes.append(
            f"{prefix}the synthetic file has no {', '.join(lacking)} column: its risk is measured without "
            f"{'them' if len(lacking) > 1 else 'it'}"
        )
        sc = replace(sc, **lacking)
    return sc


def synthetic_parts(original, table, control, sc: Scenario, notes: list, prefix: str) -> dict:
    """The estimates and the synthetic-data block of one synthetic variant (aggregates only)."""
    return {
        "estimates": estimates_of(original, table, sc, paired=False),
        "synthetic": _synthetic(original, table, control, sc, notes, prefix),
    }


def _synthetic(original, table, control, sc: Scenario, notes: list, prefix: str) -> dict:
    from ..risk import synthetic_risk
    from ..utility import synthetic_utility

    keys = list(sc.keys) or None
    variables = list(sc.numeric_keys) or None
    step("synthetic data: closeness and attacks")
    try:
        risk = synthetic_risk(original, table, control, keys=keys, variables=variables, seed=0)
        utility = synthetic_utility(original, table, keys=keys, variables=variables, estimates=False)
    except SdcError as exc:
        notes.append(f"{prefix}the synthetic-data measures were skipped ({exc})")
        return {"skipped": str(exc)}
    notes.extend(prefix + n for n in risk.notes if prefix + n not in notes)
    attacks = {
        name: {k: a.get(k) for k in ("risk", "ci", "detected")}
        for name, a in risk.attacks.items()
        if isinstance(a, dict) and "risk" in a
    }
    return {
        "risk": risk.risk,
        "leak": risk.leak,
        "leak_cause": risk.leak_decision.get("cause"),
        "control": control is not None,
        "exact_copy_share": risk.closeness.get("exact_copy_share"),
        "excess_copies": risk.closeness.get("excess_copies"),
        "attacks": attacks,
        "distribution": {k: risk.distribution.get(k) for k in ("kl", "tv", "hellinger")},
        "pmse": utility.pmse,
        "s_pmse": utility.s_pmse,
        "table_loss": utility.loss,
    }
