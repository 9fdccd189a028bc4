"""Rebuild ``two_steps_ascend_pt`` from the 3 ms window of ``rank0_ascend_pt`` (run once; outputs are committed).

No sample holds a text export of more than one step, nor kernels without a Step Id. This one cuts the window's
ProfilerStep#50 (the real marker of msinsight/test/data/pytorch/text/level1/rank0_ascend_pt, Ascend/msinsight @
4e16fca1f118, Mulan PSL v2, its name, ts and dur changed) into two steps between top-level backward ops:

* ProfilerStep#50 from 1736408883731000.000 to 1736408883732320.000 (after NpuDropoutBackward0 ends);
* ProfilerStep#51 from 1736408883732328.490 (ReluBackward0 starts) to 1736408883733510.000 (before
  ConvolutionBackward0 starts: the ops after it are outside every step, as after a profile's last step).

kernel_details.csv keeps every line byte for byte but its Step Id cell: the step whose span holds the kernel's
start (torch_npu places kernels by device ranges; the window's kernels run within a few hundred us of their ops),
empty for the two kernels after ProfilerStep#51 (torch_npu's "no step"), and emptied for three kernels inside a
step (``BLANKED``: two in #50, one in #51), the damage the kernel comparison counts.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "rank0_ascend_pt"
DST = HERE / "two_steps_ascend_pt"
SAMPLE_TRACE = (HERE.parents[2].parent / "shared" / "samples" /
                "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
STEPS = ((50, Decimal("1736408883731000.000"), Decimal("1736408883732320.000")),
         (51, Decimal("1736408883732328.490"), Decimal("1736408883733510.000")))
#: Kernel starts whose Step Id is emptied though a step's span holds them.
BLANKED = ("1736408883731226.644", "1736408883731435.008", "1736408883732773.995")


def _step_of(start: Decimal) -> str:
    return next((str(n) for n, lo, hi in STEPS if lo <= start <= hi), "")


def main() -> None:
    shutil.rmtree(DST, ignore_errors=True)
    out = DST / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    events = json.loads((SRC / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
    marker = next(e for e in json.loads(SAMPLE_TRACE.read_text()) if e.get("name") == "ProfilerStep#50")
    for n, lo, hi in STEPS:
        events.append({**marker, "name": f"ProfilerStep#{n}", "ts": f"{lo:.3f}", "dur": float(hi - lo)})
    (out / "trace_view.json").write_text(json.dumps(events))
    lines = (SRC / "ASCEND_PROFILER_OUTPUT/kernel_details.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [lines[0]]
    for line in lines[1:]:
        start = line.split(",")[8].strip()
        step = "" if start in BLANKED else _step_of(Decimal(start))
        rows.append(step + line[line.index(","):])
    (out / "kernel_details.csv").write_text("".join(rows), encoding="utf-8")
    shutil.copy(SRC / "profiler_info_0.json", DST / "profiler_info_0.json")


if __name__ == "__main__":
    main()
