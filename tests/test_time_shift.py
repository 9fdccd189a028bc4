"""Shifting every timestamp of a profile by a constant changes no figure.

A metamorphic check on real excerpts: a loader that rounds epoch-scale times through float64 (the H200
excerpt's times are ~5.2e12 us with ns digits, the NPU and DB excerpts' ~1.7e15 us / 1.7e18 ns), or a
comparator that reads an absolute time where it means a duration or an order, gives different figures
for the shifted copy. Times are shifted in the files' own text (a JSON parse would round them first).
The only cells that hold absolute times by design, MemoryCompare's "Allocated Details" (start, end),
are compared with those pairs blanked.
"""

from __future__ import annotations

import gzip
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql  # tests/ is on sys.path (rootdir import mode)

from msprof_compare.api import compare

DATA = Path(__file__).resolve().parent / "data"
KINETO = DATA / "kineto"
NPU = DATA / "npu" / "rank0_ascend_pt"
DB = DATA / "db"

_KINETO_TS = re.compile(rb'("ts"\s*:\s*"?)(-?\d+(?:\.\d+)?)')
# epoch-scale integers of an Ascend text export (times in us, and flow ids alike): 15-17 digits, not part of a
# word (an HCCL op name such as "hcom_allReduce__586_0_1@17522688603477080586" keeps its number)
_EPOCH = re.compile(rb"(?<![\w.@#-])(\d{15,17})(?![\w])")
_DETAIL_TIMES = re.compile(r"\(-?\d+(?:\.\d+)?, (?:-?\d+(?:\.\d+)?|None)\)")


def _kineto(src: Path, tmp: Path, us: int) -> str:
    dst = tmp / f"shift{us}" / src.name
    # exact decimal sums: a shift that takes times below 0 keeps each time's digits (-1.25 + 3 is 1.75)
    raw, n = _KINETO_TS.subn(lambda m: m.group(1) + str(Decimal(m.group(2).decode()) + us).encode(), src.read_bytes())
    assert n > 100
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(raw)
    return str(dst)


def _shift_epoch(raw: bytes, us: int) -> tuple[bytes, int]:
    return _EPOCH.subn(lambda m: str(int(m.group(1)) + us).encode(), raw)


def _npu_dir(src: Path, tmp: Path, us: int) -> str:
    dst = tmp / f"shift{us}" / src.name
    shutil.copytree(src, dst)
    shifted = 0
    for f in dst.rglob("*"):
        if f.suffix in (".csv", ".json"):
            raw, n = _shift_epoch(f.read_bytes(), us)
            f.write_bytes(raw)
            shifted += n
    assert shifted > 200
    return str(dst)


def _db(src: Path, tmp: Path, ns: int) -> str:
    dst = tmp / f"shift{ns}" / src.parent.name / src.name
    dst.parent.mkdir(parents=True)
    edited_copy(src, dst,
                *(f"UPDATE {t} SET startNs = startNs + {ns}, endNs = endNs + {ns}"
                  for t in ("STEP_TIME", "TASK", "COMMUNICATION_OP")),
                # PYTORCH_API keeps its times as TEXT, as the sample does
                f"UPDATE PYTORCH_API SET startNs = CAST(CAST(startNs AS INTEGER) + {ns} AS TEXT), "
                f"endNs = CAST(CAST(endNs AS INTEGER) + {ns} AS TEXT)",
                *(f"UPDATE OP_MEMORY SET {c} = {c} + {ns} WHERE {c} IS NOT NULL"  # NULL: not released
                  for c in ("allocationTime", "releaseTime", "activeReleaseTime")),
                f"UPDATE MEMORY_RECORD SET timestamp = timestamp + {ns}")
    assert sql(dst, "SELECT typeof(startNs) FROM PYTORCH_API LIMIT 1") == [("text",)]
    return str(dst)


def _frames(base: str, comparison: str) -> tuple[dict[str, pd.DataFrame], str]:
    result = compare(base, comparison)
    frames = {}
    for sheet in result.sheets:
        df = sheet.frame().reset_index(drop=True)
        for col in df.columns:
            if str(col).startswith("Allocated Details"):
                df[col] = df[col].astype(str).str.replace(_DETAIL_TIMES, "()", regex=True)
        frames[sheet.name] = df
    return frames, result.console_table()


def _assert_same(expected: tuple[dict[str, pd.DataFrame], str], got: tuple[dict[str, pd.DataFrame], str]) -> None:
    assert list(got[0]) == list(expected[0])
    for name, df in expected[0].items():
        pd.testing.assert_frame_equal(got[0][name], df, check_exact=True, obj=name)
    assert got[1] == expected[1]


@pytest.mark.parametrize("shifts", [(1_000_000, 7), (1_700_000_000_000_000, 123_456_789_012),
                                    (-6_000_000_000_000, -2_000_000_000_000)])
def test_kineto_pair_figures_do_not_move_with_time(tmp_path, shifts):
    """GPT-2 on an H200 (ns digits on 13-digit us times) against timesformer on an H100; the second shift
    takes the H200 times to epoch scale (~1.7e15 us with ns digits: beyond float64's ns, read from the text),
    the third takes both sides' times below 0 (a rebased trace): a kernel whose launch flow started at a
    negative time lost its operator's category (Flash Attention, Matmul, ...), a memory block allocated and
    released at negative times its duration."""
    base = KINETO / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
    comp = KINETO / "h100_timesformer_excerpt.pt.trace.json"
    expected = _frames(str(base), str(comp))
    sb, sc = shifts
    got = _frames(_kineto(base, tmp_path, sb) if sb else str(base), _kineto(comp, tmp_path, sc) if sc else str(comp))
    _assert_same(expected, got)


@pytest.mark.parametrize("shifts", [(1_000_000, 7), (3_000_000_000, 0)])
def test_gpu_vs_npu_text_figures_do_not_move_with_time(tmp_path, shifts):
    """The recorded AlexNet H200 trace against the NPU excerpt directory (trace_view.json, kernel_details.csv,
    memory_record.csv and communication.json all shifted)."""
    gpu = KINETO / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    plain = tmp_path / "plain"
    plain.mkdir()
    unzipped = plain / gpu.name.removesuffix(".gz")
    unzipped.write_bytes(gzip.decompress(gpu.read_bytes()))
    expected = _frames(str(unzipped), str(NPU))
    sb, sc = shifts
    got = _frames(_kineto(unzipped, tmp_path, sb) if sb else str(unzipped),
                  _npu_dir(NPU, tmp_path, sc) if sc else str(NPU))
    _assert_same(expected, got)


def test_npu_text_against_its_shifted_self_is_the_self_compare(tmp_path):
    expected = _frames(str(NPU), str(NPU))
    _assert_same(expected, _frames(str(NPU), _npu_dir(NPU, tmp_path, 86_400_000_000)))


def test_mindspore_layout_figures_do_not_move_with_time(tmp_path):
    """The MindSpore text layout fixture (``*_ascend_ms``, MindSpore's ``Step ID`` header) against the torch_npu
    excerpt, each shifted."""
    ms = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    expected = _frames(str(ms), str(NPU))
    _assert_same(expected, _frames(_npu_dir(ms, tmp_path, 2_000_000), _npu_dir(NPU, tmp_path, 9)))


def test_bare_trace_view_figures_do_not_move_with_time(tmp_path):
    src = NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    dst = tmp_path / "shifted" / "trace_view.json"
    dst.parent.mkdir()
    raw, n = _shift_epoch(src.read_bytes(), 5_000_000)
    assert n > 500
    dst.write_bytes(raw)
    _assert_same(_frames(str(src), str(src)), _frames(str(src), str(dst)))


@pytest.mark.parametrize("shifts", [(1_000_000_000, 7_000), (0, 86_400_000_000_000)])
def test_db_pair_figures_do_not_move_with_time(tmp_path, shifts):
    """DB exports: ns integers (PYTORCH_API's as TEXT), the NULL release times of unreleased blocks kept."""
    base, comp = DB / "l1" / "ascend_pytorch_profiler_0.db", DB / "l2" / "ascend_pytorch_profiler_0.db"
    expected = _frames(str(base), str(comp))
    sb, sc = shifts
    got = _frames(_db(base, tmp_path, sb) if sb else str(base), _db(comp, tmp_path, sc) if sc else str(comp))
    _assert_same(expected, got)
