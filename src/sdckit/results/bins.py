"""The fixed histogram bins of the assessment's aggregates (:class:`AssessmentResult`): the
assessment counts into them, ``to_dict()["bins"]`` lists them and the report draws them."""

from __future__ import annotations

import numpy as np

__all__ = ["NEIGHBOUR_EDGES", "PERTURBATION_EDGES", "RISK_EDGES"]

#: histogram bins of the individual and household risk: 8 per decade from 1e-6 to 1
RISK_EDGES = np.logspace(-6, 0, 49)
#: perturbation bins of the confidentiality plot: 0 exactly, then 4 per decade from 1e-4 to 10
PERTURBATION_EDGES = np.logspace(-4, 1, 21)
#: neighbour-count bins of the confidentiality plot (the last is open)
NEIGHBOUR_EDGES = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
