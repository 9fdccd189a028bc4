"""The Summary's Top Module Contributors of reference pair 3 (DB level1 -> level2, the excerpts in tests/data/db):
which listed operators run modules, which module rows are ranked, and every figure of the 15 rows (Rank, Base,
Comparison, Diff, Share, Cumulative Share, Share of Net Diff), with the title's "N rows cover X%" and the lead's
"all of it" / "base x of its y ms" words, all recomputed by plain SQL on the two DB files.

The original's ModuleCompareStatistic cells of pair 3 cannot serve: it keeps only the tasks of an op's last
connection id (docs/differences.md, "Module sheets (pair 3)"), so the rows are rebuilt from the raw tables here:
an op's device time is that of the compute tasks launched by it and by every op row inside it on its thread
(all its CANN connection ids); a forward row is named by the ``nn.Module`` ranges around its op; a backward row
by the ``[ BACKWARD ]`` marker and the modules around the forward op its backward op is linked to (the two op rows
sharing a CANN connection id, forward first: tests/test_modules_db.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dbutil import sql
from stepcopy import with_step_event

from msprof_compare.api import compare
from msprof_compare.compare.contributors import contributors_title
from msprof_compare.compare.module_contributors import _held_figures, module_contributors_note
from msprof_compare.report.summary_console import render_explain

DATA = Path(__file__).parent / "data" / "db"
L1, L2 = DATA / "l1" / "ascend_pytorch_profiler_0.db", DATA / "l2" / "ascend_pytorch_profiler_0.db"
OP, TRACE = 50001, 50003  # ENUM_API_TYPE of the samples: op, trace (python frames and nn.Module ranges)


def _tables(path: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, int], dict[int, int]]:
    """(op rows, nn.Module ranges, device ns each op row launched itself, backward op start -> forward op start)."""
    ev = pd.DataFrame(sql(path, """
        SELECT p.rowid, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), p.globalTid, p.type, s.value
        FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name"""), columns=["rid", "s", "e", "tid", "type", "name"])
    launched = dict(sql(path, f"""
        SELECT p.rowid, sum(t.endNs - t.startNs) FROM PYTORCH_API p
        JOIN CONNECTION_IDS ci ON ci.id = p.connectionId JOIN TASK t ON t.connectionId = ci.connectionId
        JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId WHERE p.type = {OP} GROUP BY p.rowid"""))
    links = sql(path, f"""
        SELECT min(CAST(p.startNs AS INTEGER)), max(CAST(p.startNs AS INTEGER)) FROM PYTORCH_API p
        JOIN CONNECTION_IDS ci ON ci.id = p.connectionId WHERE p.type = {OP}
        GROUP BY ci.connectionId HAVING count(*) > 1""")
    ops = ev[ev["type"] == OP].sort_values("s").reset_index(drop=True)
    modules = ev[(ev["type"] == TRACE) & ev["name"].str.startswith("nn.Module: ")]
    return ops, modules, launched, {bwd: fwd for fwd, bwd in links}


def _module_rows_inside(path: Path, names: list[str]) -> dict[str, dict[tuple[str, str], int]]:
    """Per operator of ``names``, the module rows ("module path", "operator") of the ops it runs, with their device
    ns summed over its instances: under an op that runs forward modules (DDP's forward), its child ops, each
    named by the nn.Module ranges around it; under a backward op, the children of the backward ops inside it that
    a forward op links to, named "/[ BACKWARD ]" + the modules around that forward op. An operator with neither
    runs no module (an empty dict)."""
    ops, modules, launched, fwd_of = _tables(path)
    by_start = {int(s): i for i, s in enumerate(ops["s"])}

    def inside(o: pd.Series) -> pd.DataFrame:
        return ops[(ops["tid"] == o["tid"]) & (ops["s"] >= o["s"]) & (ops["e"] <= o["e"]) & (ops["rid"] != o["rid"])]

    def parent(i: int) -> int:
        o = ops.loc[i]
        around = ops[(ops["tid"] == o["tid"]) & (ops["s"] <= o["s"]) & (ops["e"] >= o["e"]) & (ops.index != i)]
        return int(around["s"].idxmax())

    def device_ns(o: pd.Series) -> int:
        return int(launched.get(int(o["rid"]), 0) + sum(launched.get(int(r), 0) for r in inside(o)["rid"]))

    def path_of(o: pd.Series) -> str:
        m = modules[(modules["tid"] == o["tid"]) & (modules["s"] <= o["s"]) & (modules["e"] >= o["e"])]
        return "".join(f"/ {n.removeprefix('nn.Module: ')}" for n in m.sort_values("s")["name"])

    out: dict[str, dict[tuple[str, str], int]] = {}
    for name in names:
        rows: dict[tuple[str, str], int] = {}
        for i in ops.index[ops["name"] == name]:
            for j in inside(ops.loc[i]).index:
                o, p = ops.loc[j], parent(j)
                if p == i and path_of(o):  # a forward op of a module, run by this op
                    key = (path_of(o), o["name"])
                elif p != i and int(ops.loc[p, "s"]) in fwd_of:  # a child of a backward op inside this op
                    key = ("/[ BACKWARD ]" + path_of(ops.loc[by_start[fwd_of[int(ops.loc[p, 's'])]]]), o["name"])
                else:
                    continue
                rows[key] = rows.get(key, 0) + device_ns(o)
        out[name] = rows
    return out


@pytest.fixture(scope="module")
def pair3():
    return compare(str(L1), str(L2))


def test_pair3_module_contributors_from_sql(pair3) -> None:
    """Reference pair 3: seven operator contributors; five run modules: DDP's forward (every forward row under
    AlexNet_0) and the backward ops of Convolution, Relu, Addmm and NllLoss (the backward rows of the ops they
    launch). copy_bucket_to_grad runs none, and the optimizer's pseudo-module rows (Optimizer.step#SGD.step) are
    its own rows, not modules run inside it (README). The module contributors rank the 41 rows inside those five
    (plus DDP's forward's own row, 0 -> 0 ms, which changes no share) by |Device Self Time change|, largest
    first, until 80 % of those rows' summed |change|: 15 rows, 81.1 %."""
    contrib, mods = pair3.contributors, pair3.module_contributors
    names = contrib["Name"].tolist()
    assert len(names) == 7
    base, comp = _module_rows_inside(L1, names), _module_rows_inside(L2, names)
    runners = [n for n in names if base[n] or comp[n]]
    assert runners == ["autograd::engine::evaluate_function: ConvolutionBackward0",
                       "autograd::engine::evaluate_function: ReluBackward0", "DistributedDataParallel.forward",
                       "autograd::engine::evaluate_function: AddmmBackward0",
                       "autograd::engine::evaluate_function: NllLossBackward0"]
    assert [n for n, _ in mods.attrs["runs_modules"]] == runners and mods.attrs["moved"] == []

    # the lead's figures: how much of each runner's listed time its module rows hold (by SQL against the
    # contributor's Base / Comparison ms): all of it but for AddmmBackward0, whose aten::t / bias ops outside its
    # backward op leave base 0.560232 of 0.612633 ms and comparison 0.549771 of 0.605671 ms
    listed = dict(zip(names, zip(contrib["Base(ms)"], contrib["Comparison(ms)"], strict=True), strict=True))
    held = {n: (sum(base[n].values()) / 1e6, sum(comp[n].values()) / 1e6) for n in runners}
    for n in runners:
        if n.endswith("AddmmBackward0"):
            assert held[n] == pytest.approx((0.560232, 0.549771), abs=1e-9)
            assert listed[n] == pytest.approx((0.612633, 0.605671), abs=1e-9)
        else:
            assert held[n] == pytest.approx(listed[n], abs=1e-9), n
    for n, figures in mods.attrs["runs_modules"]:  # (side, ms its module rows hold, its ms as listed)
        assert [f[0] for f in figures] == ["base", "comparison"]
        assert [x for f in figures for x in f[1:]] == pytest.approx(
            [held[n][0], listed[n][0], held[n][1], listed[n][1]], abs=1e-9), n
    assert _held_figures(dict(mods.attrs["runs_modules"])["autograd::engine::evaluate_function: AddmmBackward0"]) \
        == "base 0.560 of its 0.613 ms, comparison 0.550 of its 0.606 ms"
    # the lead names three of the five: AddmmBackward0, the one held in part (fourth by rank), before
    # DistributedDataParallel.forward (third), whose "all of it" the cut says with the NllLossBackward0's
    assert module_contributors_note(mods) == (
        "The module rows hold this much of the time of the operators that run modules: "
        "autograd::engine::evaluate_function: ConvolutionBackward0 (all of it), "
        "autograd::engine::evaluate_function: ReluBackward0 (all of it), "
        "autograd::engine::evaluate_function: AddmmBackward0 (base 0.560 of its 0.613 ms, comparison 0.550 of its "
        "0.606 ms), ... (5 in all; the other 2: all of it); the module contributors rank the module rows inside them "
        "by their change")

    # the rows inside the runners, in ms; each is a ModuleCompareStatistic row with these very figures
    keys = sorted({k for n in runners for k in (*base[n], *comp[n])})
    rows = [(f"{m} > {o}", sum(base[n].get((m, o), 0) for n in runners) / 1e6,
             sum(comp[n].get((m, o), 0) for n in runners) / 1e6) for m, o in keys]
    assert len(rows) == 41
    stat = pair3.sheet("ModuleCompareStatistic")
    sheet = {f"{str(m).strip()} > {o}": (b, c) for m, o, b, c in zip(
        stat.iloc[:, 3], stat.iloc[:, 4], stat.iloc[:, 6], stat.iloc[:, 10], strict=True) if o != "[ TOTAL ]"}
    assert len(sheet) == 54
    for name, b, c in rows:
        assert sheet[name] == pytest.approx((b, c), abs=1e-9), name

    # the ranking, by hand: |diff| largest first (ties in row order), cut where the running share reaches 80 %
    diffs = [round(c - b, 6) for _, b, c in rows]
    gross, net = sum(abs(d) for d in diffs), sum(diffs)
    assert round(gross, 6) == 0.089165 and round(net, 6) == -0.006613
    order = sorted((i for i, d in enumerate(diffs) if d), key=lambda i: -abs(diffs[i]))
    want, cum = [], 0.0
    for i in order:
        cum += abs(diffs[i])
        want.append((rows[i][0], rows[i][1], rows[i][2], diffs[i], abs(diffs[i]) / gross, cum / gross,
                     diffs[i] / net))
        if cum >= 0.8 * gross:
            break
    assert len(want) == 15 and want[-2][5] < 0.8 <= want[-1][5]
    # rank 1: Linear_0's forward aten::linear 0.358247 -> 0.372927 ms, +0.014680: 0.014680 / 0.089165 = 16.46 %
    assert want[0][:4] == ("/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::linear",
                           0.358247, 0.372927, 0.01468)
    assert f"{want[0][4]:.2%}" == "16.46%" and f"{want[-1][5]:.1%}" == "81.1%"
    assert mods["Rank"].tolist() == list(range(1, 16))
    assert mods["Level"].tolist() == ["module operator"] * 15
    assert mods["Name"].tolist() == [w[0] for w in want]
    for col, k in (("Base(ms)", 1), ("Comparison(ms)", 2), ("Diff(ms)", 3), ("Share", 4),
                   ("Cumulative Share", 5), ("Share of Net Diff", 6)):
        assert mods[col].tolist() == pytest.approx([w[k] for w in want], abs=1e-9), col

    # the statement over the table: 15 rows, 81.1 % of the change of the rows inside the runners (of all 54 rows'
    # summed |change| they hold less, so "of the module operators' change" would overstate it)
    every = sum(abs(round(c - b, 6)) for b, c in sheet.values())
    assert sum(abs(w[3]) for w in want) / every < 0.75
    title = ("Top Module Contributors (module operator level: 15 rows cover 81.1% of the device-time change of the "
             "module operators inside them; the first 10 shown)")
    assert contributors_title(mods, "module", first="; the first 10 shown") == title
    text = render_explain(pair3.frames, pair3.verdict)
    lines = text[text.index(f"| {title}"):].splitlines()
    shown = [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines[4:14]]
    assert [s[0] for s in shown] == [str(r) for r in range(1, 11)] and lines[14].startswith("+")
    for s, w in zip(shown, want, strict=False):
        assert s[2:] == [f"{w[1]:.3f}", f"{w[2]:.3f}", f"{w[3]:+.3f}", f"{w[4]:.1%}", f"{w[5]:.1%}"], s


def _overlap_step(src: Path, dest: Path) -> Path:
    """A copy of the text export ``src`` at ``dest`` with a ``ProfilerStep#51`` from 1 us after ``ProfilerStep#50``
    starts to its end, as a step that starts before the previous one ends (``model.step_notes`` warns of it): it
    nests under step 50 (reference-2 §2.2), and every op of the sample, the first 290 us into step 50 or later,
    under it."""
    return with_step_event(src, dest, "ProfilerStep#51", 1, -1)


def test_module_operator_level_from_the_originals_module_rows(samples: Path, reference_outputs: Path,
                                                               tmp_path: Path) -> None:
    """The input that gives Top Contributors at the module operator level: a step asked of two text exports whose
    marker nests under another step (a step that starts before the previous one ends). The operator pairing
    takes the ops under a step's marker of no step ancestor (``OpTree.top_layer``), so the later step has none
    ("There is no operator infomation for step 51", the original's warning) and OperatorCompareStatistic no row,
    while the module sheets, built from the modules and ops that start in the step, have all of them: the
    contributors are then the module operator rows. Pair 1 (text level1 -> level2) with a step 51 from 1 us into
    step 50 to its end, which every module and op starts in: its 54 module operator rows are the original's
    (reference pair 1's ModuleCompareStatistic cells, step 50 and the same modules, to the 2.4 ns its float sums
    differ by), and the contributors are those cells ranked by hand: 18 rows, 80.5 % of their summed |change|.
    (A record_function around the profiled loop reached this level until its step markers were the compared
    steps: tests/test_step_wrapper.py.)"""
    text = samples / "msinsight/test/data/pytorch/text"
    base = _overlap_step(text / "level1/rank0_ascend_pt", tmp_path / "l1" / "rank0_ascend_pt")
    comp = _overlap_step(text / "level2/rank0_ascend_pt", tmp_path / "l2" / "rank0_ascend_pt")
    # ApiCompare of a step without an op fails the run (exit 1, as the original's "There is no operator event data
    # for step 51"): operators and the time breakdown only
    res = compare(str(base), str(comp), base_step=51, comparison_step=51, enable_operator_compare=True,
                  enable_profiling_compare=True)
    assert res.sheet_names == ["Summary", "OverallMetrics", "ModuleCompareStatistic", "ModuleCompare"]
    ref = pd.read_excel(reference_outputs / "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx",
                        sheet_name="ModuleCompareStatistic", header=None, skiprows=3)
    ref = ref[ref[4].astype(str) != "[ TOTAL ]"]
    rows = [(f"{str(m).strip()} > {o}", float(b), float(c)) for m, o, b, c in zip(ref[3], ref[4], ref[6], ref[10],
                                                                                  strict=True)]
    ours = res.sheet("ModuleCompareStatistic")
    ours = ours[ours.iloc[:, 4] != "[ TOTAL ]"]
    assert [f"{str(m).strip()} > {o}" for m, o in zip(ours.iloc[:, 3], ours.iloc[:, 4], strict=True)] == \
        [r[0] for r in rows] and len(rows) == 54
    assert ours.iloc[:, 6].tolist() == pytest.approx([r[1] for r in rows], abs=3e-6)
    assert ours.iloc[:, 10].tolist() == pytest.approx([r[2] for r in rows], abs=3e-6)

    # by hand from the original's cells: |comparison - base| (to the ns: its cells carry float sums of us,
    # 0.46868940625), largest first, ties in sheet order, until 80 % of the 54 rows' sum
    diffs = [round(c - b, 6) for _, b, c in rows]
    gross, net = sum(map(abs, diffs)), sum(diffs)
    order = sorted(range(len(rows)), key=lambda i: -abs(diffs[i]))
    want, cum = [], 0.0
    for i in order:
        cum += abs(diffs[i])
        want.append((*rows[i], diffs[i], abs(diffs[i]) / gross, cum / gross, diffs[i] / net))
        if cum >= 0.8 * gross:
            break
    # two |diffs| of the 19 largest are equal (1.96 us: backward Linear_1's aten::mm, Conv2d_1's
    # aten::convolution_backward, in sheet order) or 10 ns apart at least: the 2.4 ns the sheets differ by leave
    # the order alone
    top = sorted(map(abs, diffs), reverse=True)[:19]
    assert all(a == b or a - b >= 1e-5 - 1e-12 for a, b in zip(top, top[1:], strict=False))
    assert len(want) == 18 and f"{want[-1][5]:.1%}" == "80.5%" and want[-2][5] < 0.8
    # rank 1: backward Conv2d_0's aten::convolution_backward 468.688 -> 481.389 us: +0.012701 of 0.100344 ms
    assert want[0][0] == ("/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ Conv2d_0 > "
                          "aten::convolution_backward") and round(gross, 5) == 0.10034
    contrib = res.contributors
    assert contrib["Level"].tolist() == ["module operator"] * 18
    assert contrib["Rank"].tolist() == list(range(1, 19))
    assert contrib["Name"].tolist() == [w[0] for w in want]
    for col, k, tol in (("Base(ms)", 1, 3e-6), ("Comparison(ms)", 2, 3e-6), ("Diff(ms)", 3, 5e-6),
                        ("Share", 4, 1e-4), ("Cumulative Share", 5, 1e-4), ("Share of Net Diff", 6, 5e-3)):
        assert contrib[col].tolist() == pytest.approx([w[k] for w in want], abs=tol), col
    # what the console says over and under them: 18 rows, 80.5 % of the module operators' change; their net,
    # -0.004 ms (by hand: the 54 rows' summed diff), is under 1 % of the E2E change
    assert round(net, 3) == -0.004
    out = render_explain(res.frames, res.verdict)
    assert ("| Top Contributors (module operator level: 18 rows cover 80.5% of the module operators' device-time "
            "change, not of the E2E change; the first 10 shown) |") in out
    assert "Note: all module operators together changed by -0.004 ms, under 1% of the E2E change" in out
    assert "Top Module Contributors" not in out and "Not on the module sheets" not in out

