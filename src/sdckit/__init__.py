"""sdckit: statistical disclosure control for microdata.

Measures how easily a person in a microdata file can be re-identified, how much a
protection step damages the data, and applies the protection methods that trade the two.

Importing sdckit imports NumPy, SciPy-free kernels, narwhals and Polars only; pandas,
PyArrow, matplotlib and the file readers are imported when used.
"""

from ._errors import MissingColumnError, SdcError, SdcWarning
from ._memory import tune_memory
from .io import read_data
from .risk import FrequencyResult, KAnonymityResult, frequencies, k_anonymity
from .risk import LDiversityResult, TClosenessResult, l_diversity, t_closeness
from .scenario import Scenario

__version__ = "0.1.0"

__all__ = [
    "LDiversityResult",
    "TClosenessResult",
    "l_diversity",
    "t_closeness",
    "FrequencyResult",
    "KAnonymityResult",
    "MissingColumnError",
    "Scenario",
    "SdcError",
    "SdcWarning",
    "frequencies",
    "k_anonymity",
    "read_data",
    "tune_memory",
    "__version__",
]
