"""Transitional functions over the default engine (to be removed: use ``get_engine()``)."""

from .engines import get_engine


def factorize(key):
    return get_engine().factorize(key)


def record_patterns(codes, weights=None, cards=None):
    return get_engine().patterns(codes, weights, cards)


def gather(ids, *arrays):
    return get_engine().gather(ids, *arrays)
