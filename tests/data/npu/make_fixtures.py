"""Rebuild the small NPU fixtures of this folder from ../shared/samples (run once; outputs are committed).

Source: msinsight/test/data/pytorch/text/level1/rank0_ascend_pt (Ascend/msinsight @ 4e16fca1f118,
Mulan PSL v2). A 3 ms window of the trace (every metadata event, every non-counter event starting
inside the window) and the kernel_details.csv rows starting inside it, byte-for-byte lines.
"""

from __future__ import annotations

import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[2].parent / "shared" / "samples"
SRC = SAMPLES / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
LO, HI = Decimal("1736408883731000"), Decimal("1736408883734000")


def _in_window(e: dict) -> bool:
    return e.get("ph") != "C" and "ts" in e and LO <= Decimal(str(e["ts"])) <= HI


def _trace(mindspore: bool) -> list[dict]:
    events = json.loads((SRC / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
    python_pids = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Python"}
    out = []
    for e in events:
        if not (e.get("ph") == "M" or _in_window(e)):
            continue
        if mindspore and e.get("pid") in python_pids:
            continue  # MindSpore traces carry no torch cpu_op / python_function / async_npu events
        if mindspore and e.get("cat") in ("async_npu", "fwdbwd"):
            continue
        out.append(e)
    return out


def _csv_rows(name: str, keep) -> str:
    lines = (SRC / "ASCEND_PROFILER_OUTPUT" / name).read_text(encoding="utf-8").splitlines(keepends=True)
    return lines[0] + "".join(ln for i, ln in enumerate(lines[1:]) if keep(i, ln))


def _kernel_in_window(_i: int, line: str) -> bool:
    start = line.split(",")[8].strip()
    return LO <= Decimal(start) <= HI


def main() -> None:
    pt = HERE / "rank0_ascend_pt"
    ms = HERE / "profiler" / "rank-0_20250101000000000_ascend_ms"
    for d in (pt, ms.parent):
        shutil.rmtree(d, ignore_errors=True)
    (pt / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (ms / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    out = pt / "ASCEND_PROFILER_OUTPUT"
    (out / "trace_view.json").write_text(json.dumps(_trace(False)))
    kd = _csv_rows("kernel_details.csv", _kernel_in_window)
    (out / "kernel_details.csv").write_text(kd, encoding="utf-8")
    (out / "memory_record.csv").write_text(_csv_rows("memory_record.csv", lambda i, _ln: i < 30))
    shutil.copy(SRC / "ASCEND_PROFILER_OUTPUT/communication.json", out / "communication.json")
    shutil.copy(SRC / "profiler_info_0.json", pt / "profiler_info_0.json")
    shutil.copy(SRC / "profiler_metadata.json", pt / "profiler_metadata.json")
    # MindSpore layout (user guide: profiler/{rank-*}_{timestamps}_ascend_ms/ASCEND_PROFILER_OUTPUT
    # holding kernel_details.csv and trace_view.json); MindSpore spells the step column "Step ID".
    mout = ms / "ASCEND_PROFILER_OUTPUT"
    (mout / "trace_view.json").write_text(json.dumps(_trace(True)))
    (mout / "kernel_details.csv").write_text(kd.replace("Step Id,", "Step ID,", 1), encoding="utf-8")
    shutil.copy(SRC / "profiler_info_0.json", ms / "profiler_info_0.json")
    shutil.copy(SAMPLES / "msinsight/server/src/test/test_data/metadata/profiler_metadata.json",
                HERE / "profiler_metadata_pg.json")
    for p in sorted(HERE.rglob("*")):
        if p.is_file():
            print(os.path.relpath(p, HERE), p.stat().st_size)


if __name__ == "__main__":
    main()
