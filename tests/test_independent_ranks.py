"""Rank-by-rank compares of DB exports, Kineto traces and MindSpore-layout exports against figures computed here
from the raw inputs, where the text exports' rank jobs are pinned against step_trace_time.csv (test_ranks.py,
test_ranks_report.py, test_rank_cycles.py): before, a DB rank job's E2E and Free (which its StepTraceTime does not
give: a DB export's E2E window holds its non-kernel tasks), every figure of a Kineto rank job and of a MindSpore one
were checked only against the same pair compared alone, or as zero changes of a folder against itself.

- DB exports (text/level0 -> text/level1's DB twins, two ranks each): each rank's E2E, Computing, Uncovered
  Communication and Free by the plain-SQL oracle of test_overall_db.py (reference-1 §7.3 on copies of the files);
  the rank lines, the console table, the largest step, the job line, the gate's verdicts and both overview files.
- Kineto traces (hta's trace_filter, two ranks of a 128-rank NCCL job, against a copy whose ranks hold each other's
  trace): E2E as reference-1 §6 defines it (the span of the kernel and gpu_memcpy events on a stream), Computing the
  exact union of the non-NCCL kernels, Uncovered Communication the NCCL kernels' time outside it, Free the rest
  (docs/differences.md: exact unions); the same outputs, and the likely straggler, whose figures are those changes.
- MindSpore-layout folders of ranks (``rank-{r}_{timestamp}_ascend_ms``) made from the real text level0 / level1
  exports as tests/data/npu/make_fixtures.py makes its MindSpore fixture: the profiler's step_trace_time.csv.

Nothing expected comes from the package."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import openpyxl
import pytest
from spans import union
from test_overall_db import _sql_oracle

from tests.cliutil import error_lines, run_inproc
from tests.test_json_report import validate
from tests.test_ranks import table_rows
from tests.test_ranks_report import SCHEMA

DB = "msinsight/test/data/pytorch/db"
KINETO = "hta/tests/data/trace_filter"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
METRICS = ("e2e", "computing", "uncovered_communication", "free")
#: _sql_oracle's OverallMetrics rows by the overview's metrics
DB_ROWS = {"e2e": "E2E Time", "computing": "Computing Time", "uncovered_communication": "Uncovered Communication Time",
           "free": "Free Time"}


def _ms(ns: int, sign: str = "") -> str:
    """ns as the console's ms: 3 decimals, a half away from zero."""
    return f"{(Decimal(ns) / 10**6).quantize(Decimal('0.001'), ROUND_HALF_UP):{sign}}"


def _pct(base: int, comp: int) -> str:
    return f"{(Decimal(comp - base) / base * 100).quantize(Decimal('0.01'), ROUND_HALF_UP):+}%"


def _db_figures(samples: Path, tmp_path: Path, level: str, rank: int) -> dict[str, int]:
    """One DB rank's figures in ns by plain SQL, on a copy (the oracle opens the file it is given)."""
    src = samples / DB / level / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / \
        f"ascend_pytorch_profiler_{rank}.db"
    copy = tmp_path / f"{level}_{rank}.db"
    shutil.copyfile(src, copy)
    rows, _ = _sql_oracle(copy)
    return {m: int(Decimal(repr(rows[DB_ROWS[m]][0])) * 10**6) for m in METRICS}


def _events(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def _ns(us: object) -> int:
    return int((Decimal(str(us)) * 1000).to_integral_value())


def _kineto_figures(doc: dict) -> dict[str, int]:
    """A Kineto trace's E2E, Computing, Uncovered Communication and Free in ns, from its events."""
    device = [e for e in doc["traceEvents"] if e.get("ph") == "X"
              and str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy") and e.get("args", {}).get("stream")]
    e2e = max(_ns(e["ts"]) + _ns(e["dur"]) for e in device) - min(_ns(e["ts"]) for e in device)
    kernels = [(e["name"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in device
               if str(e["cat"]).lower() == "kernel"]
    comm = [(s, t) for n, s, t in kernels if n.startswith("ncclKernel")]
    assert all("nccl" not in n.lower() for n, *_ in kernels if not n.startswith("ncclKernel"))
    computing = sum(t - s for s, t in union([(s, t) for n, s, t in kernels if not n.startswith("ncclKernel")]))
    busy = sum(t - s for s, t in union([(s, t) for _, s, t in kernels]))
    return {"e2e": e2e, "computing": computing, "uncovered_communication": busy - computing,
            "free": e2e - busy, "communication": sum(t - s for s, t in comm)}


def _check_job(out: str, doc: dict, book: openpyxl.Workbook, want: dict[int, tuple[dict, dict]],
               pct: int | Fraction) -> None:
    """The rank lines, the console table, the job line and the overview files against ``want``: rank -> (base
    figures, comparison figures) in ns; each JSON metric record whole (ns, ms, the change in percent), the sheet's
    times, E2E Diff Ratio (4 places: no rank here lies within 0.005 % of the threshold ``pct``) and verdict against
    ``pct`` percent, its largest step (the console's keyed cell and the sheet's) as the JSON record's."""
    rows = table_rows(out)
    assert sorted(rows) == sorted(want)
    keys = dict(re.findall(r"^Largest Step (\w+): (.+)$", out, re.M))
    sheet = [list(r) for r in book["Ranks"].iter_rows(min_row=4, values_only=True)]
    for (rank, (b, c)), record, cells in zip(sorted(want.items()), doc["ranks"], sheet, strict=True):
        row = rows[rank]
        assert row[1:5] == [_ms(b["e2e"]), _ms(c["e2e"]), _ms(c["e2e"] - b["e2e"], "+"), _pct(b["e2e"], c["e2e"])]
        assert row[5:8] == [_ms(c[m] - b[m], "+") for m in METRICS[1:]]
        assert f"rank {rank}: E2E {row[1]} ms -> {row[2]} ms ({row[3]} ms, {row[4]}), " in out
        assert record["rank"] == cells[0] == rank
        for k, m in enumerate(METRICS):
            ms = {"base_ms": b[m] / 1e6, "comparison_ms": c[m] / 1e6, "diff_ms": (c[m] - b[m]) / 1e6}
            assert {key: v for key, v in record[m].items() if key not in ("diff_pct", "diff_ratio")} == \
                {"base_ns": b[m], "comparison_ns": c[m], "diff_ns": c[m] - b[m], **ms}, (rank, m)
            assert record[m]["diff_pct"] == pytest.approx((c[m] - b[m]) / b[m] * 100, rel=1e-12), (rank, m)
            assert (cells[1 + k], cells[5 + k], cells[9 + k + (k > 0)]) == tuple(ms.values()), (rank, m)
        regressed = (c["e2e"] - b["e2e"]) * 100 > pct * b["e2e"]
        ratio = Fraction(c["e2e"], b["e2e"])
        assert abs(ratio - 1 - Fraction(pct, 100)) > Fraction(5, 10**5)
        assert record["e2e"]["diff_ratio"] == cells[10] == round(ratio.numerator / ratio.denominator, 4)
        assert (record["regressed"], cells[14]) == (regressed, "yes" if regressed else "no")
        step = record["largest_step"]
        assert cells[15:17] == ([step["step"], step["diff_ms"]] if step else [None, None])
        key, _, figure = row[8].partition(" ")  # the console's cell: a key the line under the table names
        assert (keys.get(key), figure) == ((step["step"], _ms(step["diff_ns"], "+")) if step else (None, ""))
    slow = [max(want, key=lambda r: want[r][side]["e2e"]) for side in (0, 1)]
    b_ns, c_ns = want[slow[0]][0]["e2e"], want[slow[1]][1]["e2e"]
    assert f"\nJob (slowest rank per side): base rank {slow[0]} {_ms(b_ns)} ms -> comparison rank {slow[1]} " \
           f"{_ms(c_ns)} ms ({_ms(c_ns - b_ns, '+')} ms, {_pct(b_ns, c_ns)})\n" in out
    job = doc["job"]
    assert (job["base_rank"], job["comparison_rank"], job["base_ns"], job["comparison_ns"], job["diff_ns"]) == \
        (*slow, b_ns, c_ns, c_ns - b_ns)


def _run(capsys: pytest.CaptureFixture, base: Path, comp: Path, out: Path, pct: str) -> tuple[int, str, str, dict,
                                                                                               openpyxl.Workbook]:
    code, stdout, stderr = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out),
                                      "--enable_profiling_compare", "--output_format", "xlsx,json",
                                      "--fail_on_regression", pct)
    doc = json.loads(next(out.glob("performance_comparison_result_ranks_*.json")).read_text(encoding="utf-8"))
    assert validate(doc, SCHEMA) == []
    book = openpyxl.load_workbook(next(out.glob("performance_comparison_result_ranks_*.xlsx")), read_only=True)
    return code, stdout, stderr, doc, book


def test_db_rank_job_against_sql(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """DB level0 -> level1, ranks 0 and 1, the gate at 5 %: by SQL, rank 0 124.842634 -> 137.919295 ms (+10.47 %,
    beyond), rank 1 129.759412 -> 134.027198 ms (+3.29 %, within); the job's slowest ranks 1 and 0 (+6.29 %). The
    largest step of each rank: its one HCCL group's uncovered time (Computing moved under 0.1 ms, Free under 1)."""
    if not (samples / DB).is_dir():
        pytest.skip("DB samples absent")
    want = {r: (_db_figures(samples, tmp_path, "level0", r), _db_figures(samples, tmp_path, "level1", r))
            for r in (0, 1)}
    code, out, err, doc, book = _run(capsys, samples / DB / "level0", samples / DB / "level1", tmp_path / "out", "5")
    _check_job(out, doc, book, want, 5)
    rows = table_rows(out)
    for rank, (b, c) in want.items():
        unc = c["uncovered_communication"] - b["uncovered_communication"]
        assert abs(unc) > max(abs(c[m] - b[m]) for m in ("computing", "free"))
        assert rows[rank][8] == f"A {_ms(unc, '+')}"
        assert doc["ranks"][rank]["largest_step"] == {"step": "Group 90.91.105.46%enp189s0f0_60000_0 Communication "
                                                              "(uncovered)", "diff_ns": unc, "diff_ms": unc / 1e6}
    # the gate, rank by rank and for the job, by the SQL E2E times: exact integers against 5 %
    regressed = [r for r, (b, c) in want.items() if (c["e2e"] - b["e2e"]) * 100 > 5 * b["e2e"]]
    assert regressed == [0] and [r["regressed"] for r in doc["ranks"]] == [True, False]
    assert code == 3, err
    job = (want[0][1]["e2e"] - want[1][0]["e2e"]) / want[1][0]["e2e"] * 100  # +6.29 %: beyond it too, no aside
    assert job > 5 and error_lines(err)[-1] == "error: --fail_on_regression 5: rank 0 regressed beyond the threshold"
    assert (want[0][0]["e2e"], want[0][1]["e2e"]) == (124_842_634, 137_919_295)


@pytest.fixture(scope="module")
def kineto_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[int, tuple[dict, dict]]]:
    """trace_filter (ranks 0 and 1) and a folder whose rank r holds trace_filter's rank 1 - r trace (its
    distributedInfo rank set to r), with the figures of each rank's two traces; made once for the tests here."""
    base = SAMPLES / KINETO
    if not base.is_dir():
        pytest.skip("hta samples absent")
    comp = tmp_path_factory.mktemp("swapped")
    docs = {r: _events(base / f"sampled_rank-{r}.json.gz") for r in (0, 1)}
    assert [d["distributedInfo"]["rank"] for d in docs.values()] == [0, 1]
    figures = {r: _kineto_figures(d) for r, d in docs.items()}
    assert all(f["communication"] > 0 for f in figures.values())
    for r in (0, 1):
        other = docs[1 - r]
        other["distributedInfo"]["rank"] = r
        with gzip.open(comp / f"sampled_rank-{r}.json.gz", "wt", encoding="utf-8") as fh:
            json.dump(other, fh)
    return base, comp, {r: (figures[r], figures[1 - r]) for r in (0, 1)}


def test_kineto_rank_job_against_the_raw_traces(kineto_job, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each rank of the swapped job against its own trace: rank 0 1222.847 -> 1231.182 ms, Computing +61.653 ms
    and Uncovered Communication -33.460 ms; rank 1 the reverse. Rank 0 computes longer and rank 1 waits longer by
    over half as much (33.460 of 61.653 ms): rank 0 is the likely straggler, with those two figures. The gate at
    0.5 %: rank 0 (+0.68 %) beyond it, the job (1231.182 ms on both sides' slowest ranks) within."""
    base, comp, want = kineto_job
    code, out, err, doc, book = _run(capsys, base, comp, tmp_path / "out", "0.5")
    _check_job(out, doc, book, want, Fraction(1, 2))
    grew = want[0][1]["computing"] - want[0][0]["computing"]
    waited = want[1][1]["uncovered_communication"] - want[1][0]["uncovered_communication"]
    assert grew > 0 and grew / 2 <= waited <= grew * 3 / 2
    assert want[0][1]["uncovered_communication"] < want[0][0]["uncovered_communication"]  # rank 0 itself waits less
    assert (f"Likely straggler: rank 0, Computing {_ms(grew, '+')} ms; rank 1's Uncovered Communication "
            f"{_ms(waited, '+')} ms (waiting on it)") in out.splitlines()
    assert doc["straggler"] == {"rank": 0, "computing_diff_ns": grew, "computing_diff_ms": grew / 1e6,
                                "other_ranks": [1], "others_uncovered_communication_diff_ms": waited / 1e6}
    assert (grew, waited) == (61_653_000, 33_460_000)
    regressed = [r for r, (b, c) in want.items() if (c["e2e"] - b["e2e"]) * 1000 > 5 * b["e2e"]]
    assert regressed == [0] and [r["regressed"] for r in doc["ranks"]] == [True, False]
    assert code == 3, err
    # both sides' slowest rank is the same trace (the ranks swapped): no change, in ms either
    assert max(b["e2e"] for b, _ in want.values()) == max(c["e2e"] for _, c in want.values())
    assert error_lines(err)[-1] == ("error: --fail_on_regression 0.5: rank 0 regressed beyond the threshold; the job "
                                    "(slowest rank per side) +0.000 ms, +0.00%, within it")


def test_kineto_rank_communication_against_the_raw_traces(kineto_job, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    """The communication comparison alone on the swapped Kineto job: each rank's communication time is its NCCL
    kernels' summed durations (rank 0's trace 396.199 ms, rank 1's 379.053 ms), in the rank lines, the table and
    both overview files (the text exports' case: test_ranks_report.py, from the HCCL ops)."""
    base, comp, want = kineto_job
    out_dir = tmp_path / "out"
    code, out, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out_dir),
                                "--enable_communication_compare", "--output_format", "xlsx,json")
    assert code == 0, err
    doc = json.loads(next(out_dir.glob("performance_comparison_result_ranks_*.json")).read_text(encoding="utf-8"))
    assert validate(doc, SCHEMA) == []
    book = openpyxl.load_workbook(next(out_dir.glob("performance_comparison_result_ranks_*.xlsx")), read_only=True)
    sheet = [list(r) for r in book["Ranks"].iter_rows(min_row=3, values_only=True)]
    assert sheet[0][:4] == ["Rank", "Communication Time(ms)", "Communication Time(ms)", "Communication Diff(ms)"]
    rows = table_rows(out)
    for rank, (b, c) in want.items():
        b_ns, c_ns = b["communication"], c["communication"]
        got = doc["ranks"][rank]["communication"]
        assert (got["base_ns"], got["comparison_ns"], got["diff_ns"]) == (b_ns, c_ns, c_ns - b_ns)
        assert sheet[1 + rank][:4] == [rank, b_ns / 1e6, c_ns / 1e6, (c_ns - b_ns) / 1e6]
        cells = [_ms(b_ns), _ms(c_ns), _ms(c_ns - b_ns, "+"), _pct(b_ns, c_ns)]
        assert rows[rank][1:5] == cells
        assert f"rank {rank}: communication {cells[0]} ms -> {cells[1]} ms ({cells[2]} ms, {cells[3]}), " in out
    assert (want[0][0]["communication"], want[1][0]["communication"]) == (396_199_000, 379_053_000)


TEXT = "msinsight/test/data/pytorch/text"


def _mindspore_rank(src: Path, dst: Path, rank: int) -> None:
    """A rank of a MindSpore job as the user guide lays it out (``rank-{r}_{timestamp}_ascend_ms`` holding
    profiler_info_{r}.json and ASCEND_PROFILER_OUTPUT/{trace_view.json, kernel_details.csv}), made as
    tests/data/npu/make_fixtures.py makes its MindSpore fixture, from a whole real torch_npu rank export: the trace
    without the torch process's events and the async_npu / fwdbwd flows, the step column spelt "Step ID"."""
    out = dst / f"rank-{rank}_2025010100000000{rank}_ascend_ms"
    (out / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    events = json.loads((src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    python = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Python"}
    kept = [e for e in events if e.get("pid") not in python and e.get("cat") not in ("async_npu", "fwdbwd")]
    assert 0 < len(kept) < len(events)
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(kept), encoding="utf-8")
    kd = (src / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text(encoding="utf-8")
    (out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(kd.replace("Step Id,", "Step ID,", 1),
                                                                         encoding="utf-8")
    info = json.loads((src / f"profiler_info_{rank}.json").read_text(encoding="utf-8"))
    (out / f"profiler_info_{rank}.json").write_text(json.dumps({**info, "rank_id": rank}), encoding="utf-8")


def _step_ns(src: Path) -> dict[str, int]:
    """step_trace_time.csv's figures in whole ns (a file the MindSpore copy does not hold), E2E their sum (its
    Stage to the 0.001 ms shown: test_ranks_report.profiler_ns)."""
    import csv

    with open(src / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", newline="", encoding="utf-8") as fh:
        row = next(csv.DictReader(fh))
    cols = {"computing": "Computing", "uncovered_communication": "Communication(Not Overlapped)", "free": "Free"}
    out = {m: int(Decimal(row[c]).quantize(Decimal("0.001")) * 1000) for m, c in cols.items()}
    return {"e2e": sum(out.values()), **out}


def test_mindspore_rank_job_against_the_profilers_step_figures(samples: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    """MindSpore-layout folders of ranks made from the real text level0 / level1 exports: each rank's E2E,
    Computing, Uncovered Communication and Free are the profiler's step_trace_time.csv (left out of the copies),
    as for the torch_npu layout (test_ranks_report.py); before, a MindSpore rank job was checked only against a
    compare of its one fixture with itself. The gate at 20 %: rank 1 (+31.12 %) beyond it, the job within."""
    src = {side: samples / TEXT / level for side, level in (("base", "level0"), ("comp", "level1"))}
    if not all(p.is_dir() for p in src.values()):
        pytest.skip("text samples absent")
    for side, folder in src.items():
        for r in (0, 1):
            _mindspore_rank(folder / f"rank{r}_ascend_pt", tmp_path / side, r)
    want = {r: (_step_ns(src["base"] / f"rank{r}_ascend_pt"), _step_ns(src["comp"] / f"rank{r}_ascend_pt"))
            for r in (0, 1)}
    code, out, err, doc, book = _run(capsys, tmp_path / "base", tmp_path / "comp", tmp_path / "out", "20")
    assert [(r["base_path"], r["comparison_path"]) for r in doc["ranks"]] == [
        tuple(str(tmp_path / side / f"rank-{r}_2025010100000000{r}_ascend_ms") for side in ("base", "comp"))
        for r in (0, 1)]
    _check_job(out, doc, book, want, 20)
    assert code == 3 and [r["regressed"] for r in doc["ranks"]] == [False, True], err
    job = max(c["e2e"] for _, c in want.values()) - max(b["e2e"] for b, _ in want.values())
    assert job == 136_581_009 - 116_251_182  # rank 0 on both sides: +20.330 ms
    assert error_lines(err)[-1] == ("error: --fail_on_regression 20: rank 1 regressed beyond the threshold; the job "
                                    "(slowest rank per side) +20.330 ms, +17.49%, within it")
