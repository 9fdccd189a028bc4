"""The console table must match the original's text character by character."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from test_overall_npu import BASE_ZERO, BOTH_ZERO

from msprof_compare.report.console import render_summary

DATA = Path(__file__).parent / "data" / "report"
# Pair 2 of shared/reference-outputs/README.md: the original's stdout, verbatim.
PAIR2 = (DATA / "console_pair2.txt").read_text(encoding="utf-8").rstrip("\n")


def summary_from_table(text: str) -> dict:
    """Rebuild the summary dict the overall comparator produces from a printed table.

    Cells of the Uncovered column carry the original's ``% .3f`` leading space
    for non-negative values (reference-1 §10), which centring hides.
    """
    lines = [line for line in text.splitlines() if line.startswith(("+", "|"))]
    title = lines[1].strip("|").strip()
    headers = [c.strip() for c in lines[3].strip("|").split("|")]
    rows = []
    for line in lines[5:-1]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        pairs = zip(headers, cells, strict=True)
        rows.append([" " + c if h.startswith("Uncovered") and c[:1].isdigit() else c for h, c in pairs])
    return {"title": title, "headers": headers, "rows": rows}


def test_renders_pair2_verbatim() -> None:
    summary = summary_from_table(PAIR2)
    assert summary["rows"][0][4] == " 0.082s( / )"
    assert render_summary(summary) == PAIR2


def test_empty_summary_renders_nothing() -> None:
    assert render_summary({"title": "Model Profiling Time Distribution", "headers": [], "rows": []}) == ""
    assert render_summary({"headers": ["", "E2E Time"], "rows": []}) == ""


def test_row_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError):
        render_summary({"headers": ["", "E2E Time"], "rows": [["GPU"]]})



def test_a_repeated_header_is_shown_as_it_is() -> None:
    """PrettyTable refuses repeated field names, so a repeat is padded; the padding must be invisible once
    centred (spaces), the header row reading the headers as given. Edit: pair 2's real table with its
    "Computing Time" header renamed "Other Time" (no real table repeats one)."""
    summary = summary_from_table(PAIR2)
    summary["headers"][2] = "Other Time"
    header = render_summary(summary).splitlines()[3]
    assert [c.strip() for c in header.strip("|").split("|")] == summary["headers"]

def test_every_reference_table_verbatim(reference_outputs: Path) -> None:
    text = (reference_outputs / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"Console output \(stdout, verbatim\):\n\n```\n(.*?)\n```", text, re.S)
    tables = [b for b in blocks if b.startswith("+")]
    assert len(tables) >= 10
    for table in tables:
        table = "\n".join(line for line in table.splitlines() if line.startswith(("+", "|")))
        assert render_summary(summary_from_table(table)) == table


def test_console_contributors_show_the_first_ten_and_cut_long_names() -> None:
    """The console lists at most 10 contributors (the sheet and JSON keep all) and cuts names over 70
    characters to 67 + '...', so the table stays readable."""
    import pandas as pd

    from msprof_compare.compare.contributors import CONTRIBUTOR_COLUMNS
    from msprof_compare.report.summary_console import render_contributors

    n = 12
    long_name = "aten::" + "x" * 80
    frame = pd.DataFrame({"Rank": range(1, n + 1), "Level": ["operator"] * n,
                          "Name": [long_name] + [f"op{i}" for i in range(1, n)],
                          "Base(ms)": [1.0] * n, "Comparison(ms)": [2.0] * n, "Diff(ms)": [1.0] * n,
                          "Share": [1 / n] * n, "Cumulative Share": [(i + 1) / n for i in range(n)],
                          "Share of Net Diff": [1 / n] * n}, columns=CONTRIBUTOR_COLUMNS)
    text = render_contributors(frame)
    assert "(operator level: 12 rows cover 100.0% of the operators' device-time change, not of the E2E change; " \
           "the first 10 shown)" in text
    assert "| Cumulative Share |" in text  # the header the Summary sheet and the JSON use
    assert "| 10 | op9 " in text and "op10" not in text
    assert ("aten::" + "x" * 61 + "...") in text and long_name not in text


def test_contributor_titles_give_the_share_as_the_last_row_shows_it() -> None:
    """Pair 9d's one contributor holds 9.930 of 9.944 ms of change (99.86 %): its row shows 99.9 %, and the
    titles said "covers 100%"; now console and sheet titles give the share to 0.1 %, as the rows do."""
    import pandas as pd
    import pytest

    from msprof_compare.compare import contributors
    from msprof_compare.report.summary_console import render_contributors

    rows = pd.DataFrame({"Name": ["a", "b", "c"], "Base(ms)": [0.0, 0.0, 0.0],
                         "Comparison(ms)": [0.013, 9.930, 0.001]})
    top = contributors.top_contributors(rows, "kernel")
    assert top["Name"].tolist() == ["b"]
    assert float(top["Cumulative Share"].iloc[-1]) == pytest.approx(9.930 / 9.944, abs=1e-12)
    assert contributors.coverage_text(top) == "1 row covers 99.9%"
    text = render_contributors(top)
    assert "(kernel level: 1 row covers 99.9% of the kernels' device-time change, not of the E2E change)" in text
    # prettytable 3.0 spreads a wide title over every column ("|  1 | b     |"), later releases over the last
    row = next(line for line in text.splitlines() if [c.strip() for c in line.split("|")[1:3]] == ["1", "b"])
    assert [c.strip() for c in row.split("|")[-3:-1]] == ["99.9%", "99.9%"]  # Share, Cumulative Share



def test_cli_says_which_row_is_base(samples: Path, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The original's first column names only the hardware, "NPU" on both rows of an NPU pair: the line printed
    right under the table says the base row comes first."""
    from cliutil import run_inproc

    text = samples / "msinsight/test/data/pytorch/text"
    code, out, _err = run_inproc(capsys, "-d", str(text / "level2/rank0_ascend_pt"),
                                 "-bp", str(text / "level1/rank0_ascend_pt"), "-o", str(tmp_path),
                                 "--enable_profiling_compare")
    assert code == 0
    lines = out.splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("| NPU |")]
    assert len(rows) == 2 and lines[rows[-1] + 1].startswith("+--")
    assert lines[rows[-1] + 2] == (f"Rows: base first ({text / 'level1/rank0_ascend_pt'}), comparison second "
                                   f"({text / 'level2/rank0_ascend_pt'}).")
    # both sides measured: no note but the Wait Time's (both 0 beside 112.541 / 134.458 ms of Notify_Wait), each
    # naming the cell its row shows: the base's zero reads "( / )", the comparison's "(0.000s)"
    assert "s( / )" in lines[rows[0]] and "s(0.000s)" in lines[rows[1]]
    assert lines[rows[-1] + 3:rows[-1] + 5] == [wait_note("Base", text / "level1/rank0_ascend_pt"),
                                                wait_note("Comparison", text / "level2/rank0_ascend_pt")]
    assert not lines[rows[-1] + 5].startswith(("Base row", "Comparison row"))


def test_the_rows_line_names_the_inputs_so_a_swap_shows(tmp_path: Path) -> None:
    """Nothing on stdout named the inputs: given the wrong way round (``-d`` is the comparison, though the README's
    first command gives it first), the bundled pair read "the comparison is slower than the base" with no word to
    catch the swap by. The line under the table names each row's input as typed (a leading ``=`` dropped, as the
    loaders drop it), on the real entry points: ``msprof-analyze`` both ways round, and ``performance_compare.py``,
    whose first path is the base. The verdict's E2E figures swap with the inputs."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    (tmp_path / "sample_data").symlink_to(repo / "sample_data")
    h100, mi300 = "sample_data/bert-small_h100.json.gz", "sample_data/bert-small_mi300.json.gz"
    analyze = [sys.executable, "-c", "from msprof_compare.entry import analyze_main; analyze_main()", "compare"]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(repo)
    runs = [(analyze + ["-d", mi300, "-bp", h100], h100, mi300, "3.908 ms -> 3.496 ms"),
            (analyze + [f"-d={h100}", "-bp", mi300], mi300, h100, "3.496 ms -> 3.908 ms"),
            ([sys.executable, str(repo / "performance_compare.py"), mi300, h100], mi300, h100, "3.496 ms -> 3.908 ms")]
    for i, (command, base, comparison, e2e) in enumerate(runs):
        out = tmp_path / f"out{i}"
        proc = subprocess.run(command + ["-o", str(out), "--enable_profiling_compare"], capture_output=True,
                              text=True, cwd=tmp_path, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        legend = lines.index(f"Rows: base first ({base}), comparison second ({comparison}).")
        assert lines[legend - 3].startswith("| GPU |") and lines[legend - 1].startswith("+--")
        assert any(line.startswith(f"E2E time {e2e} ") for line in lines[legend:]), proc.stdout


ALEXNET = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
TIMELINE = "mindinsight/tests/utils/resource/run_2/normal_run/profiler/ascend_timeline_display_1.json"


def _raw_events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return data if isinstance(data, list) else data["traceEvents"]


def wait_note(side: str, export: Path) -> str:
    """The note under the table of a text export whose Wait Time reads 0.000s, with its Notify_Wait total summed
    here from the raw trace_view.json (every Notify_Wait task, by hand: level1 112.541 ms, level2 134.458 ms), as a
    run of ``--enable_profiling_compare`` alone gives it: that run writes no CommunicationCompare, whose rows the
    note points to."""
    from decimal import Decimal

    raw = _raw_events(export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    total = sum(Decimal(str(e["dur"])) for e in raw if e.get("ph") == "X" and e.get("name") == "Notify_Wait")
    shown = "0.000s" if side == "Comparison" else BASE_ZERO  # the base row's cell reads "( / )"
    return (f"{side} row: its Wait Time {shown} is that of the HCCL plane that waits least in each communication "
            "group, as the original measures a text export, here a plane with no Notify_Wait; its planes hold "
            f"{total / 1000:,.3f} ms of Notify_Wait in all (CommunicationCompare's Notify_Wait rows; this run writes "
            "no CommunicationCompare: the enable_communication_compare option adds it).")


def test_rows_that_are_no_measurement_are_said_so(samples: Path, capsys: pytest.CaptureFixture,
                                                  tmp_path: Path) -> None:
    """A side's zeros that measure nothing are said under the table, in the order of the rows: pair 4's GPU
    base (its trace has no ``[memory]`` event with a Total Reserved, so its Mem Usage reads 0.00G beside the NPU's
    2.06G; and, a Kineto trace holding no transfer bandwidth, its SDMA Bandwidth 0.000GB/s beside the NPU's
    15.654GB/s, which a log line before the table said) and a legacy MindSpore timeline (no "Overlap Analysis"
    process, so no E2E time: a row of 0.000s). The JSON's console_summary carries the same lines; a pair measured
    on both sides prints none."""
    from cliutil import run_inproc

    base_events = _raw_events(samples / ALEXNET)
    assert not [e for e in base_events if e.get("name") == "[memory]" and "Total Reserved" in e.get("args", {})]
    timeline = _raw_events(samples / TIMELINE)
    assert not [e for e in timeline if e.get("ph") == "M" and e.get("args", {}).get("name") == "Overlap Analysis"]
    npu = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"

    memory_note = "Base row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement."
    time_note = "Comparison row: no time breakdown (no E2E time), so its 0.000s cells are not measurements."
    bandwidth_note = ("Base row: a GPU trace records no transfer bandwidth, so its SDMA Bandwidth 0.000GB/s is not a "
                      "measurement.")
    for comparison, notes in ((npu, [memory_note, bandwidth_note, wait_note("Comparison", npu)]),
                              (samples / TIMELINE, [time_note])):
        code, out, _err = run_inproc(capsys, "-d", str(comparison), "-bp", str(samples / ALEXNET),
                                     "-o", str(tmp_path), "--enable_profiling_compare")
        assert code == 0
        lines = out.splitlines()
        legend = lines.index(f"Rows: base first ({samples / ALEXNET}), comparison second ({comparison}).")
        assert lines[legend + 1:legend + 1 + len(notes)] == notes
        assert lines[legend - 3].startswith("| GPU |") and lines[legend - 2].startswith("| NPU |")
        mem = lines[legend - 3].split("|")
        if memory_note in notes:
            header = next(line for line in lines if "Mem Usage" in line).split("|")
            assert mem[header.index(next(h for h in header if h.strip() == "Mem Usage"))].strip() == "0.00G"
        code, out, _err = run_inproc(capsys, "-d", str(comparison), "-bp", str(samples / ALEXNET), "-o", "-",
                                     "--enable_profiling_compare")
        assert code == 0
        assert json.loads(out)["console_summary"]["notes"] == notes
    code, out, _err = run_inproc(capsys, "-d", str(npu), "-bp", str(npu), "-o", "-", "--enable_profiling_compare")
    # measured on both sides: only the Wait Time's note, the same on both rows and said once (the notes above are
    # not said)
    one = wait_note("Base", npu).replace(f"Base row: its Wait Time {BASE_ZERO}",
                                         f"Both rows: their Wait Time {BOTH_ZERO}")
    assert code == 0 and json.loads(out)["console_summary"]["notes"] == [one.replace("; its planes",
                                                                                     "; each side's planes")]


def test_row_without_time_or_memory_gets_both_notes(samples: Path, capsys: pytest.CaptureFixture) -> None:
    """NPU level-1 text export against a lone legacy MindSpore timeline: the timeline side has no E2E time and no
    memory (no memory_record.csv beside it, no [memory] event in it), so its row reads 0.000s and Mem Usage 0.00G
    beside the base's peak. Only the time note was printed, whose "0.000s cells" does not cover the 0.00G cell:
    both notes now, in the JSON too; and the bandwidth's, whose 0.000GB/s beside the base's 15.654GB/s no
    communication.json gives (a log line before the table said it)."""
    from cliutil import run_inproc

    timeline = samples / TIMELINE
    assert not [e for e in _raw_events(timeline) if e.get("name") == "[memory]"]
    assert not (timeline.parent / "memory_record.csv").exists()
    npu = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    notes = [wait_note("Base", npu),
             "Comparison row: no time breakdown (no E2E time), so its 0.000s cells are not measurements.",
             "Comparison row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement.",
             "Comparison row: a lone timeline file has no communication.json, so its SDMA Bandwidth 0.000GB/s is not "
             "a measurement."]
    code, out, _err = run_inproc(capsys, "-d", str(timeline), "-bp", str(npu), "-o", "-", "--enable_profiling_compare")
    assert code == 0
    doc = json.loads(out)
    table = doc["console_summary"]
    mem = table["headers"].index("Mem Usage")
    assert [row[mem] for row in table["rows"]] == ["2.06G", "0.00G"]
    assert [row[table["headers"].index("SDMA Bandwidth")] for row in table["rows"]] == ["15.654GB/s", "0.000GB/s"]
    assert table["notes"] == notes


def test_two_rows_without_time_get_one_note(samples: Path, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Reference pair 9c, two legacy MindSpore timelines: neither holds the "Overlap Analysis" process, so neither
    has an E2E time (the original wrote no OverallMetrics sheet for it, reference-outputs/README.md) and both rows
    read 0.000s. The note said "Base row: no time breakdown ..." and then "Comparison row: ..." for the one
    reason: one "Both rows:" line now, on the console and in the JSON, as the Wait Time's note of a pair alike;
    no other note (no Mem Usage or bandwidth column to explain)."""
    from cliutil import run_inproc

    base = samples / TIMELINE.replace("run_2", "run_1").replace("ascend_timeline_display", "timeline_display")
    comp = samples / TIMELINE
    for path in (base, comp):
        assert not [e for e in _raw_events(path) if e.get("ph") == "M" and e.get("args", {}).get("name") ==
                    "Overlap Analysis"]
    note = "Both rows: no time breakdown (no E2E time), so their 0.000s cells are not measurements."
    code, out, _err = run_inproc(capsys, "-d", str(comp), "-bp", str(base), "-o", str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    legend = lines.index(f"Rows: base first ({base}), comparison second ({comp}).")
    assert lines[legend + 1:] == [note]
    code, out, _err = run_inproc(capsys, "-d", str(comp), "-bp", str(base), "-o", "-", "--output_format", "json")
    assert code == 0 and json.loads(out)["console_summary"]["notes"] == [note]


def test_waterfall_delta_that_rounds_to_zero_has_no_minus_sign(samples: Path) -> None:
    """NPU pair 1 read the other way (level2 as the base): Other Computing went 0.005685 -> 0.005539 ms, a
    -0.000146 ms change that shows as +0.000 at the table's three decimals; Python's round() leaves -0.0 there,
    which printed "-0.000" beside a Cumulative that did not move. Its share (-0.0022 %) likewise reads 0.0%."""
    from msprof_compare.api import compare
    from msprof_compare.report.summary_console import render_waterfall

    text = samples / "msinsight/test/data/pytorch/text"
    r = compare(str(text / "level2/rank0_ascend_pt"), str(text / "level1/rank0_ascend_pt"))
    lines = render_waterfall(r.waterfall).splitlines()
    row = next(line for line in lines if line.startswith("| Other Computing "))
    assert [c.strip() for c in row.strip("|").split("|")[1:4]] == ["0.006", "0.006", "+0.000"]
    assert row.rstrip(" |").endswith(" 0.0%") and "-0.0" not in row
    # figures right-aligned (their decimal points line up down a column), the step names left-aligned
    header = next(i for i, line in enumerate(lines) if line.startswith("| Step "))
    for line in lines[header + 2:]:
        if line.startswith("| "):
            step, *figures = line[1:-1].split("|")
            assert step == f" {step.strip():<{len(step) - 2}} ", line
            assert all(c == f" {c.strip():>{len(c) - 2}} " for c in figures), line


def test_category_cells_of_a_side_without_categories_are_said_to_be_no_measurement(
        samples: Path, capsys: pytest.CaptureFixture) -> None:
    """PARAM AlexNet (GPU) against a MindSpore run's CANN timeline given alone: the timeline brings no
    kernel_details.csv, so its computing (5914.58 us of Overlap Analysis "Computing" events, summed here from the
    raw file) has no category, and its row read Cube / Vector / Conv 0.000s(0) under the GPU's 0.006s(40), as if
    the NPU ran no convolution. A line under the table says so, whichever side the timeline is; no such line where
    both sides are split (pair 4, above) or neither is (two lone trace files, pair 8)."""
    from decimal import Decimal

    from cliutil import run_inproc

    timeline = samples / ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/"
                          "device_0/timeline/msprof_0_2_1.json")
    events = _raw_events(timeline)
    overlap = {e["pid"] for e in events if e.get("ph") == "M" and e.get("args", {}).get("name") == "Overlap Analysis"}
    computing = sum(Decimal(str(e["dur"])) for e in events
                    if e.get("pid") in overlap and e.get("ph") == "X" and e["name"] == "Computing")
    assert computing == Decimal("5914.58") and not (timeline.parent / "kernel_details.csv").exists()
    for base, comparison, side, row in ((samples / ALEXNET, timeline, "Comparison", 1),
                                        (timeline, samples / ALEXNET, "Base", 0)):
        code, out, _err = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), "-o", "-",
                                     "--enable_profiling_compare")
        assert code == 0
        table = json.loads(out)["console_summary"]
        cells = {h: table["rows"][row][i] for i, h in enumerate(table["headers"])}
        assert [cells[h] for h in ("Cube Time(Num)", "Vector Time(Num)", "Conv Time(Forward)(Num)")] == \
            ["0.000s(0)"] * 3
        assert cells["Other Time"] == cells["Computing Time"] == f"{float(computing) / 1e6:.3f}s" == "0.006s"
        assert table["notes"] == [
            f"{side} row: its computing time is not split into categories (see the validity checks), so its Cube "
            "Time(Num), Vector Time(Num) and Conv Time(Forward)(Num) 0.000s(0) are not measurements: its Computing "
            "Time is all Other Time."]
    files = [samples / "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json",
             samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"]
    code, out, _err = run_inproc(capsys, "-bp", str(files[0]), "-d", str(files[1]), "-o", "-",
                                 "--enable_profiling_compare")
    assert code == 0 and not [n for n in json.loads(out)["console_summary"]["notes"] if "categories" in n]
