"""Reporters: render a comparison's sheets and summary (xlsx workbook, JSON document, console tables); the
files are published through ``output`` alone, so no report is ever left half-written or replaces a file."""

from .console import render_summary
from .excel import write_workbook

__all__ = ["render_summary", "write_workbook"]
