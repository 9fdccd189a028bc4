"""tools/sweep_samples.py's rank phase: which folders of ranks it finds, which pairs it plans, and that its check of
a rank-by-rank run flags each way the run can disagree with the single compares of its ranks."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from msprof_compare.units import RankCycle

PT = "msinsight/test/data/pytorch"


def _tool():
    """The sweep script as a module (tools/ is no package)."""
    spec = importlib.util.spec_from_file_location("sweep_samples", REPO_ROOT / "tools" / "sweep_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sweep = _tool()


def test_find_rank_folders_lists_the_samples_folders_of_ranks(samples: Path) -> None:
    # by hand (ls of the samples): the msinsight text / DB levels (level2 recorded rank 0 only), the system test's
    # four ranks, the server test data's two, HTA's trace_filter, and xdit_flux.1, whose capture_traces subfolder holds
    # rank 0's trace beside execution_details.json (hta/tests/data is none: most of its subfolders' traces record
    # no rank, e.g. amd_trace's)
    want = {f"{PT}/{kind}/{lv}": {r: f"{PT}/{kind}/{lv}/rank{r}_ascend_pt" for r in ranks}
            for kind in ("text", "db") for lv, ranks in (("level0", (0, 1)), ("level1", (0, 1)), ("level2", (0,)))}
    want["msinsight/test/st/level2"] = {r: f"msinsight/test/st/level2/rank_{r}_ascend_pt" for r in range(4)}
    srv = "msinsight/server/src/test/test_data"
    want[srv] = {0: f"{srv}/test_rank_0", 1: f"{srv}/test_rank_1"}
    want["hta/tests/data/trace_filter"] = {r: f"hta/tests/data/trace_filter/sampled_rank-{r}.json.gz" for r in (0, 1)}
    xdit = "tracelens/tests/traces/inference/xdit_flux.1"
    want[xdit] = {0: f"{xdit}/capture_traces"}
    # by hand too: the tb_plugin runs are one worker's cycles (worker0.<ms>, no rank: RankCycle(None, k), by the
    # names' timestamps); folders of unrelated runs side by side (hta critical_path's models, tracelens' traces) are
    # refused, not read as cycles
    for folder, names in (
            ("kineto/tb_plugin/samples/resnet50_num_workers_0", ["worker0.1623143089861.pt.trace.json.gz",
                                                                 "worker0.1623143566756.pt.trace.json.gz"]),
            ("kineto/tb_plugin/samples/resnet50_num_workers_4", ["worker0.1623212756351.pt.trace.json.gz",
                                                                 "worker0.1623213129365.pt.trace.json.gz"])):
        want[folder] = {RankCycle(None, k): f"{folder}/{name}" for k, name in enumerate(names, 1)}
    assert sweep.find_rank_folders(samples) == want


def _fake_tree(root: Path) -> dict[str, dict[int, str]]:
    """Two NPU folders of two ranks (one a DB export) and a Kineto folder: only names matter to the planning."""
    folders = {"a": {0: "a/r0", 1: "a/r1"}, "b": {0: "b/r0", 1: "b/r1"}, "k": {0: "k/t0.json", 1: "k/t1.json"}}
    for f in ("a", "b"):
        for r in (0, 1):
            (root / f / f"r{r}" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    for r in (0, 1):
        (root / "a" / f"r{r}" / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{r}.db").touch()
    (root / "k").mkdir()
    return folders


def test_plan_rank_pairs_and_option_jobs(tmp_path: Path) -> None:
    folders = _fake_tree(tmp_path)
    pairs = sweep.plan_rank_pairs(tmp_path, folders)
    assert pairs == [("a", "copy:a"), ("b", "copy:b"), ("k", "copy:k"), ("a", "b"), ("b", "a")]
    jobs = sweep.rank_option_jobs(tmp_path, folders, pairs, 3)  # the three self-compares before the others
    steps = [["--base_step", s, "--comparison_step", s] for s in sweep.RANK_STEPS]
    listing = ["--enable_profiling_compare", "--rank_list", "1,99"]  # the highest common rank and one none holds
    assert sorted(map(repr, jobs)) == sorted(map(repr, [(f, "copy:" + f, o) for f in "abk" for o in sweep.RANK_OPTS]
                                                 + [("a", "copy:a", o) for o in steps]  # only a is a DB export
                                                 + [(f, "copy:" + f, listing) for f in "abk"]))
    assert sweep.split_rank_list(listing) == (["--enable_profiling_compare"], {1, 99})
    assert sweep.split_rank_list(steps[0]) == (steps[0], None)
    assert sweep.rank_singles(folders, "a", "copy:b", {1, 99}) == {1: ("a/r1", "copy:b/r1")}
    assert sweep.rank_singles(folders, "a", "copy:b") == {0: ("a/r0", "copy:b/r0"), 1: ("a/r1", "copy:b/r1")}


def test_rank_phase_on_a_tiny_matrix(samples: Path, tmp_path: Path) -> None:
    mine = tmp_path / "samples"
    for lv in ("level0", "level2"):
        shutil.copytree(samples / PT / "text" / lv, mine / lv)
    out = tmp_path / "out"
    assert sweep.main(["--samples", str(mine), "--out", str(out), "--phase", "ranks", "--rank-option-pairs", "1"]) == 0
    assert (out / "violations-ranks.txt").read_text() == ""
    runs = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()]
    ranked = {(r["base"], r["comp"], tuple(r["opts"])): r for r in runs if r.get("mode") == "ranks"}
    # two self-compares and both orders of the pair, then the option sets on level0's self-compare (2 ranks)
    assert sorted(ranked) == sorted([("level0", "copy:level0", ()), ("level2", "copy:level2", ()),
                                     ("level0", "level2", ()), ("level2", "level0", ())]
                                    + [("level0", "copy:level0", tuple(o)) for o in sweep.RANK_OPTS]
                                    + [("level0", "copy:level0", ("--enable_profiling_compare", "--rank_list",
                                                                  "1,99"))])
    # a report per rank and the job overview; --rank_list 1,99: rank 1's alone
    assert [len(ranked[k]["reports"]) for k in sorted(ranked)] == [3, 3, 3, 3, 3, 2, 2, 2, 2]
    assert {r["rc"] for r in runs} == {0}
    assert not (out / "loadable.json").exists()  # the rank phase alone probes no input


@pytest.fixture
def one_sided(samples: Path, tmp_path: Path):
    """A real rank-by-rank run (text level0, ranks 0 and 1, against a copy holding rank 0 only), its reports and
    the single compare of rank 0: the check finds nothing in it."""
    mine, copies = tmp_path / "s", tmp_path / "copy"
    shutil.copytree(samples / PT / "text" / "level0", mine / "l0")
    shutil.copytree(mine / "l0" / "rank0_ascend_pt", copies / "c0" / "rank0_ascend_pt")
    folders = (sweep.find_rank_folders(mine)["l0"], {0: "c0/rank0_ascend_pt"})
    d = tmp_path / "o"
    d.mkdir()
    r = sweep.run_cli(mine, copies, "l0", "copy:c0", [], 120, str(d)) | {
        "dir": str(d), "base_dir": str(mine / "l0"), "comp_dir": str(copies / "c0")}
    reports = {f.name: json.loads(f.read_text()) for f in d.iterdir()}
    single = sweep.run_cli(mine, copies, "l0/rank0_ascend_pt", "copy:c0/rank0_ascend_pt", [], 120)
    singles = {0: (single["rc"], None, json.loads(single["stdout"]))}
    assert sweep.check_rank_run(r, folders, singles, reports) == []
    return r, folders, singles, reports


def _flags(found: list[str], *words: str) -> bool:
    return any(all(w in x for w in words) for x in found)


def test_check_rank_run_flags_each_disagreement(one_sided) -> None:
    r, folders, singles, reports = one_sided
    (name, doc), (overview_name, overview) = sorted(reports.items(), key=lambda x: "_ranks_" in x[0])
    check = sweep.check_rank_run
    e2e = next(x for x in doc["sheets"] if x["name"] == "OverallMetrics")["rows"]
    e2e = next(x for x in e2e if x["Index"] == "E2E Time")
    assert f"E2E {e2e['Duration(ms)']:.3f} ms" in r["stdout"]  # the figures below are the report's

    changed = json.loads(json.dumps(doc))
    changed["sheets"][-1]["rows"] = changed["sheets"][-1]["rows"][:-1]
    assert _flags(check(r, folders, singles, {name: changed}), "report != single compare")
    assert _flags(check(r, folders, singles, {name: doc, name.replace("rank0", "rank1"): doc}), "reports of ranks")
    stamp = name.replace(name[-19:-5], "20000101000000")
    assert _flags(check(r, folders, singles, {name: doc, stamp.replace("rank0", "rank1"): doc}), "timestamps")
    assert _flags(check(r, folders, singles, {name.replace("result_", "result"): doc}), "report name")
    line = next(ln for ln in r["stdout"].splitlines() if ln.startswith("rank 0:"))
    late = line.replace(f"E2E {e2e['Duration(ms)']:.3f}", f"E2E {e2e['Duration(ms)'] + 0.001:.3f}")
    assert _flags(check(r | {"stdout": r["stdout"].replace(line, late)}, folders, singles, reports), "no line")
    row = next(ln for ln in r["stdout"].splitlines() if ln.startswith("|  0 "))
    assert _flags(check(r | {"stdout": r["stdout"].replace(row, "")}, folders, singles, reports), "no table row")
    job = next(ln for ln in r["stdout"].splitlines() if ln.startswith("Job "))
    assert _flags(check(r | {"stdout": r["stdout"].replace(job, job.replace("rank 0", "rank 1", 1))}, folders,
                        singles, reports), "job line")
    warned = next(ln for ln in r["stderr"].splitlines() if "only in the base" in ln)
    assert warned.endswith("not compared: 1")
    assert _flags(check(r | {"stderr": r["stderr"].replace(warned, "")}, folders, singles, reports),
                  "ranks [1] only in the base")
    assert _flags(check(r, folders[::-1], singles, reports), "no rank only in the base, but warned")
    # a rank whose single compare fails stops the job with its status and its error, naming the rank
    failed = {0: (2, "error: /x: broken", None)}
    assert _flags(check(r, folders, failed, reports), "exit status 0, the single compares give 2")
    assert _flags(check(r, folders, failed, reports), "error lines", "error: rank 0: /x: broken")
    assert _flags(check(r | {"stderr": r["stderr"] + "\nTraceback (most recent call last):\n"}, folders, singles,
                        reports), "traceback")
    # the job overview: one, its figures the rank report's
    assert _flags(check(r, folders, singles, {name: doc}), "job overviews [], expected one")
    assert _flags(check(r, folders, failed, reports), "a job overview of a failed run")
    late = json.loads(json.dumps(overview))
    late["ranks"][0]["computing"]["comparison_ns"] += 1
    assert _flags(check(r, folders, singles, {name: doc, overview_name: late}), "job overview rank 0: {")
    late["ranks"][0]["computing"] = overview["ranks"][0]["computing"] | {"diff_ns": 1}
    assert _flags(check(r, folders, singles, {name: doc, overview_name: late}), "not the exact change")
    late = json.loads(json.dumps(overview))
    late["ranks"][0]["reports"] = []
    assert _flags(check(r, folders, singles, {name: doc, overview_name: late}), "job overview rank 0: reports []")
    late = json.loads(json.dumps(overview))
    late["comparison_path"] = None
    assert _flags(check(r, folders, singles, {name: doc, overview_name: late}), "job overview folders")
    late = json.loads(json.dumps(overview))
    late["job"]["base_rank"] = 1
    assert _flags(check(r, folders, singles, {name: doc, overview_name: late}), "job overview job")
    stamp = overview_name.replace(overview_name[-19:-5], "20000101000000")
    assert _flags(check(r, folders, singles, {name: doc, stamp: overview}), "not the rank reports' timestamp")
    # rank 1, only in the base, listed as not compared with its input
    assert overview["not_compared"] == [{"rank": 1, "only_in": "base", "base_path": str(Path(r["base_dir"]) /
                                         "rank1_ascend_pt"), "comparison_path": None}]
    for alone in ([], None, [{**overview["not_compared"][0], "only_in": "comparison"}]):
        assert _flags(check(r, folders, singles, {name: doc, overview_name: overview | {"not_compared": alone}}),
                      "job overview not_compared")
    # judged as a --rank_list run: rank 0 listed beside one neither folder holds (99), which the run did not list
    listed = check(r, folders, singles, reports, {0, 99})
    assert _flags(listed, "listed ranks [99] in neither folder: warned []")
    assert _flags(listed, "job overview rank_list None, the run listed {0, 99}")
    assert _flags(listed, "no rank only in the base, but warned")  # rank 1 is not listed: no word about it
    assert _flags(listed, "job overview not_compared", "'only_in': None")


def test_rank_figures_of_a_pair_without_communication() -> None:
    """OverallMetrics has no Uncovered Communication Time row where neither side communicates (xdit_flux.1's rank
    0 trace): its figures are 0 on both sides, as the console's table shows them, not a report without figures."""
    rows = [{"Index": i, "Duration(ms)": b, "Duration(ms).1": c}
            for i, b, c in (("Computing Time", 64.018243, 64.0), ("Free Time", 332.609668, 300.5),
                            ("E2E Time", 396.627911, 364.518243))]
    doc = {"sheets": [{"name": "OverallMetrics", "rows": rows}]}
    assert sweep._rank_ns(doc) == {"E2E Time": (396627911, 364518243), "Computing Time": (64018243, 64000000),
                                   "Uncovered Communication Time": (0, 0), "Free Time": (332609668, 300500000)}
    assert sweep._rank_ns({"sheets": [{"name": "OverallMetrics", "rows": rows[:2]}]}) is None  # no E2E row


def test_rank_figures_of_the_gate_alone() -> None:
    """A report of the gate without the profiling compare has no OverallMetrics: its figures are the E2E times the
    gate judged (``summary.e2e``), which its rank line, the table and the overview show; none without the gate, or
    where the profiling compare ran (its OverallMetrics omitted: a side without E2E time)."""
    e2e = {"base_ns": 116251182, "comparison_ns": 136581009}
    doc = {"sheets": [], "options": {"enable_profiling_compare": False, "fail_on_regression": 20.0},
           "summary": {"e2e": e2e}}
    assert sweep._rank_ns(doc) == {"E2E Time": (116251182, 136581009)}
    assert sweep._rank_ns(doc | {"options": {"enable_profiling_compare": False, "fail_on_regression": None}}) is None
    assert sweep._rank_ns(doc | {"options": {"enable_profiling_compare": True, "fail_on_regression": 20.0}}) is None
    assert sweep._rank_ns(doc | {"summary": {"e2e": None}}) is None
