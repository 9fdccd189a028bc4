"""Copies of a real text export whose trace_view.json gains one event derived from its ``ProfilerStep#50``: a
wrapper around the profiled loop, or a step overlapping the next (the step-marker tests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def with_step_event(src: Path, dest: Path, name: str, shift_us: float, dur_delta_us: float, **fields: Any) -> Path:
    """A copy of the text export ``src`` at ``dest`` with one cpu_op more: ``ProfilerStep#50``'s event named
    ``name``, starting ``shift_us`` later and lasting ``dur_delta_us`` longer (``fields`` replace others). Only
    trace_view.json changes; no event of the sample is touched."""
    shutil.copytree(src, dest)
    view = dest / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    doc = json.loads(view.read_text(encoding="utf-8"))
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    (step,) = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "ProfilerStep#50"]
    events.append({**step, "name": name, "ts": f"{float(step['ts']) + shift_us:.3f}",
                   "dur": float(step["dur"]) + dur_delta_us, **fields})
    view.write_text(json.dumps(doc), encoding="utf-8")
    return dest
