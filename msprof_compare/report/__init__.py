"""Reporters: render a comparison's sheets and summary (xlsx workbook, console table)."""

from .console import render_summary
from .excel import write_workbook

__all__ = ["render_summary", "write_workbook"]
