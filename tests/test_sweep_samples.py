"""tools/sweep_samples.py's rank phase: which folders of ranks it finds, which pairs it plans, and that its check of
a rank-by-rank run flags each way the run can disagree with the single compares of its ranks."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from msprof_compare.units import RankCycle, Unit

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


def test_build_cycle_folders_as_torch_npu_names_a_schedules_cycles(samples: Path, tmp_path: Path) -> None:
    """The rank phase's NPU folders of cycles, as the project's discovery reads them: by hand, cycle k is the k-th
    collection end the tool writes (CYCLE_END + 10 k), named against that order (timestamp digit 3 - k, 4 - k), one
    worker per rank; the private copy holds the same."""
    sweep.build_cycle_folders(samples, tmp_path)
    found = sweep.find_rank_folders(tmp_path / sweep.BUILT, tmp_path)
    kineto = {f: found.pop(f) for f in list(found) if "kineto" in f}  # test_build_kineto_cycle_folders
    assert found == {f"{sweep.BUILT}/npu_cycles_{n}": {
        RankCycle(r, k): f"{sweep.BUILT}/npu_cycles_{n}/host_{r}_2025010100000000{n + 1 - k}_ascend_pt"
        for k in range(1, n + 1) for r in (0, 1)} for n in (2, 3)}
    found |= kineto
    assert list(found[f"{sweep.BUILT}/npu_cycles_3"])[:3] == [RankCycle(0, 1), RankCycle(1, 1), RankCycle(0, 2)]
    assert sweep.find_rank_folders(tmp_path / "copy" / sweep.BUILT, tmp_path / "copy") == found
    info = json.loads((tmp_path / sweep.BUILT / "npu_cycles_3" / "host_1_20250101000000001_ascend_pt" /
                       "profiler_info_1.json").read_text())
    assert info["end_info"]["collectionTimeEnd"] == 1736408884023552840 + 30
    assert sweep.where(samples, tmp_path / "copy", f"{sweep.BUILT}/x") == str(tmp_path / sweep.BUILT / "x")
    assert sweep.where(samples, tmp_path / "copy", f"copy:{sweep.BUILT}/x") == str(tmp_path / "copy" / sweep.BUILT
                                                                                   / "x")


def test_build_kineto_cycle_folders(samples: Path, tmp_path: Path) -> None:
    """The rank phase's Kineto folders of cycles of ranks, as discovery reads them: by hand, two cycles in one folder
    (tensorboard_trace_handler's names, one worker per rank, cycle k's timestamp 1736408884023 + 1000 k ms) and three
    in a subfolder per rank, whose subfolders are no folder of their own (their units are the folder's). Cycle k of
    rank r is a copy of its source's rank r trace (HTA's trace_filter ranks; critical_path's alexnet and simple_add
    benchmarks): byte for byte decompressed, but simple_add's, whose distributedInfo.rank 0 reads 1."""
    import gzip

    sweep.build_cycle_folders(samples, tmp_path)
    found = {f: units for f, units in sweep.find_rank_folders(tmp_path / sweep.BUILT, tmp_path).items()
             if "kineto" in f}
    built = f"{sweep.BUILT}/kineto_cycles"

    def name(r: int, k: int) -> str:
        return f"node0_{1000 + r}.{1736408884023 + 1000 * k}.pt.trace.json.gz"

    assert found == {f"{built}_2": {RankCycle(r, k): f"{built}_2/{name(r, k)}" for k in (1, 2) for r in (0, 1)},
                     f"{built}_3": {RankCycle(r, k): f"{built}_3/rank{r}/{name(r, k)}"
                                    for k in (1, 2, 3) for r in (0, 1)}}
    job = [samples / f"hta/tests/data/trace_filter/sampled_rank-{r}.json.gz" for r in (0, 1)]
    bench = [samples / "hta/tests/data/critical_path" / p for p in (
        "alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "simple_add/benchmark_result_493459_1694039959_trace.json.gz")]
    for folder, sources in (("_2", (job, bench)), ("_3", (bench, job, bench))):
        for k, pair in enumerate(sources, 1):
            for r, source in enumerate(pair):
                copy = gzip.decompress((tmp_path / found[built + folder][RankCycle(r, k)]).read_bytes())
                original = gzip.decompress(source.read_bytes())
                assert json.loads(copy)["distributedInfo"]["rank"] == r
                if source.name.startswith("benchmark_result_493459"):
                    assert json.loads(original)["distributedInfo"]["rank"] == 0
                    at = original.index(b'"distributedInfo": {"rank": 0}')  # the one byte changed
                    assert copy == original[:at] + b'"distributedInfo": {"rank": 1}' + original[at + 30:]
                else:
                    assert copy == original
    pairs = sweep.plan_rank_pairs(samples, found)
    assert pairs == [(f"{built}_2", f"copy:{built}_2"), (f"{built}_3", f"copy:{built}_3"),
                     (f"{built}_2", f"{built}_3"), (f"{built}_3", f"{built}_2")]


def _fake_tree(root: Path) -> dict[str, dict[Unit, str]]:
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


def test_plan_of_folders_of_cycles(tmp_path: Path) -> None:
    """Folders of cycles pair with folders of their kind alone: cycles of ranks whatever their counts, a single
    device's of as many cycles; the option sets on each kind, --rank_list (by rank) not on a single device's."""
    folders = _fake_tree(tmp_path)
    folders |= {f"c{n}": {RankCycle(r, k): f"c{n}/h{r}_{k}" for k in range(1, n + 1) for r in (0, 1)} for n in (2, 3)}
    folders |= {t: {RankCycle(None, k): f"{t}/w.{k}.pt.trace.json" for k in range(1, n + 1)}
                for t, n in (("t0", 2), ("t4", 2), ("t5", 3))}
    folders["kc"] = {RankCycle(r, k): f"kc/w{r}.{k}.pt.trace.json.gz" for k in (1, 2) for r in (0, 1)}
    pairs = sweep.plan_rank_pairs(tmp_path, folders)  # Kineto cycles of ranks against Kineto's alone: none here
    assert pairs == [(f, "copy:" + f) for f in folders] + [("a", "b"), ("b", "a"), ("c2", "c3"), ("c3", "c2"),
                                                           ("t0", "t4"), ("t4", "t0")]
    del folders["kc"]
    pairs = [p for p in pairs if "kc" not in p[0]]
    assert sweep.rank_singles(folders, "c3", "copy:c2", {1}) == {
        RankCycle(1, k): (f"c3/h1_{k}", f"copy:c2/h1_{k}") for k in (1, 2)}
    assert list(sweep.rank_singles(folders, "c2", "c3")) == [RankCycle(r, k) for k in (1, 2) for r in (0, 1)]
    jobs = sweep.rank_option_jobs(tmp_path, folders, pairs, 10)
    listing = ["--enable_profiling_compare", "--rank_list", "1,99"]
    for b, c in [("c2", "copy:c2"), ("c3", "copy:c3"), ("c2", "c3"), ("c3", "c2")]:
        assert [o for x, y, o in jobs if (x, y) == (b, c)] == [*sweep.RANK_OPTS, listing]
    for b, c in [("t0", "copy:t0"), ("t4", "copy:t4"), ("t5", "copy:t5"), ("t0", "t4"), ("t4", "t0")]:
        assert [o for x, y, o in jobs if (x, y) == (b, c)] == sweep.RANK_OPTS
    assert sweep.report_unit("performance_comparison_result_rank1_cycle2_20250101000000.json") == (
        RankCycle(1, 2), "20250101000000")
    assert sweep.report_unit("performance_comparison_result_cycle3_20250101000000.json")[0] == RankCycle(None, 3)
    assert sweep.report_unit("performance_comparison_result_rank12_20250101000000.json")[0] == 12
    for job in ("ranks", "cycles"):  # the job overview, of a single device's cycles too: no unit's report
        name = f"performance_comparison_result_{job}_20250101000000.json"
        assert sweep.report_unit(name) is None and sweep.OVERVIEW_REPORT.match(name)


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
    assert "Largest Step A" not in r["stdout"]  # a self-compare: no step moved, its cell reads "-"
    named = r["stdout"].replace("\nJob ", "\nLargest Step A: Matmul\nJob ", 1)  # a step no rank's cell keys
    assert _flags(check(r | {"stdout": named}, folders, singles, reports), "largest step lines")
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


@pytest.fixture
def cycle_run(samples: Path, tmp_path: Path):
    """A real cycle-by-cycle run of the rank phase's NPU folders of cycles (ranks 0 and 1; base level0, level1;
    comparison level1, level0, level1), the profiling compare and the gate at 20 %, its reports and the single
    compares of its units: the check finds nothing in it."""
    out = tmp_path / "cycles"
    sweep.build_cycle_folders(samples, out)
    folders = sweep.find_rank_folders(out / sweep.BUILT, out)
    b, c = f"{sweep.BUILT}/npu_cycles_2", f"{sweep.BUILT}/npu_cycles_3"
    opts = ["--enable_profiling_compare", "--fail_on_regression", "20"]
    d = out / "o"
    d.mkdir()
    r = sweep.run_cli(samples, out / "copy", b, c, opts, 300, str(d)) | {
        "dir": str(d), "base_dir": str(out / b), "comp_dir": str(out / c)}
    reports = {f.name: json.loads(f.read_text()) for f in d.iterdir()}
    singles = {}
    for unit, (sb, sc) in sweep.rank_singles(folders, b, c).items():
        single = sweep.run_cli(samples, out / "copy", sb, sc, opts, 300)
        doc, bad = sweep.check_run(single)
        assert bad == []
        singles[unit] = (single["rc"], None, doc)
    assert sweep.check_rank_run(r, (folders[b], folders[c]), singles, reports) == []
    return r, (folders[b], folders[c]), singles, reports


def test_check_rank_run_flags_each_disagreement_of_a_cycle_run(cycle_run) -> None:
    r, folders, singles, reports = cycle_run
    check = sweep.check_rank_run
    overview_name = next(n for n in reports if "_ranks_" in n)
    overview = reports[overview_name]
    name = next(n for n in reports if "_rank1_cycle2_" in n)
    # by hand (test_rank_cycles): rank 1 cycle 1 alone regressed beyond 20 %; the comparison's cycle 3 not compared
    assert r["rc"] == 3 and [k for k, v in singles.items() if v[0] == 3] == [RankCycle(1, 1)]
    assert [(x["rank"], x["cycle"], x["only_in"]) for x in overview["not_compared"]] == [
        (0, 3, "comparison"), (1, 3, "comparison")]
    assert [j["cycle"] for j in overview["job"]] == [1, 2]

    def altered(**repl) -> list[str]:
        """The check of the run with its stdout / stderr lines replaced (old -> new) or reports changed."""
        got = r
        for stream in ("stdout", "stderr"):
            for old, new in repl.get(stream, []):
                assert old in got[stream]
                got = got | {stream: got[stream].replace(old, new)}
        return check(got, folders, repl.get("singles", singles), repl.get("reports", reports))

    changed = json.loads(json.dumps(reports[name]))
    changed["sheets"][-1]["rows"] = changed["sheets"][-1]["rows"][:-1]  # an altered cycle report is caught
    assert _flags(altered(reports=reports | {name: changed}), "rank 1 cycle 2: report != single compare")
    renamed = {n.replace("_cycle2_", "_cycle3_") if n == name else n: v for n, v in reports.items()}
    assert _flags(altered(reports=renamed), "reports of ranks", "'rank 1 cycle 3'")
    plain = {n.replace("_rank1_cycle2_", "_rank1_") if n == name else n: v for n, v in reports.items()}
    assert _flags(altered(reports=plain), "reports of ranks", "'rank 1',")  # a rank's name, not a cycle's
    line = next(ln for ln in r["stdout"].splitlines() if ln.startswith("rank 1 cycle 2: E2E "))
    assert _flags(altered(stdout=[(line, line.replace("rank 1 cycle 2", "rank 1 cycle 1"))]),
                  "rank 1 cycle 2: no line")
    row = next(ln for ln in r["stdout"].splitlines() if ln.startswith("|  1   |   2   |"))
    assert _flags(altered(stdout=[(row, row.replace("|   2   |", "|   1   |"))]), "rank 1 cycle 2: no table row")
    assert _flags(altered(stdout=[("| Rank | Cycle |", "| Rank | Cycles |")]), "table header")
    job = next(ln for ln in r["stdout"].splitlines() if ln.startswith("Job cycle 2 "))
    assert _flags(altered(stdout=[(job, job.replace("Job cycle 2", "Job"))]), "job lines")
    assert _flags(altered(stdout=[(job + "\n", "")]), "job lines")
    warned = next(ln for ln in r["stderr"].splitlines() if "Cycle only in the comparison" in ln)
    assert warned.endswith("(3 cycles against 2), not compared: 3")
    assert _flags(altered(stderr=[(warned, "")]), "cycles [3] only in the comparison")
    assert _flags(check(r, folders[::-1], singles, reports), "cycles [3] only in the base")
    # the gate: each regressed unit's line, the job's error line naming them, the overview's verdicts
    gate = next(ln for ln in r["stderr"].splitlines() if ln.startswith("error: --fail_on_regression"))
    assert gate == "error: --fail_on_regression 20: rank 1 cycle 1 regressed beyond the threshold"
    assert _flags(altered(stderr=[(gate, gate.replace("rank 1 cycle 1", "rank 1"))]), "error lines")
    assert _flags(altered(stderr=[("rank 1 cycle 1: Performance regression: ", "Performance regression: ")]),
                  "rank 1 cycle 1: no line of its regression")
    calm = singles | {RankCycle(1, 1): (0, *singles[RankCycle(1, 1)][1:])}
    assert _flags(altered(singles=calm), "exit status 3, the single compares give 0")
    assert _flags(altered(singles=calm), "job overview rank 1 cycle 1: regressed True")

    def overview_with(change) -> list[str]:
        doc = json.loads(json.dumps(overview))
        change(doc)
        return altered(reports=reports | {overview_name: doc})

    assert _flags(overview_with(lambda d: d["not_compared"].pop()), "job overview not_compared")
    assert _flags(overview_with(lambda d: d["not_compared"][0].update(cycle=2)), "job overview not_compared")
    assert _flags(overview_with(lambda d: d["ranks"][1].update(cycle=2)), "job overview of ranks")
    assert _flags(overview_with(lambda d: d["ranks"][0].pop("cycle")), "job overview of ranks")
    assert _flags(overview_with(lambda d: d["job"][1].update(cycle=1)), "job overview job")
    assert _flags(overview_with(lambda d: d.update(job=d["job"][0])), "job overview job")
    assert _flags(overview_with(lambda d: d.update(job_line=d["job_line"].split("; ")[0])), "job overview job_line")
    assert _flags(overview_with(lambda d: d["ranks"][2].update(base_path=d["ranks"][0]["base_path"])),
                  "job overview rank 0 cycle 2: inputs")
    assert _flags(overview_with(lambda d: d.update(fail_on_regression=None)), "job overview fail_on_regression")
    assert _flags(overview_with(lambda d: d["ranks"][0].update(rank="0")), "job overview schema")
