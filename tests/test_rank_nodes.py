"""Multi-node jobs: a folder whose subfolders are folders of ranks (``job/node0/rank0_ascend_pt ...
job/node1/rank1_ascend_pt``, or ``node*/`` of Kineto traces) is the whole job, compared rank by rank, ranks being
numbered across nodes; a rank two node folders hold, and a node folder holding no rank, are errors naming them.
Layouts are built in tmp from the real samples (msinsight's two 2-rank text exports, hta's two sampled ranks)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from msprof_compare import api
from msprof_compare.errors import ProfileError
from tests.cliutil import error_lines, run_inproc

REPO = Path(__file__).resolve().parents[1]
PT = REPO.parent / "shared" / "samples" / "msinsight" / "test" / "data" / "pytorch"
TEXT = PT / "text"
TEXT0, TEXT1 = TEXT / "level0", TEXT / "level1"
#: hta's two sampled ranks of a 128-rank job (distributedInfo: rank 0 and 1, world_size 128, in the head)
KINETO = REPO.parent / "shared" / "samples" / "hta" / "tests" / "data" / "trace_filter"

pytestmark = pytest.mark.skipif(not (TEXT1 / "rank1_ascend_pt").is_dir() or not KINETO.is_dir(),
                                reason="shared samples absent")


def _two_nodes(src: Path, job: Path) -> Path:
    """``src``'s rank 0 and rank 1 as two nodes of one job: job/node0/rank0_ascend_pt, job/node1/rank1_ascend_pt
    (copies: a linked input is refused without --force)."""
    for rank in (0, 1):
        shutil.copytree(src / f"rank{rank}_ascend_pt", job / f"node{rank}" / f"rank{rank}_ascend_pt")
    return job


def test_npu_nodes_compare_rank_by_rank_as_the_flat_job(tmp_path, capsys):
    """Each node folder's ranks are the job's: the figures are those of the same ranks side by side (README's
    example of msinsight's level0 -> level1 run, E2E 116.251 -> 136.581 ms and 100.602 -> 131.913 ms), where the
    CLI said "not collected ... (it holds profiling directories a level down: node0/rank0_ascend_pt, ...; or a
    folder of ranks on both sides, such as node0)", one node of the job."""
    base, comp = _two_nodes(TEXT0, tmp_path / "base"), _two_nodes(TEXT1, tmp_path / "comp")
    assert api.ranks(base) == {0: str(base / "node0" / "rank0_ascend_pt"), 1: str(base / "node1" / "rank1_ascend_pt")}
    out = tmp_path / "out"
    code, stdout, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out))
    assert code == 0, err
    lines = [re.sub(r", \S+\.xlsx$", "", line) for line in stdout.splitlines() if line.startswith("rank ")]
    assert lines == ["rank 0: E2E 116.251 ms -> 136.581 ms (+20.330 ms, +17.49%)",
                     "rank 1: E2E 100.602 ms -> 131.913 ms (+31.310 ms, +31.12%)"]
    assert sorted(re.sub(r"_[0-9]{14}", "", p.name) for p in out.iterdir()) == [
        "performance_comparison_result_rank0.xlsx", "performance_comparison_result_rank1.xlsx",
        "performance_comparison_result_ranks.xlsx"]
    for rank, result in api.compare_ranks(base, comp, enable_profiling_compare=True):
        flat = api.compare(TEXT0 / f"rank{rank}_ascend_pt", TEXT1 / f"rank{rank}_ascend_pt",
                           enable_profiling_compare=True)
        assert result.frames["overall"].equals(flat.frames["overall"]) and flat.frames["overall"]["ns"].any()


def _ranked_copy(src: Path, dst: Path, rank: int) -> None:
    """hta's sampled trace ``src`` as rank ``rank`` of its 128-rank job wrote it: its distributedInfo's rank alone
    changed, every event as recorded."""
    body = gzip.decompress(src.read_bytes())
    m = re.search(rb'"distributedInfo": \{"backend": "nccl", "rank": ([0-9]+),', body)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(gzip.compress(body[:m.start(1)] + str(rank).encode() + body[m.end(1):], compresslevel=1))


def test_kineto_nodes_of_traces(tmp_path):
    """node0/ holding ranks 0 and 1's traces, node1/ ranks 64 and 65's (copies of them, as a 128-rank job's second
    node of 64 GPUs numbers its ranks): four ranks, each compared as its trace alone is; it was refused ("node0:
    holds 2 traces: a rank's folder holds one")."""
    job = tmp_path / "job"
    for node, ranks in ((0, (0, 1)), (1, (64, 65))):
        for k, rank in enumerate(ranks):
            _ranked_copy(KINETO / f"sampled_rank-{k}.json.gz", job / f"node{node}" / f"rank{rank}.json.gz", rank)
    found = api.ranks(job)
    assert found == {0: str(job / "node0" / "rank0.json.gz"), 1: str(job / "node0" / "rank1.json.gz"),
                     64: str(job / "node1" / "rank64.json.gz"), 65: str(job / "node1" / "rank65.json.gz")}
    got = {rank: result.frames["overall"] for rank, result in
           api.compare_ranks(job, job, rank_list=[1, 64], enable_profiling_compare=True)}
    assert list(got) == [1, 64]
    for rank, k in ((1, 1), (64, 0)):
        alone = api.compare(KINETO / f"sampled_rank-{k}.json.gz", KINETO / f"sampled_rank-{k}.json.gz",
                            enable_profiling_compare=True).frames["overall"]
        assert got[rank].equals(alone) and alone["ns"].any()


def _collection_end(rank_dir: Path) -> int:
    (info,) = rank_dir.glob("profiler_info_*.json")
    return int(json.loads(info.read_text())["end_info"]["collectionTimeEnd"])


def test_a_rank_two_nodes_hold_is_named(tmp_path, capsys):
    """msinsight's text/ holds three runs (level0/ to level2/), each a folder of ranks: read as nodes they hold rank 0
    three times and rank 1 twice, an error naming each copy (in the order the profiler recorded them) and the
    folders, exit 1, nothing written. They are all the folder holds, so the hint bids pass one of them: it bade
    move the others out too, which left a folder around one folder of ranks, refused in turn."""
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(TEXT), "-d", str(TEXT), "-o", str(out))
    assert code == 1
    zeros = sorted(TEXT.glob("level*/rank0_ascend_pt"), key=_collection_end)
    ones = sorted(TEXT.glob("level*/rank1_ascend_pt"), key=_collection_end)
    assert (len(zeros), len(ones)) == (3, 2)
    names = [", ".join(str(p.relative_to(TEXT)) for p in group) for group in (zeros, ones)]
    assert error_lines(err) == [
        f"error: {TEXT}: holds rank 0 3 times, in recorded order: {names[0]}; rank 1 twice: {names[1]} (both sides: "
        f"a multi-node "
        "job's node folders hold different ranks, rank ids being numbered across nodes; level0, level1, level2 hold "
        "the same ranks: pass one of them to each side)"]
    assert not out.exists()


def test_a_copied_node_beside_the_job_s_nodes_is_bid_moved_out(tmp_path, capsys):
    """node1_old/ holding a copy of node1/'s rank 1 beside node0/ and node1/: the rank held twice is refused naming
    both folders, and moving the copy out leaves a job of two nodes, so the hint bids that first (and it compares):
    it began 'pass one of them to each side', which left node0's rank 0 out."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    shutil.copytree(TEXT0 / "rank1_ascend_pt", job / "node1_old" / "rank1_ascend_pt")
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err)[0].endswith(
        "(both sides: a multi-node job's node folders hold different ranks, rank ids being numbered across nodes; "
        "node1, "
        "node1_old hold the same ranks: move all but one of them out of the folder, or pass one of them to each "
        "side to compare its ranks alone)")
    shutil.move(job / "node1_old", tmp_path / "node1_old")
    assert sorted(api.ranks(job)) == [0, 1]


def test_rank_inputs_beside_node_folders(tmp_path):
    """A rank in the folder itself and a node folder beside it are one job (ranks unique); a folder of ranks
    beside a subfolder holding copies of them (an old run kept inside) holds each rank twice: refused naming both,
    where the subfolder was passed over without a word."""
    job = tmp_path / "job"
    shutil.copytree(TEXT1 / "rank0_ascend_pt", job / "rank0_ascend_pt")
    shutil.copytree(TEXT1 / "rank1_ascend_pt", job / "node1" / "rank1_ascend_pt")
    assert api.ranks(job) == {0: str(job / "rank0_ascend_pt"), 1: str(job / "node1" / "rank1_ascend_pt")}
    shutil.copytree(TEXT0 / "rank1_ascend_pt", job / "rank1_ascend_pt")
    end = {p: _collection_end(job / p) for p in ("rank1_ascend_pt", os.path.join("node1", "rank1_ascend_pt"))}
    twice = ", ".join(sorted(end, key=end.get))
    with pytest.raises(ProfileError) as info:
        api.ranks(job)
    assert str(info.value) == (
        f"{job}: holds rank 1 twice, in recorded order: {twice} (keep one profile per rank in the folder; a "
        "profiler schedule's cycles compare cycle by cycle where each rank's are one worker's, named as the "
        "profilers name them: <worker>_<timestamp>_ascend_pt, <worker>.<ms>.pt.trace.json)")


def test_a_node_folder_holding_no_rank_is_named(tmp_path, capsys):
    """node1/ beside node0/ holding no rank's profile (copied in part: empty, or its log alone) is refused naming it,
    exit 1: its ranks were left out of the job without a word. A side folder named otherwise (logs/) is none of
    the job's. node0/ is then the folder's one folder of ranks: the hint names it to pass, where it bade move
    node1/ out, which left a folder around one folder of ranks, refused in turn."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "logs").mkdir()
    (job / "logs" / "train.log").write_text("step 50\n")
    assert sorted(api.ranks(job)) == [0, 1]
    shutil.rmtree(job / "node1" / "rank1_ascend_pt")
    (job / "node1" / "train.log").write_text("step 50\n")
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(out))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'node1'}: holds no rank's profile, where node0 beside it holds ranks (a multi-node job's "
        f"node folders each hold their ranks) (both sides: copy the node's rank folders into it, or pass "
        f"{job / 'node0'} to "
        "compare its ranks alone)"]
    assert not out.exists()


def test_a_run_folder_beside_a_log_only_run_names_the_folder_to_pass(tmp_path, capsys):
    """job/run1/ holding ranks 0 and 1 beside job/run2/ holding its log alone (a folder of runs, one profiled): the
    refusal names run2/ and the folder to pass, run1/, as the loader's hint names it without run2/; following the
    hint compares (exit 0). Moving run2/ out, as the hint said, was refused in turn by the loader ("pass ... such
    as run1")."""
    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", job / "run1" / f"rank{rank}_ascend_pt")
    (job / "run2").mkdir()
    (job / "run2" / "train.log").write_text("step 50\n")
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'run2'}: holds no rank's profile, where run1 beside it holds ranks (a multi-node job's node "
        f"folders each hold their ranks) (both sides: copy the node's rank folders into it, or pass {job / 'run1'} "
        f"to compare "
        "its ranks alone)"]
    out = tmp_path / "out"
    code, stdout, err = run_inproc(capsys, "-bp", str(job / "run1"), "-d", str(job / "run1"), "-o", str(out))
    assert code == 0, err
    assert [line.split(":")[0] for line in stdout.splitlines() if line.startswith("rank ")] == ["rank 0", "rank 1"]


def test_an_unreadable_rank_folder_beside_one_folder_of_ranks_names_that_folder(tmp_path, capsys, monkeypatch):
    """job/rank5/ that cannot be listed beside job/run1/ of ranks 0 and 1: refused naming rank5/ (its name says a
    rank), the hint naming run1/ to pass, where it bade move rank5/ out, which left a folder around one folder of
    ranks, refused in turn by the loader ("... such as run1"). Readable and empty, rank5/ leaves that refusal."""
    from test_ranks import _refusing

    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", job / "run1" / f"rank{rank}_ascend_pt")
    (job / "rank5").mkdir()
    with monkeypatch.context() as m:
        _refusing(m, job / "rank5")
        code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'rank5'}: cannot list directory: Permission denied (both sides: its name says rank 5, so it "
        f"may hold a "
        f"rank's profile: make it readable (chmod u+r), or pass {job / 'run1'} to compare its ranks alone)"]
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1 and error_lines(err)[0].endswith("or a folder of ranks on both sides, such as run1, to compare "
                                                      "rank by rank)")


@pytest.mark.parametrize("blocked", ["unreadable", "unsearchable"])
def test_an_unlisted_run_beside_one_folder_of_ranks_names_that_folder(tmp_path, capsys, monkeypatch, blocked):
    """job/run2/ (its log alone) that cannot be listed, or listed but not searched, beside job/run1/ of ranks 0 and
    1: refused naming run2/ and why it may hold ranks, the hint naming run1/ to pass, as for the readable run2/
    and the unreadable rank5/ beside run1/. It said "cannot list directory: Permission denied" and no more."""
    from test_ranks import _refusing, _unsearchable

    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", job / "run1" / f"rank{rank}_ascend_pt")
    (job / "run2").mkdir()
    (job / "run2" / "train.log").write_text("step 50\n")
    said, make = (("cannot list directory", "readable (chmod u+r)") if blocked == "unreadable"
                  else ("cannot search directory", "searchable (chmod u+x)"))
    with monkeypatch.context() as m:
        (_refusing if blocked == "unreadable" else _unsearchable)(m, job / "run2")
        code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'run2'}: {said}: Permission denied (both sides: its name is node folder run1's but for its "
        f"digits, so "
        f"it may hold a rank's profile: make it {make}, or pass {job / 'run1'} to compare its ranks alone)"]
    assert not (tmp_path / "out").exists()


def test_an_unreadable_node_beside_two_nodes_is_bid_made_readable_or_moved_out(tmp_path, capsys, monkeypatch):
    """node2/ that cannot be listed beside node0/ and node1/: the folder is a job of nodes without it, so the hint
    bids make it readable or move it out, naming the first node folder its name matches (it gave no hint)."""
    from test_ranks import _refusing

    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    with monkeypatch.context() as m:
        _refusing(m, job / "node2")
        code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [_unreadable_node2(job)]


def _unreadable_node2(job: Path) -> str:
    """The refusal of job/node2 that cannot be listed beside node0/ and node1/, whichever check meets it first."""
    return (f"error: {job / 'node2'}: cannot list directory: Permission denied (both sides: its name is node folder "
            f"node0's but "
            "for its digits, so it may hold a rank's profile: make it readable (chmod u+r), or move it out of the "
            "folder)")


def test_a_third_node_holding_no_rank_is_bid_moved_out(tmp_path, capsys):
    """node2/ holding a log alone beside node0/ and node1/, each a folder of ranks: the folder is a job of nodes
    without node2/, so the hint bids move it out (and moving it out compares the two nodes' ranks). The refusal
    names both folders of ranks beside it, where it named the last alone ("where node1 beside it holds ranks")."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    (job / "node2" / "train.log").write_text("step 50\n")
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'node2'}: holds no rank's profile, where node0, node1 beside it hold ranks (a multi-node "
        "job's node folders each hold their ranks) (both sides: copy the node's rank folders into it, or move it out "
        "of the "
        "folder)"]
    shutil.move(job / "node2", tmp_path / "node2")
    assert sorted(api.ranks(job)) == [0, 1]


@pytest.mark.parametrize("stray", ["ds_config.json", "ASCEND_PROFILER_OUTPUT"])
def test_a_node_holding_a_stray_json_or_output_file_alone_holds_no_rank(tmp_path, stray):
    """node2/ holding a JSON object that is no trace (a DeepSpeed config) or a file named ASCEND_PROFILER_OUTPUT
    beside node0/ and node1/: it holds no rank's profile, as node2/ holding a log does. Both were skipped as "one
    profile" (the first is what a folder input takes for its one trace, the second is the export folder's name),
    so the job compared node0's and node1's ranks and left node2 out without a word."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    (job / "node2" / stray).write_text('{"train_batch_size": 8}')
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert (err.value.path, err.value.message) == (
        str(job / "node2"), "holds no rank's profile, where node0, node1 beside it hold ranks (a multi-node job's "
                            "node folders each hold their ranks)")


def test_an_empty_node_names_the_nodes_beside_it_in_number_order(tmp_path):
    """node3/ holding a log alone beside node2/ and node10/: the refusal names them with their digits read as
    numbers, node2 first (by string node10 came first)."""
    job = tmp_path / "job"
    for rank, node in ((0, "node2"), (1, "node10")):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", job / node / f"rank{rank}_ascend_pt")
    (job / "node3").mkdir()
    (job / "node3" / "train.log").write_text("step 50\n")
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert (err.value.path, err.value.message) == (
        str(job / "node3"), "holds no rank's profile, where node2, node10 beside it hold ranks (a multi-node job's "
                            "node folders each hold their ranks)")


def test_one_folder_of_ranks_alone_is_no_job(tmp_path, capsys):
    """A folder around one folder of ranks (job/node0/ and nothing else) is no job of nodes: the CLI keeps the
    loader's error naming the folder of ranks to pass, as for msinsight's st/ around level2/."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    shutil.move(job / "node1" / "rank1_ascend_pt", job / "node0" / "rank1_ascend_pt")
    (job / "node1").rmdir()
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {job}: The data is not collected by PyTorch or Mindspore mode or the data is not parsed: no "
        "trace_view.json, profiler *.db or *.pt.trace.json found (both sides: it holds profiling directories a level "
        "down: "
        f"{os.path.join('node0', 'rank0_ascend_pt')}, {os.path.join('node0', 'rank1_ascend_pt')}; pass one of them, "
        "one rank per side; or a folder of ranks on both sides, such as node0, to compare rank by rank)"]


def test_kineto_nodes_of_unequal_sizes(tmp_path):
    """node0/ holding ranks 0 and 1's traces beside node1/ holding rank 2's alone (a job of three GPUs on two hosts):
    the one-trace folder reads as a rank's, and node0/ as a node because its traces record two ranks, where it was
    refused as a rank's folder holding two traces. Beside worker1/ (one trace), worker0/ holding its trace and a
    stray trace recording no rank stays that error (``test_ranks.py``'s trace under any name)."""
    job = tmp_path / "job"
    (job / "node0").mkdir(parents=True)
    for k in (0, 1):
        shutil.copy(KINETO / f"sampled_rank-{k}.json.gz", job / "node0" / f"t{k}.json.gz")
    _ranked_copy(KINETO / "sampled_rank-0.json.gz", job / "node1" / "t.json.gz", 2)
    assert api.ranks(job) == {0: str(job / "node0" / "t0.json.gz"), 1: str(job / "node0" / "t1.json.gz"),
                              2: str(job / "node1")}
    _ranked_copy(KINETO / "sampled_rank-1.json.gz", job / "node0" / "t1.json.gz", 0)  # rank 0 twice: no node
    with pytest.raises(ProfileError, match=r"node0: holds 2 traces: a rank's folder holds one"):
        api.ranks(job)


def test_a_trace_in_the_folder_beside_a_node_of_traces_is_one_rank_of_the_job(tmp_path):
    """job/ holding rank 0's trace beside node1/ holding ranks 1 and 2's: three ranks, where a folder of one trace
    reads as that trace's input but for the node beside it (mutation audit mut66b: its ranks were left out)."""
    job = tmp_path / "job"
    (job / "node1").mkdir(parents=True)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "t0.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "node1" / "t1.json.gz")
    _ranked_copy(KINETO / "sampled_rank-0.json.gz", job / "node1" / "t2.json.gz", 2)
    assert api.ranks(job) == {0: str(job / "t0.json.gz"), 1: str(job / "node1" / "t1.json.gz"),
                              2: str(job / "node1" / "t2.json.gz")}


def test_a_node_holding_a_trace_and_a_rank_folder_is_a_node(tmp_path):
    """node0/ holding rank 0's trace and rank1/ (a folder of ranks: rank 0 in it, rank 1 a level down) beside node1/
    of rank2/ and rank3/: four ranks. A subfolder of one trace is a rank's input only without a folder beside the
    trace (mutation audit mut66b: without that look node0/ read as rank 0's folder, rank 1 left out)."""
    job = tmp_path / "job"
    (job / "node0" / "rank1").mkdir(parents=True)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "node0" / "t0.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "node0" / "rank1" / "t.json.gz")
    for rank in (2, 3):
        _ranked_copy(KINETO / "sampled_rank-0.json.gz", job / "node1" / f"rank{rank}" / "t.json.gz", rank)
    assert api.ranks(job) == {0: str(job / "node0" / "t0.json.gz"), 1: str(job / "node0" / "rank1"),
                              2: str(job / "node1" / "rank2"), 3: str(job / "node1" / "rank3")}


def test_a_rank_folder_with_a_side_folder_beside_one_node_is_a_rank_of_the_job(tmp_path):
    """rank0/ holding rank 0's trace and a logs/ folder (no profile) beside node1/ of rank1/ and rank2/: one node
    beside a rank's folder is the job's, three ranks (mutation audit mut66b: rank0/ was not counted as a rank of
    the folder itself, so node1/ read as a lone folder of ranks and its ranks were left out)."""
    job = tmp_path / "job"
    for folder in ("rank0/logs", "node1/rank1"):
        (job / folder).mkdir(parents=True)
    (job / "rank0" / "logs" / "train.log").write_text("step 50\n")
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "rank0" / "t.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "node1" / "rank1" / "t.json.gz")
    _ranked_copy(KINETO / "sampled_rank-0.json.gz", job / "node1" / "rank2" / "t.json.gz", 2)
    assert api.ranks(job) == {0: str(job / "rank0"), 1: str(job / "node1" / "rank1"), 2: str(job / "node1" / "rank2")}


def test_a_rank_folder_of_two_traces_beside_nodes_keeps_its_own_error(tmp_path):
    """node0/ holding two traces of rank 0 (a stray copy) beside node1/ of rank folders and node2/ of one trace:
    node0/ is a rank's folder holding two traces, refused as such, not as a node folder holding no rank's profile
    (mutation audit mut66b: a subfolder holding a profile was taken for a node copied in part)."""
    job = tmp_path / "job"
    (job / "node0").mkdir(parents=True)
    for k in (0, 1):
        _ranked_copy(KINETO / f"sampled_rank-{k}.json.gz", job / "node0" / f"t{k}.json.gz", 0)
    for rank in (1, 2):
        _ranked_copy(KINETO / "sampled_rank-1.json.gz", job / "node1" / f"rank{rank}" / "t.json.gz", rank)
    _ranked_copy(KINETO / "sampled_rank-0.json.gz", job / "node2" / "t.json.gz", 5)
    with pytest.raises(ProfileError, match=r"node0: holds 2 traces: a rank's folder holds one"):
        api.ranks(job)


def test_a_node_folder_holding_a_profiler_info_alone_is_named(tmp_path):
    """node1/ holding rank 1's profiler_info_1.json alone (a node copied in part) beside node0/ of rank 0: refused
    naming it (mutation audit mut66b)."""
    job = _two_nodes(TEXT1, tmp_path / "job")
    (info,) = (job / "node1" / "rank1_ascend_pt").glob("profiler_info_*.json")
    shutil.move(info, job / "node1" / info.name)
    shutil.rmtree(job / "node1" / "rank1_ascend_pt")
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert (err.value.path, err.value.message) == (
        str(job / "node1"), "holds no rank's profile, where node0 beside it holds ranks (a multi-node job's node "
                            "folders each hold their ranks)")


def test_a_node_folder_listed_but_not_searchable_is_named_so(tmp_path, monkeypatch):
    """node1/ beside node0/ listing its rank folder but not searchable (mode r--): named as a folder that cannot be
    searched, the cause, not as one holding no rank's profile, which would bid the user copy ranks it holds
    (mutation audit mut66b)."""
    from test_ranks import _unsearchable

    job = _two_nodes(TEXT1, tmp_path / "job")
    _unsearchable(monkeypatch, job / "node1")
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert (err.value.path, err.value.message) == (str(job / "node1"), "cannot search directory: Permission denied")


@pytest.mark.parametrize("replaced", [False, True])
def test_a_node_folder_gone_since_listed_is_said_so(tmp_path, capsys, monkeypatch, replaced):
    """node1/ of rank 1 removed (or replaced by a file) after the job folder was listed, before it was checked (a
    clean-up or a copy still running): it was refused as "holds no rank's profile ... copy the node's rank folders
    into it", a folder that is no more. The error now says what happened, and bids compare again once the folder
    stops changing. The hook removes node1/ right after the job folder's listing."""
    from msprof_compare.loaders import ranks

    job = _two_nodes(TEXT1, tmp_path / "job")
    shutil.copytree(TEXT1 / "rank0_ascend_pt", job / "node2" / "rank2_ascend_pt")  # node0, node2 stay a job
    real = ranks._profiling_dirs

    def listed_then_gone(directory, heads=None):
        found = real(directory, heads)
        if os.fspath(directory) == str(job) and (job / "node1").is_dir():
            shutil.rmtree(job / "node1")
            if replaced:
                (job / "node1").write_text("")
        return found

    monkeypatch.setattr(ranks, "_profiling_dirs", listed_then_gone)
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    gone = "is a file now (replaced" if replaced else "is gone now (removed"
    assert code == 1
    assert error_lines(err) == [
        f"error: {job / 'node1'}: was a folder when the job folder was listed and {gone} while it was read) "
        "(both sides: compare again once nothing is changing the folder)"]


def test_an_unreadable_folder_named_as_a_node_is_named_after_that_node(tmp_path, capsys, monkeypatch):
    """node2/ beside node0/ and node1/ (folders of ranks) that the node check passes (it was readable then) and the
    unreadable-rank check then cannot list: its hint said "its name is rank folder node0's but for its digits",
    node0 being a node folder. The words now fit what node0 is. The node check is skipped to reach the second."""
    from test_ranks import _refusing

    from msprof_compare.loaders import ranks

    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    monkeypatch.setattr(ranks, "_refuse_empty_nodes", lambda *args, **kwargs: None)
    _refusing(monkeypatch, job / "node2")
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [_unreadable_node2(job)]


@pytest.mark.parametrize("owner", ["own", "another's"])
def test_an_unreadable_rank_or_node_folder_gets_a_chmod_that_works(tmp_path, monkeypatch, owner):
    """An unreadable rank1_ascend_pt in a folder of ranks said "cannot list directory: Permission denied" and no
    more, and a folder named as a node's bade "make it readable", no command; where the folder is another user's
    (the process uid patched to one that owns nothing: the root user the tests run as owns the copies), "chmod u+r"
    fails ("Operation not permitted"): its owner is named, with the chmod they can run, as the loader's own check
    (paths.check_access) words it."""
    import pwd

    from test_ranks import _refusing

    from msprof_compare.loaders import ranks

    flat = tmp_path / "flat"
    for rank in (0, 1):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", flat / f"rank{rank}_ascend_pt")
    job = _two_nodes(TEXT1, tmp_path / "job")
    (job / "node2").mkdir()
    name = pwd.getpwuid((job / "node2").stat().st_uid).pw_name
    if owner != "own":
        monkeypatch.setattr(os, "geteuid", lambda: (job / "node2").stat().st_uid + 4242)
    _refusing(monkeypatch, flat / "rank1_ascend_pt", job / "node2")
    with pytest.raises(ProfileError) as err:
        ranks.discover(str(flat))
    assert (err.value.path, err.value.message) == (str(flat / "rank1_ascend_pt"),
                                                   "cannot list directory: Permission denied")
    own = owner == "own"
    assert err.value.hint == ("it needs read permission for you (chmod u+r), which --force cannot skip" if own
                              else f"it needs read permission for you, which --force cannot skip: it belongs to "
                                   f"{name}, who can grant it (chmod o+r, or g+r for a group you are in)")
    with pytest.raises(ProfileError) as err:
        ranks.discover(str(job))
    make = "(chmod u+r)" if own else f"(its owner, {name}, can: chmod o+r, or g+r for a group you are in)"
    assert (err.value.path, err.value.hint) == (
        str(job / "node2"), f"its name is node folder node0's but for its digits, so it may hold a rank's profile: "
                            f"make it readable {make}, or move it out of the folder")


def test_an_unsearchable_rank_folder_of_another_user_names_its_owner(tmp_path, monkeypatch):
    """rank1_ascend_pt listed but not searched, another user's (the process uid patched, as above): the hint bade
    "chmod u+x", which fails on a folder of another's; its owner is named with the chmod they can run."""
    import pwd

    from test_ranks import _unsearchable

    from msprof_compare.loaders import ranks

    flat = tmp_path / "flat"
    for rank in (0, 1):
        shutil.copytree(TEXT1 / f"rank{rank}_ascend_pt", flat / f"rank{rank}_ascend_pt")
    uid = (flat / "rank1_ascend_pt").stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: uid + 4242)
    _unsearchable(monkeypatch, flat / "rank1_ascend_pt")
    with pytest.raises(ProfileError) as err:
        ranks.discover(str(flat))
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(flat / "rank1_ascend_pt"), "cannot search directory: Permission denied",
        "it needs search permission (a directory needs it to be read) for you, which --force cannot skip: it belongs "
        f"to {pwd.getpwuid(uid).pw_name}, who can grant it (chmod o+x, or g+x for a group you are in)")
