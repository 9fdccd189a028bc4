"""msprof-compare: compare two deep-learning performance profiles."""

from .api import CompareResult, compare
from .errors import ProfileError, UsageError

__all__ = ["compare", "CompareResult", "ProfileError", "UsageError"]
__version__ = "0.1.0"
