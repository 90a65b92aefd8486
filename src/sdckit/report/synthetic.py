"""Moved to :mod:`sdckit.assessment.synthetic` (this old path warns, for one release)."""

from ._moved import moved

__getattr__ = moved(__name__, "sdckit.assessment.synthetic")
