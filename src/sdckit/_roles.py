"""The one table of a scenario's roles: each role's name, kind, the app's label, its meaning,
and which parts of sdckit read it.

:class:`sdckit.Scenario` has one field per role (in this order), the preparation
(``_prepare.Roles``) the roles it marks ``prepared``, the declarations (``_declare.STANDARD``)
the roles it marks ``standard``, the recipe schema every role (its ``kind`` and ``meaning``),
the app's role form the roles with a ``label``, the report's "Data and scenario" table the
``reported`` ones (by their ``report_label``), and a synthetic variant leaves out the ``may_lack`` ones its file lacks.
``tests/test_roles_table.py`` checks that every reader agrees with this table.

This module sits at the bottom: it imports only the errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import SdcError

__all__ = ["KINDS", "ROLES", "Role", "names", "role"]

#: the kinds of a role's value, as declared parameter types (``_declare.TYPES``): one column,
#: several columns, values of any type, a mapping, a text
KINDS = ("column", "columns", "any", "mapping", "text")


@dataclass(frozen=True)
class Role:
    """One scenario role.

    Attributes
    ----------
    name : str
        The role's name: the :class:`~sdckit.Scenario` field, the recipe's and the scenario
        file's entry.
    kind : str
        One of :data:`KINDS`: the role's value type (``"column"``, ``"columns"``, ``"any"``
        for values such as missing-value codes, ``"mapping"``, ``"text"``).
    label : str or None
        The label of the role's field on the app's role form; ``None``: not on the form.
    meaning : str
        One line saying what the role is (the recipe schema's description).
    prepared : bool
        Whether the preparation (``_prepare.Roles``) checks it against the data.
    standard : bool
        Whether a declared parameter of this name takes its type (``kind``) and its role from
        here (``_declare.STANDARD``: ``Param("keys")``).
    reported : bool
        Whether the report's "Data and scenario" table shows it.
    may_lack : bool
        Whether a synthetic file may lack its column (the role is then left out of the
        synthetic variant's scenario, with a note).
    report_label : str
        The role's label in the report's "Data and scenario" table.
    """

    name: str
    kind: str
    label: str | None
    meaning: str
    prepared: bool = False
    standard: bool = False
    reported: bool = False
    may_lack: bool = False
    report_label: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise SdcError(f"kind: got {self.kind!r} for the role {self.name!r}; expected one of {', '.join(KINDS)}")


#: every scenario role, in the order of the Scenario's fields (and the app's form)
ROLES: tuple[Role, ...] = (
    Role(
        "keys",
        "columns",
        "Key variables (categorical)",
        "categorical key variables",
        prepared=True,
        standard=True,
        reported=True,
        report_label="categorical key variables",
    ),
    Role(
        "numeric_keys",
        "columns",
        "Numeric key variables",
        "continuous key variables",
        prepared=True,
        reported=True,
        report_label="continuous key variables",
    ),
    Role(
        "weight",
        "column",
        "Sampling weight",
        "the sampling-weight column",
        prepared=True,
        standard=True,
        reported=True,
        may_lack=True,
        report_label="design weight",
    ),
    Role(
        "household",
        "column",
        "Household identifier",
        "the household identifier column",
        prepared=True,
        standard=True,
        reported=True,
        may_lack=True,
        report_label="household identifier",
    ),
    Role(
        "strata",
        "columns",
        "Strata",
        "stratification columns",
        prepared=True,
        standard=True,
        reported=True,
        may_lack=True,
        report_label="strata",
    ),
    Role(
        "sensitive",
        "columns",
        "Sensitive variables",
        "sensitive variables",
        prepared=True,
        standard=True,
        reported=True,
        report_label="sensitive variables",
    ),
    Role(
        "missing",
        "any",
        None,
        "extra missing-value codes",
        prepared=True,
        standard=True,
        reported=True,
        report_label="extra missing-value codes",
    ),
    Role(
        "domains",
        "columns",
        None,
        "domains of the estimates compared in the assessment",
        reported=True,
        report_label="domains of the compared estimates",
    ),
    Role(
        "scales",
        "mapping",
        None,
        "measurement scale per variable for the information loss: nominal or numeric",
        reported=True,
        report_label="measurement scales declared",
    ),
    Role("name", "text", None, "the scenario's name (an intruder scenario among several)", report_label="scenario"),
    Role(
        "release_type", "text", None, "the kind of release: public-use or scientific-use", report_label="release type"
    ),
    Role(
        "direct_identifiers",
        "columns",
        "Direct identifiers (removed from the released file)",
        "direct identifiers, removed from every released file",
        report_label="direct identifiers (removed)",
    ),
    Role(
        "linked",
        "mapping",
        None,
        "linked (ghost) variables: variable -> the key (or list of keys) whose suppressions and recodes it follows",
        report_label="linked variables (follow their key)",
    ),
)


def names(**having: bool) -> tuple[str, ...]:
    """The names of the roles, in table order, whose columns have the given values:
    ``names(prepared=True)``, ``names(reported=True)``."""
    return tuple(r.name for r in ROLES if all(getattr(r, k) == v for k, v in having.items()))


def role(name: str) -> Role:
    """The row of the role ``name`` (a ``KeyError`` for a name that is not a role)."""
    for r in ROLES:
        if r.name == name:
            return r
    raise KeyError(name)
