"""Mutation audit of session 70's source changes (mut71): each test here fails on a hand mutant that no other test
caught (named in its docstring) and passes on the real code. Figures are read from the raw files or worked out by
hand, never from our output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_overall_npu import BASE_ZERO

import msprof_compare
from msprof_compare.errors import ProfileError

DATA = Path(__file__).parent / "data"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank{}_ascend_pt"
CUT_HINT = "the file was probably cut short while copying or writing"


def test_one_export_at_two_steps_names_each_side(samples, tmp_path, caplog):
    """Kills a_ctxside_step (``RunContext.side`` saying "both sides" for one path whatever the steps) and mo_nomod
    (``_say_no_module_in_step`` given the base's side whichever side it is): one input
    compared at two steps is two sides, whose lines differ. The level-1 text export with a ProfilerStep#51 from
    40 ms into step 50 to 160 ms after its end (``test_trace_step_oddities``' edit): its 26 nn.Module events all
    start before 40 ms into step 50 (counted from the raw JSON there), so step 51 on the base side has no module,
    and the line says the base side; step 50 on the comparison side holds them all and says nothing."""
    import logging

    from test_trace_step_oddities import START_50, STEP_50, _moved, _npu

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    assert START_50 + 40_000_000 == 1736408883726740710
    dst, _ = _npu(tmp_path, src, [_moved(STEP_50, "ProfilerStep#51", "1736408883726740.710", 200000.0)])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        msprof_compare.compare(str(dst), str(dst), base_step=51, comparison_step=50, enable_operator_compare=True)
    said = [r.getMessage() for r in caplog.records if "nn.Module" in r.getMessage()]
    assert said == [f"{dst}: none of its 26 nn.Module events starts in step 51 (26 start before it), so it has "
                    "no module for the module sheets (ModuleCompare, ModuleCompareStatistic): a module counts "
                    "in the step its start lies in (base side)"]
    caplog.clear()  # the other way round (kills mo_nomod: the line naming the base's side whichever it is)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        msprof_compare.compare(str(dst), str(dst), base_step=50, comparison_step=51, enable_operator_compare=True)
    assert [r.getMessage() for r in caplog.records if "nn.Module" in r.getMessage()] == [
        said[0].replace("(base side)", "(comparison side)")]


def test_a_hard_link_is_one_input_a_symbolic_link_is_two(tmp_path):
    """Kills a_one_none (the base's errors always "base side") and a_entry_stat (``_same_entry`` following a last
    symbolic link, ``os.stat`` for ``os.lstat``): the timesformer excerpt cut to its first 1,000 bytes, against a
    hard link to it (one directory entry under two names, the same inode: one input on both sides) and against a
    symbolic link to it (a link is the side it was given as, refused without force; the base, read first, fails)."""
    cut = tmp_path / "cut.json"
    cut.write_bytes(TIMESFORMER.read_bytes()[:1000])
    hard, sym = tmp_path / "hard.json", tmp_path / "sym.json"
    hard.hardlink_to(cut)
    sym.symlink_to(cut)
    assert cut.stat().st_ino == hard.stat().st_ino == sym.stat().st_ino != sym.lstat().st_ino
    for other, side in ((hard, "both sides"), (sym, "base side")):
        with pytest.raises(ProfileError) as info:
            msprof_compare.compare(cut, other)
        assert info.value.side == side
        assert str(info.value).startswith(f"{cut}: truncated JSON (")
        assert str(info.value).endswith(f" ({side}: {CUT_HINT})")


def test_one_export_at_two_steps_is_two_sides_in_an_error(samples, tmp_path):
    """Kills a_one_step (one input under one path "both sides" whatever the steps): the level-1 text export of
    rank 1 with its kernel_details.csv cut to its first 5,000 bytes (inside row 8, whose 46 fields stop at the 8th,
    as ``test_side_named_errors`` counts them) compared with itself at steps 50 and 51: two sides, the base read
    first, so its error is the base side's."""
    bad = tmp_path / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(1), bad)
    kd = bad / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes()[:5000])
    with pytest.raises(ProfileError) as info:
        msprof_compare.compare(bad, bad, base_step=50, comparison_step=51)
    assert str(info.value) == f"{kd}: truncated: the last row has 8 of 46 fields and no line end (base side)"
    with pytest.raises(ProfileError) as info:
        msprof_compare.compare(bad, bad, base_step=50, comparison_step=50)
    assert str(info.value) == f"{kd}: truncated: the last row has 8 of 46 fields and no line end (both sides)"


def test_a_comparison_error_of_a_parallel_load_names_the_comparison_side(tmp_path, monkeypatch):
    """Kills p_par_comp (a parallel load's comparison error raised under the base's side): the sides loaded in two
    processes (forced, every size allowed), the comparison a symbolic link (refused without force, in the parent
    process, while the base loads in the child): its error names the comparison side, as in a load in turn."""
    from msprof_compare.loaders import pair

    base = tmp_path / "base.pt.trace.json"
    shutil.copyfile(TIMESFORMER, base)
    link = tmp_path / "link.pt.trace.json"
    link.symlink_to(TIMESFORMER)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    texts = []
    for mode in ("1", "0"):
        monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", mode)
        assert pair.parallel_wanted(str(base), str(link)) == (mode == "1")
        with pytest.raises(ProfileError) as info:
            msprof_compare.compare(base, link, enable_profiling_compare=True)
        texts.append(str(info.value))
    assert texts == [f"{link}: is a symbolic link; refusing to follow it (comparison side: add force=True to accept "
                     "it)"] * 2


def test_transparent_op_given_twice_takes_both_names_without_a_repetition_warning(capsys, tmp_path):
    """Kills c_multiple (``_repeated_values`` reading --transparent_op as an option of one value): a flag meant to
    be repeated was warned of as "given 2 times (...): the last value, ..., is used", which is untrue, as both are
    used: the error names both names. The project's AlexNet trace against itself, two names no op has."""
    from cliutil import run_inproc

    trace = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(trace), "--transparent_op", "aten::nope_a",
                              "--transparent_op", "aten::nope_b", "-o", str(tmp_path / "out"))
    assert code == 1 and "is given 2 times" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(
        "error: --transparent_op 'aten::nope_a' and --transparent_op 'aten::nope_b' name no operator of "
        "either side ("), err


def test_a_copy_listing_one_more_device_is_two_profiles(tmp_path, caplog):
    """Kills sv_len (``_same_value`` comparing two lists item by item without their lengths, ``map`` stopping at
    the shorter): a copy of the timesformer excerpt whose deviceProperties lists a second GPU (its one H100's entry
    again, id 1), every event equal, was called a copy ("every difference will be zero"); it is two recordings."""
    import json
    import logging

    doc = json.loads(TIMESFORMER.read_text())
    assert [d["id"] for d in doc["deviceProperties"]] == [0]
    doc["deviceProperties"].append({**doc["deviceProperties"][0], "id": 1})
    copy = tmp_path / "two_gpus.pt.trace.json"
    copy.write_text(json.dumps(doc))
    for base, comparison in ((TIMESFORMER, copy), (copy, TIMESFORMER)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = msprof_compare.compare(base, comparison, enable_profiling_compare=True)
        assert not [m for m in caplog.messages if "same events" in m], caplog.messages
        assert "one profile on both sides" not in res.guards["Check"].tolist()


def test_nan_beside_a_number_is_two_values():
    """Kills sv_nan_b (``_same_value`` taking a float for NaN's twin where only the first is NaN): NaN read on the
    base side beside 1.5 on the other (a communication.json figure written as NaN in one copy) is two values, either
    way round; two NaN are one (the unit rule ``test_identical_inputs`` pins)."""
    from msprof_compare.api import _same_value

    nan = float("nan")
    assert not _same_value(nan, 1.5) and not _same_value(1.5, nan)
    assert not _same_value({"Transit Size(MB)": [nan]}, {"Transit Size(MB)": [1.5]})
    assert _same_value(nan, float("nan"))


def test_a_recording_of_another_input_shape_is_two_profiles(tmp_path, caplog):
    """Kills se_moved (``_same_events`` comparing what the loader read beside the tables in any order even where
    every table is in its order): a copy of the timesformer excerpt whose metadata's video_size is [224, 224, 3,
    128] for [128, 3, 224, 224] (another input shape, its events in the same order) is two profiles; names in
    another order are one only beside tables written again in another order."""
    import json
    import logging

    doc = json.loads(TIMESFORMER.read_text())
    shape = doc["metadata"]["current_task"]["shape"]
    assert shape["video_size"] == [128, 3, 224, 224]
    shape["video_size"] = [224, 224, 3, 128]
    other = tmp_path / "other_shape.pt.trace.json"
    other.write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = msprof_compare.compare(TIMESFORMER, other, enable_profiling_compare=True)
    assert not [m for m in caplog.messages if "same events" in m], caplog.messages
    assert "one profile on both sides" not in res.guards["Check"].tolist()


def test_copies_whose_loads_warn_are_still_said(tmp_path, caplog):
    """Kills se_warn (the load warnings among the fields ``_same_events`` compares): two copies of the NPU fixture
    whose kernel_details.csv holds a NUL byte in a row (the first kernel's name, edited here) each warn of it
    under their own path, so their warnings differ while every event is the same: still copies, said once."""
    import logging

    copies = []
    for name in ("a", "b"):
        dst = tmp_path / name / "rank0_ascend_pt"
        shutil.copytree(DATA / "npu" / "rank0_ascend_pt", dst)
        kd = dst / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
        lines = kd.read_bytes().split(b"\n")
        cells = lines[1].split(b",")
        cells[4] = cells[4][:1] + b"\0" + cells[4][1:]  # the Name column (5th in the header)
        assert lines[0].split(b",")[4] == b"Name"
        lines[1] = b",".join(cells)
        kd.write_bytes(b"\n".join(lines))
        copies.append(dst)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = msprof_compare.compare(*copies, enable_profiling_compare=True)
    nul = [m for m in caplog.messages if "NUL byte" in m]
    assert len(nul) == 2 and all("1 NUL byte(s) in the rows" in m for m in nul), caplog.messages
    assert [m for m in caplog.messages if "same events" in m] == [
        "Base and comparison hold the same events (copies of one profile?): every difference will be zero."]
    assert "one profile on both sides" in res.guards["Check"].tolist()


def test_a_name_given_twice_is_one_name():
    """Kills o_dedup (``parse_transparent_op`` keeping a repeated name): the name is taken once, so a refusal names
    it once, not "transparent_op='aten::nope' and transparent_op='aten::nope'". The project's AlexNet trace
    against itself."""
    trace = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    with pytest.raises(ProfileError) as info:
        msprof_compare.compare(trace, trace, transparent_op=["aten::nope", "aten::nope"], enable_operator_compare=True)
    assert str(info.value).startswith("transparent_op='aten::nope' names no operator of either side (")


def test_transparent_op_takes_a_tuple_and_refuses_a_list_holding_a_number():
    """Kills o_type (a list's items not checked to be text) and o_tuple (a tuple of names refused): the docstring's
    "one name or a list / tuple of names" from compare(). A list holding 3 is a usage error naming the value (the
    mutant passed 3 on to the blank checks, which fail on a number); a tuple of two names (no op has) reaches the
    refusal that names both."""
    from msprof_compare.errors import UsageError

    with pytest.raises(UsageError) as info:
        msprof_compare.compare("a", "b", transparent_op=["[param|cuda]", 3])
    assert str(info.value) == ("Invalid param, transparent_op must be an op name or a list of op names (got "
                               "['[param|cuda]', 3])")
    trace = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    with pytest.raises(ProfileError) as err:
        msprof_compare.compare(trace, trace, transparent_op=("aten::nope_a", "aten::nope_b"),
                               enable_operator_compare=True)
    assert str(err.value).startswith("transparent_op='aten::nope_a' and transparent_op='aten::nope_b' name no "
                                     "operator of either side (")


@pytest.mark.parametrize("whole", [True, False])
def test_a_stray_quote_over_bare_cr_lines_keeps_the_parsers_row(samples, tmp_path, monkeypatch, whole):
    """Kills at_stray_nl (``_stray_quote`` seeing an open field run over whole lines by LF alone): NPU pair 1's
    level1 operator_memory.csv (30,582 bytes, no quote in it, CRLF line ends) written with bare CR line ends (old
    Mac's, which pandas reads as line ends) and without its last one, a quote written before the second field of
    line 5. The field then runs over every later line to the end of the file: no cut, so pandas' line naming row 5
    stays, where the mutant said "truncated: the last row has 2 of N fields and no line end"."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    raw = (samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
           / "operator_memory.csv").read_bytes()
    assert b'"' not in raw and raw.endswith(b"\r\n") and len(raw) < 65536
    lines = raw.removesuffix(b"\r\n").split(b"\r\n")
    lines[5] = lines[5].replace(b",", b',"', 1)
    f = tmp_path / "operator_memory.csv"
    f.write_bytes(b"\r".join(lines))
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_operator_memory(str(f), [])
    assert exc.value.message.startswith("malformed CSV: Error tokenizing data. C error: EOF inside string starting "
                                        "at row 5"), exc.value.message


def test_a_cut_last_row_with_a_closed_multiline_field_is_truncated(tmp_path):
    """Kills at_stray_open2 (``_stray_quote`` without its "the field is still open" test): a memory_record.csv
    whose last row, with no line end, has 2 of the header's 3 fields, its second a quoted field holding a line
    break and closed ("2<LF>3"). Nothing is left open, so no stray quote explains it: the file is cut, as said;
    the mutant took the line break for a stray quote's and read the file on without a word."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "memory_record.csv"
    f.write_bytes(b'Component,Timestamp(us),Total Reserved(MB)\nAPP,1,2.5\nAPP,"2\n3"')
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_memory_record(str(f), [])
    assert str(exc.value) == f"{f}: truncated: the last row has 2 of 3 fields and no line end"


def test_a_db_export_of_communication_ops_without_hccl_tasks_says_its_wait_is_no_reading(samples, tmp_path):
    """Kills bd_db_notasks (the DB breakdown's "no HCCL task at all" reason dropped): the level-0 DB export with
    its COMMUNICATION_TASK_INFO emptied (SQL on a copy) keeps its communication ops, so its Wait Time of 0.000s
    beside the level-1 DB's is no reading, for want of any task, not of typed ones; the line says which."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from dbutil import edited_copy, sql

    src = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
    l1 = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    db = src / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (ops,), = sql(db, "SELECT count(*) FROM COMMUNICATION_OP")
    assert ops > 0
    copy = tmp_path / "no_tasks" / "rank0_ascend_pt"
    shutil.copytree(src, copy)
    edited_copy(db, copy / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                "DELETE FROM COMMUNICATION_TASK_INFO")
    res = msprof_compare.compare(l1, copy, enable_profiling_compare=True)
    assert [x for x in res.summary["notes"] if "Wait Time" in x] == [
        "Comparison row: its Wait Time 0.000s is not a measurement: its database holds its communication ops but "
        "no HCCL task, so none reads as Notify_Wait."]


def test_a_text_peak_the_app_rows_do_not_raise_gets_no_app_words(samples, tmp_path):
    """Kills ms_eq (the APP words given where the peak without APP is the peak): the level-1 text export with its
    memory_record.csv APP rows capped at the largest other reading (csv here), beside the level-1 DB export: the
    APP rows no longer set the peak, so the memory line says nothing of them."""
    import csv

    from msprof_compare.report.summary_console import memory_line

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    db = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    text = tmp_path / "capped" / "rank0_ascend_pt"
    shutil.copytree(src, text)
    path = text / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    comp, col = rows[0].index("Component"), rows[0].index("Total Reserved(MB)")
    others = max(float(r[col]) for r in rows[1:] if r[col].strip() and r[comp].strip() != "APP")
    assert max(float(r[col]) for r in rows[1:] if r[col].strip()) > others  # APP sets the peak as recorded
    for r in rows[1:]:
        if r[comp].strip() == "APP" and r[col].strip() and float(r[col]) > others:
            r[col] = repr(others)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    line = memory_line(msprof_compare.compare(text, db, enable_memory_compare=True).frames["memory"])
    assert line.startswith(f"Peak reserved memory (Mem Usage) {others / 1024:.2f} GB") and "APP" not in line, line


def test_a_blank_line_before_a_long_row_is_no_data_row():
    """Kills at_lr_blank (``_long_rows`` numbering blank lines as data rows): a blank line between the header and
    a row of 4 fields beside a header of 3 (pandas skips it), by hand: one long row, data row 1."""
    from msprof_compare.loaders.ascend_text import _long_rows

    assert _long_rows(b"a,b,c\n\n1,2,3,4\n", 1, 3) == (1, 1)
    assert _long_rows(b"a,b,c\r\n\r\n1,2,3\r\n\r\n4,5,6,7\r\n", 2, 3) == (1, 2)


def test_a_bare_cr_inside_a_quoted_header_name_is_the_headers_line(tmp_path):
    """Kills at_le_cr (the header's lines split at LF alone): ``test_small_leftovers``' edit of the NPU fixture's
    kernel_details.csv (a stray quote before data row 3's first field, joining lines into one row, N counted with
    Python's csv) with its "Context ID" column written as a quoted name holding a bare CR ("Context<CR>ID"), a
    line end as pandas reads one: that line is the header's, so N line(s) are said, not N + 1."""
    import csv
    import io

    from msprof_compare.loaders.ascend_text import read_kernel_details

    src = DATA / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = src.read_text(encoding="utf-8").split("\n")
    lines[3] = '"' + lines[3]
    rows = list(csv.reader(io.StringIO("\n".join(lines), newline="")))
    inside = len([x for x in lines if x]) - len(rows)
    assert inside >= 1 and lines[0].count(",Context ID,") == 1
    lines[0] = lines[0].replace(",Context ID,", ',"Context\rID",')
    path = tmp_path / "kernel_details.csv"
    path.write_bytes("\n".join(lines).encode())
    assert len(list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))) == len(rows)
    warnings: list[str] = []
    read_kernel_details(str(path), warnings)
    assert [w for w in warnings if "earlier row" in w] == [
        f"{path}: {inside} line(s) read as part of an earlier row (a line break inside a quoted field: a quote left "
        "open?)"]


def test_the_cube_cell_holds_mc2_time_in_the_table_and_in_the_hidden_split_note():
    """Kills ov_cube_mc2 (``_cube_cell`` without MC2's time, which the table's Cube cell held before session 70
    moved it into a helper; no sample has an MC2 kernel): Matmul (Cube) 1.0 ms in 2 kernels, other cube 0.4 ms in 1,
    an MC2 kernel of 2.5 ms: Cube Time(Num) 0.004s(3) by hand (3.9 ms; MC2 counts no kernel here, as before). The
    same cell in the note under the table where the other side has no PMU figures (its Cube column hidden)."""
    from msprof_compare.compare.breakdown import MC2, Breakdown
    from msprof_compare.compare.overall import summary_table

    def side(hide: bool) -> Breakdown:
        bd = Breakdown("NPU")
        bd.e2e_ns = 10_000_000
        bd.buckets["matmul_cube"].add(1_000_000, 2)
        bd.buckets["other_cube"].add(400_000, 1)
        bd.mc2["MatmulAllReduce"] = MC2(ns=2_500_000, computing_ns=2_000_000, communication_ns=500_000, count=1)
        bd.hide_op_details = hide
        return bd

    table = summary_table(side(False), side(False))
    col = table["headers"].index("Cube Time(Num)")
    assert [row[col].strip() for row in table["rows"]] == ["0.004s(3)", "0.004s(3)"]
    hidden = side(True)
    hidden.buckets.clear()
    hidden.buckets.update(Breakdown("NPU").buckets)
    hidden.mc2.clear()
    notes = summary_table(side(False), hidden)["notes"]
    assert [n for n in notes if "Cube Time(Num)" in n][0].startswith(
        "Base row: its Cube Time(Num) 0.004s(3) and Vector Time(Num) 0.000s(0) have no column here")


def test_the_gate_names_only_the_nested_contributors_it_lists():
    """Kills g_nested (the gate's line on contributors outside the module sheets keeping every nested contributor,
    not only those it lists): ``test_overall_db``'s pair (the level-1 and level-2 DB excerpts, --max_kernel_num 4,
    where Conv2DBackpropInput runs inside aten::convolution_backward), the gate listing every contributor but
    Conv2DBackpropInput (one that did not grow): the line names no op it does not list."""
    from msprof_compare.compare.gate import _outside_line

    l1, l2 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db", DATA / "db" / "l2" / "ascend_pytorch_profiler_0.db"
    res = msprof_compare.compare(l1, l2, enable_operator_compare=True, max_kernel_num=4)
    contrib = res.frames["contributors"]
    assert "Conv2DBackpropInput" in contrib["Name"].tolist()
    assert "Conv2DBackpropInput" in _outside_line(contrib, contrib)  # listed: named, as inside its parent
    listed = contrib[contrib["Name"] != "Conv2DBackpropInput"]
    assert "Conv2DBackpropInput" not in _outside_line(contrib, listed)


def test_the_zero_wait_note_names_step_0_as_a_step():
    """Kills ov_step (``table_notes`` taking step 0 for "no step"): step 0 is a step (the profiler numbers from 0),
    so a text export's zero Wait Time note given step 0 says the figure is the whole profile's and the
    CommunicationCompare rows step 0's, as for any other step; hand-made breakdowns with 2.5 ms of Notify_Wait on
    planes the least-waiting pick left out."""
    from msprof_compare.compare.breakdown import Breakdown
    from msprof_compare.compare.overall import table_notes

    def side() -> Breakdown:
        bd = Breakdown("NPU")
        bd.e2e_ns, bd.notify_wait_ns = 10_000_000, 2_500_000
        bd.groups = {"Group 1 Communication": {"wait": 0, "transmit": 1_000_000}}
        return bd

    notes = [n for n in table_notes(side(), side(), [""], (0, -1)) if "Wait Time" in n]
    assert notes == [
        f"Base row: its Wait Time {BASE_ZERO} is that of the HCCL plane that waits least in each communication group, "
        "as the original measures a text export, here a plane with no Notify_Wait; its planes hold 2.500 ms of "
        "Notify_Wait over the whole profile, which its Wait Time covers too (CommunicationCompare's Notify_Wait rows "
        "hold step 0's alone).",
        "Comparison row: its Wait Time 0.000s is that of the HCCL plane that waits least in each communication "
        "group, as the original measures a text export, here a plane with no Notify_Wait; its planes hold 2.500 ms "
        "of Notify_Wait in all (CommunicationCompare's Notify_Wait rows)."]


def test_the_zero_wait_note_names_each_sides_own_step(samples, tmp_path):
    """Kills ov_steps_swap (the sides' steps handed to the notes in the wrong order): ``test_small_leftovers``'
    level-1 export cut in two steps at zero_grad, its 112 Notify_Wait tasks (112.541 ms, summed there from the raw
    trace) all in step 51, compared at steps 50 and 51: each row's note names its own side's step."""
    from test_small_leftovers import LEVEL1, _text_steps_split, _wait_note

    export = tmp_path / "split" / "rank0_ascend_pt"
    shutil.copytree(samples / LEVEL1, export)
    _text_steps_split(export)
    res = msprof_compare.compare(export, export, base_step=50, comparison_step=51, enable_profiling_compare=True)
    assert [n for n in res.summary["notes"] if "its Wait Time" in n] == [
        _wait_note("Base", "112.541", 50, sheet=False), _wait_note("Comparison", "112.541", 51, sheet=False)]


def test_the_hidden_split_note_needs_a_split_side_and_both_e2e():
    """Kills ov_hidden_cat (the note given for a side with no categorised time) and ov_hidden_e2e (given where the
    hidden side has no E2E, so OverallMetrics, which the note points to, is not written): hand-made breakdowns, the
    comparison without PMU figures (its Cube / Vector columns hidden, as the original hides them). A base split into
    Matmul (Cube) 1.0 ms in 2 and vector 0.5 ms in 3 gets the note, 0.001s(2) and 0.001s(3) by hand (0.5 ms rounds
    half up); one whose computing has no category, or beside a side without E2E, gets none."""
    from msprof_compare.compare.breakdown import Breakdown
    from msprof_compare.compare.overall import table_notes

    def base(split: bool) -> Breakdown:
        bd = Breakdown("NPU")
        bd.e2e_ns = 10_000_000
        if split:
            bd.buckets["matmul_cube"].add(1_000_000, 2)
            bd.buckets["vector_trans"].add(500_000, 3)
        return bd

    def hidden(e2e: int) -> Breakdown:
        bd = Breakdown("NPU")
        bd.e2e_ns, bd.hide_op_details = e2e, True
        return bd

    def said(b: Breakdown, c: Breakdown) -> list[str]:
        return [n for n in table_notes(b, c, [""]) if "have no column here" in n]

    assert [n[:n.index(" have no column")] for n in said(base(True), hidden(10_000_000))] == [
        "Base row: its Cube Time(Num) 0.001s(2) and Vector Time(Num) 0.001s(3)"]
    assert said(base(False), hidden(10_000_000)) == []
    assert said(base(True), hidden(0)) == []
