"""Property-based fuzz of whole runs on mutated real inputs (NPU text, DB, Kineto).

Property: a run on a mutated copy of a real excerpt exits 0-3; on 1 with one ``error:`` line and nothing
written, on 0 with a workbook openpyxl opens and a JSON report that validates against
msprof_compare/schemas/result.schema.json. Why: test_fuzz.py feeds the trace loaders bytes, which never reaches the
comparison and report code (Summary, Sheet.frame, print setup, HCCL detection by Name / Accelerator Core,
module trees); these mutations do: odd kernel names and cores (NaN, numbers, empty, non-ASCII, padded,
lower-case 'hccl'), injected or shifted ``nn.Module:`` spans that nest oddly or hold no op, op names that
collide across modules, one-row and long kernel tables, and identical sides. ``tools/fuzz_long.py`` runs
these properties with a long budget too (each example is a whole run: ~0.3-1 s).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_json_report import SCHEMA as SCHEMA_PATH
from test_json_report import validate

from msprof_compare import cli

DATA = Path(__file__).resolve().parent / "data"
NPU = DATA / "npu" / "rank0_ascend_pt"
DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
KINETO = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
_LONG = int(os.environ.get("MSPROF_FUZZ_EXAMPLES", "0") or 0)
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
#: each example is a whole run: CI keeps a few reproducible ones, tools/fuzz_long.py raises the budget
RUNS = settings(max_examples=_LONG or 6, deadline=None, derandomize=not _LONG, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: values that reach name / core handling: NaN spellings, numbers, empty, non-ASCII, padded, lower case
ODD = st.sampled_from(["", "NaN", "nan", "N/A", "None", "0", "1e3", "-1", "3.5", " HCCL ", "hccl", "Hccl",
                       "HCCL\t", "hcom_allReduce_", " hcom_broadcast__1_0 ", "HCOM_ALLGATHER", "AI_CORE",
                       "AI_VECTOR_CORE", "MIX_AIC", "ai_core", "Übersetzung", "通信算子", "名", "😀",
                       "=SUM(A1)", "a" * 300, "x\ny", "\x01a", "\uffff", "nn.Module: X_0", "aten::mm", "Notify_Wait"])
_OP_NAMES = st.sampled_from(["aten::add", "aten::mm", "aclnnAdd", "Add", "", "nan", "通信"])
_MODS = st.sampled_from(["nn.Module: Net_0", "nn.Module: Net_0", "nn.Module: Linear_0", "nn.Module: Linear_1",
                         "nn.Module: ", "NN.MODULE: Odd_0", "nn.Module: 名_0", "nn.Module: Net_0/Linear_0"])


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli._run_typer(cli._compare_app(), args, "msprof-compare")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module", autouse=True)
def warnings_only():
    """The runs log at WARNING (thousands of INFO lines otherwise), for this module only: set for the rest of
    the session, the variable hid the CI gate's "No regression" line from test_gate's later runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MSPROF_ANALYZE_LOG_LEVEL", "WARNING")
        yield


def check_run(base: Path, comp: Path, out: Path, flags: list[str]) -> None:
    code, stdout, stderr = run_cli(["-bp", str(base), "-d", str(comp), "-o", str(out),
                                    "--output_format", "xlsx,json", *flags])
    event(f"exit {code}")  # the statistics show how many runs got past the loaders
    where = f"exit {code}, flags {flags}\n--- stderr:\n{stderr[-4000:]}"
    assert "Traceback" not in stdout + stderr, where
    assert code in (0, 1, 2, 3), where
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    left = sorted(os.listdir(out)) if out.is_dir() else []
    if code == 1:
        assert len(errors) == 1 and "internal error" not in errors[0], where
        event(errors[0].split(":")[-1].strip()[:60])
        assert left == [], f"half-written output {left}\n{where}"
        return
    assert errors == [], where
    if code == 2:
        return
    kinds = sorted(p.rsplit(".", 1)[1] for p in left)
    if kinds == ["json"]:  # no comparison produced rows (e.g. --use_kernel_type without op_statistic.csv)
        assert "no workbook was written" in stderr, where
    else:
        assert kinds == ["json", "xlsx"], f"{left}\n{where}"
    for name in left:
        path = out / name
        if name.endswith(".xlsx"):
            wb = openpyxl.load_workbook(path)
            assert wb.sheetnames, where
            wb.close()
        else:
            errs = validate(json.loads(path.read_text(encoding="utf-8")), SCHEMA)
            assert errs == [], f"{errs[:5]}\n{where}"


_FLAGS = st.lists(st.sampled_from(["--use_input_shape", "--disable_module", "--enable_kernel_compare",
                                   "--use_kernel_type", "--disable_details", "--enable_profiling_compare",
                                   "--enable_operator_compare", "--enable_api_compare"]), max_size=2, unique=True)


# ---------------------------------------------------------------- NPU text


def _mutate_kernels(data: st.DataObject, path: Path) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    size = data.draw(st.sampled_from(["keep", "one", "many"]), label="kernel rows")
    if size == "one":
        body = body[:1]
    elif size == "many":
        body = body * data.draw(st.integers(50, 500), label="repeat")
    cols = [head.index(c) for c in ("Name", "Accelerator Core", "Type") if c in head]
    for _ in range(data.draw(st.integers(0, 8), label="edits")):
        if not body:
            break
        r = data.draw(st.integers(0, len(body) - 1))
        body[r][data.draw(st.sampled_from(cols))] = data.draw(ODD)
    if data.draw(st.booleans(), label="all cores"):  # one odd value in a whole column
        col = data.draw(st.sampled_from(cols))
        value = data.draw(ODD)
        for row in body:
            row[col] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([head, *body])


def _mutate_events(data: st.DataObject, evs: list[dict], op_cat: str) -> None:
    """Inject nn.Module spans over a real op range (overlapping, nested, empty) and collide op names."""
    ops = sorted((e for e in evs if e.get("cat") == op_cat and e.get("ph") == "X"), key=lambda e: float(e["ts"]))
    if not ops:
        return
    for _ in range(data.draw(st.integers(0, 4), label="modules")):
        i = data.draw(st.integers(0, len(ops) - 1))
        j = data.draw(st.integers(i, min(len(ops) - 1, i + 40)))
        t0 = float(ops[i]["ts"]) + data.draw(st.sampled_from([0.0, -0.5, 0.5, 1e6]))  # 1e6: after every op
        t1 = float(ops[j]["ts"]) + float(ops[j].get("dur", 0) or 0) + data.draw(st.sampled_from([0.0, 0.5, -1.0]))
        evs.append({"ph": "X", "cat": "python_function", "name": data.draw(_MODS), "pid": ops[i]["pid"],
                    "tid": ops[i]["tid"], "ts": t0, "dur": max(t1 - t0, data.draw(st.sampled_from([0.0, 1.0]))),
                    "args": {"Python id": data.draw(st.integers(1, 9)), "Python parent id": 0}})
    for _ in range(data.draw(st.integers(0, 6), label="op renames")):
        ops[data.draw(st.integers(0, len(ops) - 1))]["name"] = data.draw(_OP_NAMES)


def _npu_side(data: st.DataObject, dest: Path) -> Path:
    shutil.copytree(NPU, dest)
    out_dir = dest / "ASCEND_PROFILER_OUTPUT"
    _mutate_kernels(data, out_dir / "kernel_details.csv")
    tv = out_dir / "trace_view.json"
    evs = json.loads(tv.read_bytes())
    _mutate_events(data, evs, "cpu_op")
    tv.write_text(json.dumps(evs), encoding="utf-8")
    return dest


@RUNS
@given(st.data(), _FLAGS)
def test_npu_text_mutations(data: st.DataObject, flags: list[str]) -> None:
    """Modules are compared only when both sides have some: the partner is the same folder, a copy of it, a
    second mutation of the excerpt, or the excerpt itself."""
    with tempfile.TemporaryDirectory() as tmp:
        work = _npu_side(data, Path(tmp) / "a" / "rank0_ascend_pt")
        other = data.draw(st.sampled_from(["same", "copy", "other", "pristine"]), label="other side")
        if other == "same":
            partner = work
        elif other == "copy":
            partner = Path(tmp) / "b" / "rank0_ascend_pt"
            shutil.copytree(work, partner)
        elif other == "other":
            partner = _npu_side(data, Path(tmp) / "b" / "rank0_ascend_pt")
        else:
            partner = NPU
        base, comp = (work, partner) if data.draw(st.booleans(), label="mutated is base") else (partner, work)
        check_run(base, comp, Path(tmp) / "out", flags)


# ---------------------------------------------------------------- DB


@RUNS
@given(st.data(), _FLAGS)
def test_db_mutations(data: st.DataObject, flags: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ascend_pytorch_profiler_0.db"
        shutil.copyfile(DB, db)
        con = sqlite3.connect(db)
        ids = [r[0] for r in con.execute(
            "SELECT name FROM COMPUTE_TASK_INFO UNION SELECT taskType FROM COMPUTE_TASK_INFO "
            "UNION SELECT opType FROM COMPUTE_TASK_INFO UNION SELECT name FROM PYTORCH_API "
            "UNION SELECT opName FROM COMMUNICATION_OP ORDER BY 1")]
        for _ in range(data.draw(st.integers(1, 10), label="string edits")):
            sid = data.draw(st.sampled_from(ids))
            value = data.draw(st.one_of(ODD, st.sampled_from([None, 7, 2.5, b"A", b"\xe5\x90\x8d"])))  # SQL types
            con.execute("UPDATE STRING_IDS SET value = ? WHERE id = ?", (value, sid))
        mods = [r[0] for r in con.execute(
            "SELECT p.rowid FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
            "WHERE s.value LIKE 'nn.Module:%' ORDER BY p.rowid")]
        for _ in range(data.draw(st.integers(0, 4), label="module edits") if mods else 0):
            rid = data.draw(st.sampled_from(mods))
            what = data.draw(st.sampled_from(["shift", "empty", "stretch", "drop"]))
            sql = {"shift": "UPDATE PYTORCH_API SET startNs = startNs + ?1, endNs = endNs + ?1 WHERE rowid = ?2",
                   "empty": "UPDATE PYTORCH_API SET endNs = startNs + 0 * ?1 WHERE rowid = ?2",
                   "stretch": "UPDATE PYTORCH_API SET endNs = endNs + ?1 WHERE rowid = ?2",
                   "drop": "DELETE FROM PYTORCH_API WHERE rowid = ?2 AND ?1 IS NOT NULL"}[what]
            con.execute(sql, (data.draw(st.sampled_from([-50_000, 1_000, 10**9])), rid))
        if data.draw(st.booleans(), label="one task"):
            con.execute("DELETE FROM COMPUTE_TASK_INFO WHERE rowid NOT IN (SELECT MIN(rowid) FROM COMPUTE_TASK_INFO)")
        con.commit()
        con.close()
        partner = db if data.draw(st.booleans(), label="same") else DB
        base, comp = (db, partner) if data.draw(st.booleans(), label="mutated is base") else (partner, db)
        check_run(base, comp, Path(tmp) / "out", flags)


# ---------------------------------------------------------------- Kineto


@RUNS
@given(st.data(), _FLAGS)
def test_kineto_mutations(data: st.DataObject, flags: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        doc = json.loads(gzip.decompress(KINETO.read_bytes()))
        evs = doc["traceEvents"]
        kernels = [e for e in evs if e.get("cat") == "kernel"]
        for _ in range(data.draw(st.integers(0, 6), label="kernel renames")):
            if kernels:
                kernels[data.draw(st.integers(0, len(kernels) - 1))]["name"] = data.draw(ODD)
        mods = [e for e in evs if str(e.get("name", "")).startswith("nn.Module:")]
        for _ in range(data.draw(st.integers(0, 4), label="module edits")):
            if not mods:
                break
            m = mods[data.draw(st.integers(0, len(mods) - 1))]
            what = data.draw(st.sampled_from(["rename", "shift", "shrink", "drop"]))
            if what == "rename":
                m["name"] = data.draw(_MODS)
            elif what == "shift":
                m["ts"] = float(m["ts"]) + data.draw(st.sampled_from([-50.0, 50.0, 1e6]))
            elif what == "shrink":
                m["dur"] = data.draw(st.sampled_from([0, 1]))
            else:
                evs.remove(m)
                mods.remove(m)
        _mutate_events(data, evs, "cpu_op")
        path = Path(tmp) / "fuzz.pt.trace.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        partner = path if data.draw(st.booleans(), label="same") else KINETO
        base, comp = (path, partner) if data.draw(st.booleans(), label="mutated is base") else (partner, path)
        check_run(base, comp, Path(tmp) / "out", flags)
