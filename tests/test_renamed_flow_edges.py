"""A flow end outside async_npu whose float time alone is inexact (``ascend_text._renamed_flows``, ``_select``;
mutation audit mut65b): the torch excerpt (tests/data/npu) with every time written as a whole-microsecond JSON
integer (exact) and its 16 paired async_npu flows copied under another category with their times written as
floats (synthetic)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
from test_ascend_text_rules import OPTS, PT, _with_trace

from msprof_compare.loaders import load_profile, traceio


def test_copied_flows_whose_float_times_alone_are_inexact_are_read_exactly(tmp_path: Path) -> None:
    """The read events' integer times are exact, so only the copies' float ends (~1.7e15 us: float64 steps of
    256 ns at their ns) need the exact re-read: every one of the 16 ends' float product misses its whole ns
    (checked below with numpy as the conversion rounds), and without the re-read all 16 copies were said as flows
    of a renamed category. Read exactly, each is at an async_npu end: nothing said."""
    events = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    flows = [e for e in events if e.get("cat") == "async_npu"]
    paired = [i for i in dict.fromkeys(e["id"] for e in flows if e["ph"] == "f")
              if any(e["id"] == i and e["ph"] == "s" for e in flows)]
    assert len(paired) == 16
    whole = [dict(e, ts=int(Decimal(e["ts"]))) if isinstance(e.get("ts"), str) else dict(e) for e in events]
    copies = [dict(e, cat="mirror", ts=float(e["ts"])) for e in whole
              if e.get("cat") == "async_npu" and e["id"] in paired]
    ends = [e["ts"] for e in copies if e["ph"] == "f"]
    assert len(ends) == 16 and all(int(np.rint(t * 1000.0)) != int(t) * 1000 for t in ends)
    # a process_name record of ts 0.0 first: the decode's raw-time guess takes floats (``_numeric_times``)
    first = next(i for i, e in enumerate(whole) if e.get("ph") == "M" and e.get("name") == "process_name")
    out, trace = _with_trace(tmp_path, [dict(whole[first], ts=0.0), *whole[:first], *whole[first + 1:], *copies])
    decoded, _ = traceio.decode_events(str(trace), trace.read_bytes(), raw_ts=True)
    assert type(decoded[0]) is traceio.Event
    assert not [w for w in load_profile(str(out), OPTS).warnings if "renamed category" in w]
