"""Mutation audit of session 69's source changes (mut70): each test here fails on a hand mutant that no other test
caught (named in its docstring) and passes on the real code. Figures are read from the raw files or worked out by
hand, never from our output."""

from __future__ import annotations

import csv
import errno
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_rank_folder_edges import _failing

from msprof_compare import api, compare
from msprof_compare.errors import ProfileError, StepError
from msprof_compare.loaders import ranks

MS_FIXTURE = Path(__file__).resolve().parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"


def _ms_copy_at_step(dest: Path, step: str) -> Path:
    """The MindSpore-layout fixture (no ProfilerStep# marker; kernel_details.csv's Step ID column 50 on each of its
    20 rows, checked here) copied with that column set to ``step``."""
    shutil.copytree(MS_FIXTURE, dest)
    kernels = dest / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with kernels.open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "Step ID" and len(rows) == 21 and {r[0] for r in rows[1:]} == {"50"}
    with kernels.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([rows[0], *([step, *r[1:]] for r in rows[1:])])
    return dest


def test_two_sides_numbering_other_kernel_steps_are_named_each(tmp_path: Path) -> None:
    """Kills kw_both (``_kernel_step_words`` saying "both sides' kernel_details.csv number kernels by step (50)"
    where only the side count is two) and ks_gt0 (``kernel_steps`` dropping step 0): the fixture (step 50) against
    its copy numbering every kernel step 0. Neither has a marker, so the step count is blank on both sides and
    each side's own steps are named; step 0, a step like any other, is one of them, and a refusal of step 0 names
    it too."""
    zero = _ms_copy_at_step(tmp_path / "rank-0_20250101000000001_ascend_ms", "0")
    row = compare(str(MS_FIXTURE), str(zero), enable_profiling_compare=True).guards.set_index("Check").loc[
        "step count"]
    assert row["Detail"] == (
        "distinct ProfilerStep#N ids in the trace; blank: neither side has a ProfilerStep#N op; the base side's "
        "kernel_details.csv numbers kernels by step (50) and the comparison side's kernel_details.csv numbers "
        "kernels by step (0), but a step's range is that of its ProfilerStep# marker, so --base_step / "
        "--comparison_step do not apply to them")
    with pytest.raises(StepError) as info:
        compare(str(zero), str(zero), base_step=0, comparison_step=0, enable_profiling_compare=True)
    assert str(info.value) == (
        f"{zero / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: Invalid step id: 0: the profile has no "
        "ProfilerStep# markers, so no step can be chosen; its kernel_details.csv numbers kernels by step (0), but a "
        "step's range is that of its ProfilerStep# marker, so the step options do not apply to it (both sides: run "
        "without base_step / comparison_step)")


def test_a_side_without_device_time_has_no_one_sided_wrapper() -> None:
    """Kills sw_total (``one_sided_wrapper`` without its ``total > 0`` skip): a side whose operators hold 0 ms in
    all (ops that launched nothing) has no op holding 90% of its time. Read as one, its first row, ``[wrap]``,
    0 ms of 0 ms beside 11 framework ops on the other side, was a wrapper whose note divides by the side's total."""
    from msprof_compare.compare.summary_notes import ONE_SIDED_MIN_OPS, one_sided_wrapper

    names = ["[wrap]", "aten::mm", "autograd::engine::evaluate_function: MmBackward0", "DDP.forward"]
    found = one_sided_wrapper(names, (np.zeros(4), np.array([0, 5.0, 3.0, 2.0])),
                              (np.array([1.0, 1, 0, 0]), np.array([0, ONE_SIDED_MIN_OPS, 1, 1], float)))
    assert found is None


def test_a_quote_error_before_the_open_one_keeps_the_parsers_line(tmp_path: Path) -> None:
    """Kills at_oq_unexp (``_check_open_quote`` reading any csv error as a cut): a memory_record.csv whose row 1
    has a quoted name with text after its closing quote (``"AP"P``, which pandas reads on) and whose last row opens
    a quote it never closes, then ends in a line break. The first quote error is not the end of the data, so the
    file is not said to be cut: pandas' line, which names the row its open quote starts in, stays."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "memory_record.csv"
    f.write_bytes(b'Component,Timestamp(us),Total Reserved(MB)\n"AP"P,1,2.5\nAPP,2,"3.5\n')
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_memory_record(str(f), [])
    assert exc.value.message.startswith("malformed CSV: Error tokenizing data. C error: EOF inside string"), \
        exc.value.message
    assert "truncated" not in exc.value.message
    # the same cut without the damage before it is said to be cut: 2 of the 3 fields, the open one counted
    f.write_bytes(b'Component,Timestamp(us),Total Reserved(MB)\nAPP,1,2.5\nAPP,2,"3.5\n')
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_memory_record(str(f), [])
    assert exc.value.message == ("truncated: the last row has 3 of 3 fields and ends inside a quoted field (a quote "
                                 "opened and never closed)")


@pytest.mark.parametrize(("code", "words", "fix"), [
    (errno.ESTALE, "Stale file handle", "remount the network share it is on: its handle went stale"),
    (errno.ENOTCONN, "Transport endpoint is not connected",
     "remount the network share it is on: it is disconnected"),
])
def test_a_folder_of_ranks_on_a_lost_network_share_says_remount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 code: int, words: str, fix: str) -> None:
    """Kills p_stale / p_notconn (``paths._OS_ERROR_FIXES`` without its ESTALE or ENOTCONN entry): a folder of ranks
    whose listing fails as on a network share gone stale or disconnected (simulated) is bid remount it, not "clear
    what keeps it from being listed"."""
    base = tmp_path / "base"
    base.mkdir()
    _failing(monkeypatch, base, code, words)
    with pytest.raises(ProfileError) as err:
        api.ranks(base)
    assert (err.value.path, err.value.message, err.value.hint) == (str(base), f"cannot list directory: {words}", fix)


def test_a_node_folder_unlisted_by_an_io_error_gets_no_chmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kills r_perm1 (``ranks._refuse_empty_nodes`` reading every listing error as a refused permission): node2/
    beside node0/ and node1/ (msinsight's level-1 text ranks 0 and 1), its listing failing with EIO (simulated),
    is told to check the disk, not "make it readable (chmod u+r)", which cannot help."""
    from test_rank_nodes import TEXT1, _two_nodes

    if not (TEXT1 / "rank1_ascend_pt").is_dir():
        pytest.skip("shared samples absent")
    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    _failing(monkeypatch, job / "node2", errno.EIO, "Input/output error")
    with pytest.raises(ProfileError) as err:
        ranks.discover(str(job))
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(job / "node2"), "cannot list directory: Input/output error",
        "its name is node folder node0's but for its digits, so it may hold a rank's profile: check the disk or "
        "mount it is on, where the read failed, or move it out of the folder")


def test_a_db_rank_left_unchecked_names_its_side(tmp_path: Path) -> None:
    """Kills r_dbsided (``check_db_rank``'s warning without its ``sided`` wrap): the warning is added once the DB
    is loaded, after the loader gave its notes their side, so it names its own: msinsight's level-0 DB rank 0 with
    a second RANK_DEVICE_MAP row for rank 1, read as rank 0, says "(comparison side)" as the API logs it there."""
    from test_ranks import PT, edited_copy

    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.options import build_options

    src = PT / "db" / "level0" / "rank0_ascend_pt"
    if not src.is_dir():
        pytest.skip("shared samples absent")
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("ascend_pytorch_profiler_0.db"))
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    db = edited_copy(src / name, dest / name, "INSERT INTO RANK_DEVICE_MAP VALUES (1, 1)")
    p = load_profile(str(dest), build_options()[0])
    check_db_rank(0, p)
    assert p.warnings[-1].of_side("comparison side") == (
        f"{db}: RANK_DEVICE_MAP names ranks 0, 1, and META_DATA no distributed_args rank, so its rank is not checked "
        "against rank 0, which its folder's profiler_info_N.json names (comparison side)")


@pytest.mark.parametrize("streamed", [False, True])
def test_a_header_with_a_bom_or_a_doubled_quote_reads_to_its_own_line_end(samples: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           streamed: bool) -> None:
    """Kills h_bom (``_HEADER_TO_END`` without its optional UTF-8 BOM) and h_dq (a quoted name without its ``""``
    escape): msinsight level1 rank 0's kernel_details.csv (191 rows by Python's csv; its header unquoted, "Step Id"
    first) edited two ways. A BOM before a quoted first name holding a line break ("Step<LF>Id"): the name is read
    as no column, with its line, and every other column as in the unedited file, where without the BOM the header
    ended at that line break. An escaped quote in a quoted name ("Input ""Shapes", pandas' and csv's
    ``Input "Shapes``): no line, every other column as in the unedited file, where the header ran on."""
    import io

    from test_side_lines import KD

    from msprof_compare.loaders import ascend_text

    data = (samples / KD).read_bytes()
    whole = ascend_text.read_kernel_details(str(samples / KD), [])
    if streamed:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    assert data.startswith(b"Step Id,") and data.count(b",Input Shapes,") == 1
    f = tmp_path / "kernel_details.csv"
    for written, gone, lines in (
            (b'\xef\xbb\xbf"Step\nId"' + data[len(b"Step Id"):], "Step Id",
             [f"{f}: column name(s) 'Step\\nId' hold a line break (a damaged or hand-edited header?): read as no "
              "column"]),
            (data.replace(b",Input Shapes,", b',"Input ""Shapes",', 1), "Input Shapes", [])):
        f.write_bytes(written)
        rows = list(csv.reader(io.StringIO(written.decode("utf-8-sig"), newline="")))
        assert len(rows) - 1 == len(whole) == 191
        said: list[str] = []
        got = ascend_text.read_kernel_details(str(f), said)
        assert said == lines and len(got) == 191
        for c in whole.columns:
            if c != gone:
                assert got[c].equals(whole[c]), c


def test_the_one_sided_note_groups_a_count_in_thousands() -> None:
    """Kills sn_opsfmt (``one_sided_pieces`` writing the other side's op count without its thousands separator):
    pair 4's 91 ops are under a thousand, so no test saw it. A wrapper of 9 ms of the base side's 10 ms against
    1234 framework ops, worked by hand: "1,234", 90.0%."""
    from msprof_compare.compare.summary_notes import one_sided_pieces

    opening, item, _advice = one_sided_pieces(("base", "[wrap]", 9.0, 10.0, 1234))
    assert "against the comparison side's 1,234 framework top-level ops (aten::, autograd::)" in opening
    assert item == "base [wrap] 9.000 ms, 90.0% of the side's 10.000 ms"
