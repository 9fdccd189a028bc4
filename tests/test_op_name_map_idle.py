"""An ``--op_name_map`` entry that renames compared operators yet pairs none across two names is said once, naming
the entry, what it renamed and why no row paired; an entry that pairs a row gets no line. The names are those a
user comparing the real pairs types: reference pair 4 (hta's PARAM AlexNet on an A100 against the msinsight NPU
level-1 export), the tb_plugin V100 trace against the same export, and the bundled BERT H100 / MI300 pair. Counts
come from the raw JSON (complete events of that name) and from the original's OperatorCompareStatistic of pair 4
(``reference-outputs/4-gpu-alexnet-vs-npu-text-l1``), which lists the compared top-level operators of each side."""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from msprof_compare.api import compare

GPU = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
V100 = "kineto/tb_plugin/test/gpu_metrics_input.json"
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference-outputs" / "4-gpu-alexnet-vs-npu-text-l1"
REPO = Path(__file__).resolve().parents[1]
SGD, FUSED = "Optimizer.step#SGD.step", "Optimizer.step#NpuFusedSGD.step"  # README's example entry
#: the wrappers around pair 4's ops (PARAM's annotations, the NPU's DDP forward), opened to compare the ops inside
PARAM = "[param|pytorch.model.alex_net|0|0|0"
WRAPPERS = ["[param|cuda]", f"{PARAM}]", f"{PARAM}|measure|forward]", f"{PARAM}|warmup|forward]",
            "DistributedDataParallel.forward"]


def _events(path: Path) -> Counter:
    """{name: complete events} of a Kineto trace (or an NPU export's trace_view.json)."""
    if path.is_dir():
        path = path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return Counter(e.get("name") for e in events if e.get("ph") == "X")


def _reference_counts() -> dict[str, tuple[int, int]]:
    """{name: (base, comparison) Operator Number} of the original's OperatorCompareStatistic of pair 4."""
    sheet = pd.read_excel(REFERENCE / "performance_comparison_result.xlsx", sheet_name="OperatorCompareStatistic",
                          header=2)
    return {r["Operator Name"]: (int(r["Base Operator Number"]), int(r["Comparison Operator Number"]))
            for _, r in sheet.iterrows()}


def _said(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path, **kw: object) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(comparison), enable_operator_compare=True, **kw)
    return [m for m in caplog.messages if m.startswith("op_name_map: the entry")]


def test_entry_of_nested_ops_says_they_lie_inside_compared_ones(samples: Path, caplog: pytest.LogCaptureFixture):
    """``aten::mm`` and ``aclnnMm`` are the NPU's op and the aclnn call inside it: its 6 ``aten::mm`` lie inside
    the autograd and forward ops compared (pair 4's reference lists no ``aten::mm`` row), the GPU trace has none."""
    assert _events(samples / NPU)["aten::mm"] == 6 and _events(samples / GPU)["aten::mm"] == 0
    assert "aten::mm" not in _reference_counts()
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::mm": "aclnnMm"}) == [
        "op_name_map: the entry 'aten::mm': 'aclnnMm' renames no compared operator: the 6 comparison operators named "
        "'aten::mm' lie inside compared operators, and the pairing compares the top-level ones (the max_kernel_num "
        "option pairs the ops inside a pair of two)."]
    # one op: "lies"
    assert _events(samples / NPU)["aten::log_softmax"] == 1 and "aten::log_softmax" not in _reference_counts()
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::log_softmax": "aten::softmax"}) == [
        "op_name_map: the entry 'aten::log_softmax': 'aten::softmax' renames no compared operator: the 1 comparison "
        "operator named 'aten::log_softmax' lies inside compared operators, and the pairing compares the top-level "
        "ones (the max_kernel_num option pairs the ops inside a pair of two)."]


def test_readme_example_on_real_pairs(samples: Path, caplog: pytest.LogCaptureFixture):
    """README's example entry is for an NPU run with torch_npu's fused SGD. Pair 4's NPU run uses plain SGD and its
    GPU side no optimizer: the entry renames the NPU's one step op, and no GPU op has the new name. The tb_plugin
    V100 trace steps with plain SGD too: renamed alike on both sides, the two steps pair as without the map."""
    gpu, npu, v100 = _events(samples / GPU), _events(samples / NPU), _events(samples / V100)
    assert _reference_counts()[SGD] == (0, 1) and gpu[SGD] == gpu[FUSED] == 0
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={SGD: FUSED}) == [
        f"op_name_map: the entry '{SGD}': '{FUSED}' renames 1 comparison operator named '{SGD}', and no base "
        f"operator is named '{FUSED}'."]
    assert v100[SGD] == npu[SGD] == 1
    assert _said(caplog, samples / V100, samples / NPU, op_name_map={SGD: FUSED}) == [
        f"op_name_map: the entry '{SGD}': '{FUSED}' renames the 1 base and 1 comparison operators named '{SGD}' "
        "alike, so they pair as by that name without it (an entry pairs a name of one side with another name of "
        "the other)."]


def test_entry_whose_new_name_is_taken_by_other_pairs(samples: Path, caplog: pytest.LogCaptureFixture):
    """Pair 4 with its wrappers opened: the forward ops pair by name, the 5 ``aten::conv2d`` of each measured
    forward among them. Mapping the GPU's 5 ``cudaDeviceSynchronize`` onto ``aten::conv2d`` pairs none of them: the
    NPU's 5 conv2d pair with the GPU's own. A misspelt new name is no op of the other side."""
    gpu, npu = _events(samples / GPU), _events(samples / NPU)
    assert gpu["cudaDeviceSynchronize"] == 5 and npu["cudaDeviceSynchronize"] == 0 and npu["aten::conv2d"] == 5
    assert gpu["[param|clear_cache]"] == 2 and npu["aten::lineer"] == 0
    said = _said(caplog, samples / GPU, samples / NPU, transparent_op=WRAPPERS,
                 op_name_map={"cudaDeviceSynchronize": "aten::conv2d", "[param|clear_cache]": "aten::lineer"})
    assert said == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'aten::conv2d' renames 5 base operators named "
        "'cudaDeviceSynchronize', but none pairs with the comparison side's 5 compared operators named "
        "'aten::conv2d' (each pairs with another base operator); the entry '[param|clear_cache]': 'aten::lineer' "
        "renames 2 base operators named '[param|clear_cache]', and no comparison operator is named 'aten::lineer'."]


def test_entries_that_pair_rows_get_no_line(samples: Path, caplog: pytest.LogCaptureFixture):
    """The PARAM wrapper mapped onto the NPU's DDP forward pairs the two (one row each), and the CUDA pair's
    ``cudaDeviceSynchronize`` mapped onto the ROCm trace's ``hipDeviceSynchronize`` pairs the two sides' calls:
    no line. Neither name lies on the other side (so without the map no row held both)."""
    gpu, npu = _events(samples / GPU), _events(samples / NPU)
    assert gpu["[param|cuda]"] == 1 and npu["[param|cuda]"] == 0 and gpu["DistributedDataParallel.forward"] == 0
    assert _said(caplog, samples / GPU, samples / NPU,
                 op_name_map={"[param|cuda]": "DistributedDataParallel.forward"}) == []
    h100, mi300 = (REPO / "sample_data" / f"bert-small_{g}.json.gz" for g in ("h100", "mi300"))
    assert _events(h100)["hipDeviceSynchronize"] == _events(mi300)["cudaDeviceSynchronize"] == 0
    assert _events(h100)["cudaDeviceSynchronize"] > 0 and _events(mi300)["hipDeviceSynchronize"] > 0
    assert _said(caplog, h100, mi300, op_name_map={"cudaDeviceSynchronize": "hipDeviceSynchronize"}) == []
    # under --disable_details the map is ignored (said so): no line of its entries
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::mm": "aclnnMm"}, disable_details=True) == []


def test_entry_of_ops_opened_by_transparent_op_says_so(samples: Path, caplog: pytest.LogCaptureFixture):
    """A run that asks for no step leaves no op outside a compared step: an entry naming an op that
    ``--transparent_op`` opens (its children compared in its place), or the step marker, said its ops "lie outside
    the compared steps". The AlexNet H200 excerpt (tests/data/kineto) given twice holds one DDP forward and one
    ``ProfilerStep#50`` a side; pair 4's NPU side one DDP forward, and its GPU side one compared
    ``cudaDeviceSynchronize`` (the reference's OperatorCompareStatistic), which the entry maps onto the opened name."""
    h200 = next((REPO / "tests" / "data" / "kineto").glob("alexnet_h200_*.pt.trace.json.gz"))
    with gzip.open(h200, "rt", encoding="utf-8") as f:  # the ops; each has a gpu_user_annotation twin too
        cpu = Counter(e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "user_annotation")
    assert cpu["DistributedDataParallel.forward"] == cpu["ProfilerStep#50"] == 1
    ddp = "DistributedDataParallel.forward"
    assert _said(caplog, h200, h200, disable_module=True, transparent_op=ddp, op_name_map={ddp: "X"}) == [
        "op_name_map: the entry 'DistributedDataParallel.forward': 'X' renames no compared operator: the 1 base and 1 "
        "comparison operators named 'DistributedDataParallel.forward' are seen through by transparent_op (their "
        "children are compared in their place)."]
    assert _said(caplog, h200, h200, disable_module=True, op_name_map={"ProfilerStep#50": "X"}) == [
        "op_name_map: the entry 'ProfilerStep#50': 'X' renames no compared operator: the 1 base and 1 comparison "
        "operators named 'ProfilerStep#50' are step markers, never compared themselves (the ops inside them are)."]
    # the other side's ops of the new name opened
    assert _reference_counts()["cudaDeviceSynchronize"] == (1, 0) and _events(samples / NPU)[ddp] == 1
    map_ = {"cudaDeviceSynchronize": ddp}
    assert _said(caplog, samples / GPU, samples / NPU, transparent_op=ddp, op_name_map=map_) == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'DistributedDataParallel.forward' renames 1 base operator "
        "named 'cudaDeviceSynchronize', and no comparison operator compared is named "
        "'DistributedDataParallel.forward': its 1 op of that name is seen through by transparent_op (its children "
        "are compared in its place)."]


def test_entry_of_ops_outside_the_asked_step_says_so(samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """The words the run above lost stay where they are true: pair 4's NPU export with one cpu_op more, 5 us long
    and starting 10 us after its only step (``ProfilerStep#50``) ends, lies outside the step a run asks for; without
    a step it is a compared op like any, renamed alike on both sides."""
    from stepcopy import with_step_event

    view = json.loads((samples / NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    (dur,) = [e["dur"] for e in view if e.get("name") == "ProfilerStep#50" and e.get("cat") == "cpu_op"]
    late = with_step_event(samples / NPU, tmp_path / "rank0_ascend_pt", "aten::late", dur + 10, 5 - dur)
    assert _said(caplog, late, late, disable_module=True, base_step=50, comparison_step=50,
                 op_name_map={"aten::late": "X"}) == [
        "op_name_map: the entry 'aten::late': 'X' renames no compared operator: the 1 base and 1 comparison operators "
        "named 'aten::late' lie outside the compared steps."]
    assert _said(caplog, late, late, disable_module=True, op_name_map={"aten::late": "X"}) == [
        "op_name_map: the entry 'aten::late': 'X' renames the 1 base and 1 comparison operators named 'aten::late' "
        "alike, so they pair as by that name without it (an entry pairs a name of one side with another name of the "
        "other)."]


def test_entry_that_renames_module_paths_alike_says_so(caplog: pytest.LogCaptureFixture):
    """The bundled BERT pair's module paths: ``{'BertEmbeddings': 'Emb'}`` renames the embedding module and the 5
    modules inside it on each side alike (counted from the raw JSON: the nn.Module events within the one
    ``BertEmbeddings_0`` event of each trace), so module matching pairs the same 84 modules as without it. The
    operators' entries were told so; this one got no word, as the ops' warning leaves a key of a module path to
    module matching."""
    h100, mi300 = (REPO / "sample_data" / f"bert-small_{g}.json.gz" for g in ("h100", "mi300"))
    held = []
    for path in (h100, mi300):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
                      and e.get("cat") == "python_function" and e["name"].startswith("nn.Module:")]
        (emb,) = [e for e in events if "BertEmbeddings" in e["name"]]
        held.append(sum(e["tid"] == emb["tid"] and emb["ts"] <= e["ts"] and e["ts"] + e["dur"] <= emb["ts"] + emb["dur"]
                        for e in events))
    assert held == [6, 6]
    assert _said(caplog, h100, mi300, op_name_map={"BertEmbeddings": "Emb"}) == [
        f"op_name_map: the entry 'BertEmbeddings': 'Emb' renames the {held[0]} base and {held[1]} comparison module "
        "paths holding 'BertEmbeddings' alike, so they pair as without it (an entry pairs a name of one side with "
        "another name of the other)."]
    rates = [compare(str(h100), str(mi300), enable_operator_compare=True, op_name_map=m).frames["match_rate"]
             for m in ({}, {"BertEmbeddings": "Emb"})]
    assert rates[0].equals(rates[1]) and rates[0]["what"].iloc[0] == "modules"


def _cpu_ops(path: Path) -> list[dict]:
    """The complete cpu_op events of an NPU export's trace_view.json."""
    view = json.loads((path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    return [e for e in view if e.get("ph") == "X" and e.get("cat") == "cpu_op"]


def test_entry_whose_key_lies_in_a_call_stack_frame_alone_is_said(samples: Path, caplog: pytest.LogCaptureFixture):
    """Reference pair 1 (NPU text level 1 against level 2, module data on both sides): each side runs 16 ops named
    ``detach``, every one inside another op (torch's ``aten::detach``), and 'detach' is part of call-stack frames
    (``socket.py(503): detach``) and of no nn.Module's name. The entry was left out as a module path's (its key was
    looked up in every python function's name), so it renamed nothing without a word."""
    level1, level2 = samples / NPU, samples / NPU.replace("level1", "level2")
    for side in (level1, level2):
        ops = _cpu_ops(side)
        detach = [e for e in ops if e["name"] == "detach"]
        assert len(detach) == 16
        assert all(any(o is not e and o["tid"] == e["tid"] and float(o["ts"]) <= float(e["ts"])
                       and float(e["ts"]) + float(e["dur"]) <= float(o["ts"]) + float(o["dur"]) for o in ops)
                   for e in detach)
        view = json.loads((side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
        frames = {e["name"] for e in view if e.get("ph") == "X" and e.get("cat") == "python_function"}
        assert "socket.py(503): detach" in frames
        assert not any("detach" in n for n in frames if n.startswith("nn.Module"))
    assert _said(caplog, level1, level2, op_name_map={"detach": "X"}) == [
        "op_name_map: the entry 'detach': 'X' renames no compared operator: the 16 base and 16 comparison operators "
        "named 'detach' lie inside compared operators, and the pairing compares the top-level ones (the "
        "max_kernel_num option pairs the ops inside a pair of two)."]


def _modules_within(path: Path, name: str, covered: str = "") -> int:
    """How many nn.Module events of a Kineto trace lie within (or are) the events whose name holds ``name``: the
    module paths holding it; outside the text of ``covered`` (another key, replaced there first) where given."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
                  and e.get("cat") == "python_function" and e["name"].startswith("nn.Module:")]
    outer = [e for e in events if name in (e["name"].replace(covered, "/") if covered else e["name"])]
    return sum(any(o["tid"] == e["tid"] and o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"]
                   for o in outer) for e in events)


def test_entry_of_one_sides_module_paths_is_said_where_it_pairs_nothing(samples: Path,
                                                                        caplog: pytest.LogCaptureFixture):
    """The bundled BERT H100 trace against the tracelens timesformer H100 one: 'BertLayer' is part of BERT's module
    names alone (its 4 layers and the 64 modules inside them: counted from the raw JSON), and no module of the
    timesformer side is renamed to pair with them, as the two models' top-level modules differ. The entry got no
    word, the modules' line taking only keys both sides' paths hold and the operators' leaving out a key of a module
    name. The other way, an entry that pairs the two top-level modules renames something and gets no line."""
    bert = REPO / "sample_data" / "bert-small_h100.json.gz"
    timesformer = samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    held = _modules_within(bert, "BertLayer")
    assert held == 68 and _modules_within(timesformer, "BertLayer") == 0
    assert _said(caplog, bert, timesformer, op_name_map={"BertLayer": "TimesformerLayer"}) == [
        f"op_name_map: the entry 'BertLayer': 'TimesformerLayer' renames {held} base module paths holding "
        "'BertLayer', but they pair as without it."]
    # one path: BERT's third embedding, a leaf module
    assert _modules_within(bert, "Embedding_2") == 1 and _modules_within(timesformer, "Embedding_2") == 0
    assert _said(caplog, bert, timesformer, op_name_map={"Embedding_2": "Emb"}) == [
        "op_name_map: the entry 'Embedding_2': 'Emb' renames 1 base module path holding 'Embedding_2', but it pairs "
        "as without it."]
    top = {"BertLMHeadModel_0": "TimesformerForVideoClassification_0"}
    assert _modules_within(bert, "BertLMHeadModel_0") == 84
    assert _said(caplog, bert, timesformer, op_name_map=top) == []
    rates = [compare(str(bert), str(timesformer), enable_operator_compare=True, op_name_map=m).frames["match_rate"]
             for m in ({}, top)]
    assert rates[0]["matched"].iloc[0] == 0 and rates[1]["matched"].iloc[0] == 1


#: maps whose keys overlap ('Drop' inside 'Dropout', the longer replacing), chain, swap, rename one side's paths,
#: collide with a sibling's name (pairing otherwise) or pair the two models' top-level modules
MAPS = [{"Dropout_1": "Dropout_2", "Drop": "X", "Dropout": "Y", "out_1": "Z", "BertLayer_2": "BertLayer_3"},
        {"BertLayer": "Layer", "Layer": "BertLayer", "LayerNorm": "Norm", "Linear_1": "Linear_0", "GELU": ""},
        {"BertLMHeadModel_0": "TimesformerForVideoClassification_0", "BertModel": "TimesformerModel",
         "BertEmbeddings": "TimesformerEmbeddings", "Embeddings_0": "Embeddings_1", "Attention": "Attention_"},
        {"TimesformerFor": "Bert", "VideoClassification": "LMHeadModel", "Timesformer": "Bert", "Self": ""}]


def test_module_verdicts_agree_with_matching_again_without_each_entry(samples: Path):
    """``modules.map_entry_verdicts`` aligns again only the children lists holding a path an entry renames; the
    oracle here matches the whole trees again without each entry (what it did, 85 % of a compare under a 200-entry
    map) and compares the paired modules. Real module trees: the bundled BERT pair and BERT against timesformer."""
    from msprof_compare.api import RunContext
    from msprof_compare.compare import modules
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    bert = [str(REPO / "sample_data" / f"bert-small_{g}.json.gz") for g in ("h100", "mi300")]
    timesformer = str(samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz")
    seen, covered = [0, 0], 0
    for base, comp in ((bert[0], bert[1]), (bert[0], timesformer)):
        for mapping in MAPS:
            opts = build_options(enable_operator_compare=True, op_name_map=mapping)[0]
            ctx = RunContext(load_profile(base, opts), load_profile(comp, opts), opts)
            pairs, tb, tc = modules.module_pairs(ctx)
            paired = {(id(x), id(y)) for x, y in pairs if x is not None and y is not None}
            paths = [[m.module_name for t in (s.forward, s.backward) for m in modules._descendants(t)]
                     for s in (tb, tc)]
            oracle = {}
            # the paths an entry renames: those where the pattern of every key matches its key ('Drop' renames no
            # 'Dropout' beside 'Dropout')
            pattern = re.compile("|".join(map(re.escape, sorted((a for a in mapping if a), key=len, reverse=True))))
            for k in mapping:
                rest = {a: b for a, b in mapping.items() if a != k}
                held = [sum(any(m.group(0) == k for m in pattern.finditer(p)) for p in side) for side in paths]
                if k and mapping[k] != k and any(k in p for side in paths for p in side):
                    again = [*modules.match_modules(tb.forward, tc.forward, rest, True),
                             *modules.match_modules(tb.backward, tc.backward, rest, True)]
                    oracle[k] = (held, {(id(x), id(y)) for x, y in again if x is not None and y is not None} != paired)
            got = modules.map_entry_verdicts(mapping, tb, tc, pairs)
            assert got == oracle, (base, comp, mapping)
            for k, (held, changed) in got.items():
                seen[changed] += 1
                covered += sum(held) < sum(k in p for side in paths for p in side)
            # the key without one entry, made from the keys found in a path, is the pattern's of the others
            for k in mapping:
                rest = {a: b for a, b in mapping.items() if a != k}
                keyer = modules._module_keyer(rest)
                for p in {p for side in paths for p in side}:
                    assert modules._renamed(p, [a for a in rest if a and a in p], mapping) == keyer(p), (k, p)
    assert all(seen), seen  # entries that pair otherwise and entries that do not
    assert covered, "no entry whose key lies in another key's text where a path holds it"


def test_a_key_in_another_keys_text_is_counted_where_it_renames(samples: Path, caplog: pytest.LogCaptureFixture):
    """A module path is keyed in one pass, the longest key at each place first, so beside a ``'BertEmbeddings'``
    entry, 'Embedding' in ``BertEmbeddings_0`` (and in the Dropout and LayerNorm paths inside it) is that entry's
    text. The line counted every path holding the key: ``'Embedding'`` "renames the 6 base and 6 comparison module
    paths" where it renames the 3 Embedding modules a side, and ``'Embeddings'``, held only inside
    'BertEmbeddings' on the bundled pair, "the 6 base and 6 comparison ... alike" where it renames none; between
    BERT and timesformer it renames the timesformer side's 5 paths alone, said "6 base and 5 comparison ...
    alike". Counts from the raw JSON, with the longer key's text taken out of the names."""
    h100, mi300 = (REPO / "sample_data" / f"bert-small_{g}.json.gz" for g in ("h100", "mi300"))
    timesformer = samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    assert [_modules_within(p, "Embedding") for p in (h100, mi300)] == [6, 6]
    held = [_modules_within(p, "Embedding", "BertEmbeddings") for p in (h100, mi300)]
    assert held == [3, 3]
    assert _said(caplog, h100, mi300, op_name_map={"Embedding": "E", "BertEmbeddings": "X"})[0].startswith(
        f"op_name_map: the entry 'Embedding': 'E' renames the {held[0]} base and {held[1]} comparison module paths "
        "holding 'Embedding' alike, so they pair as without it")
    both = {"BertEmbeddings": "X", "Embeddings": "Y"}
    assert [_modules_within(p, "Embeddings", "BertEmbeddings") for p in (h100, mi300)] == [0, 0]
    assert _said(caplog, h100, mi300, op_name_map=both)[0].endswith(
        "; the entry 'Embeddings': 'Y' renames no module path: where one holds 'Embeddings', the text of another key "
        "covers it, replaced there first (the map replaces the longest key at each place, from the left).")
    there = _modules_within(timesformer, "Embeddings", "BertEmbeddings")
    assert there == 5 and _modules_within(h100, "Embeddings", "BertEmbeddings") == 0
    assert _said(caplog, h100, timesformer, op_name_map=both)[0].endswith(
        f"; the entry 'Embeddings': 'Y' renames {there} comparison module paths holding 'Embeddings', but they pair "
        "as without it.")
    # an entry the others make redundant renames its paths all the same: 'Bert' would key them alike without it
    redundant = {"Bert": "Timesformer", "BertLayer": "TimesformerLayer"}
    assert _said(caplog, h100, timesformer, op_name_map=redundant)[0].endswith(
        "; the entry 'BertLayer': 'TimesformerLayer' renames 68 base module paths holding 'BertLayer', but they pair "
        "as without it.")


def test_entry_of_an_op_and_a_module_path_idle_in_both_gets_both_lines(samples: Path,
                                                                       caplog: pytest.LogCaptureFixture):
    """Reference pair 1 (NPU text level 1 against level 2): each side steps once with plain SGD, and the step op is
    also a node of the module trees (the optimizer's). README's entry renames both sides' step ops alike and their
    module paths alike: neither pairing uses it, so each says so, the operators' line first. The operators' line
    leaves out only a key that pairs modules (``pairs_modules``), the modules' line only a key that pairs ops across
    two names; a key paired alike on both sides pairs neither."""
    from msprof_compare.api import RunContext
    from msprof_compare.compare import optree
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    level1, level2 = samples / NPU, samples / NPU.replace("level1", "level2")
    assert _events(level1)[SGD] == _events(level2)[SGD] == 1 and _events(level1)[FUSED] == _events(level2)[FUSED] == 0
    ops = (f"the entry '{SGD}': '{FUSED}' renames the 1 base and 1 comparison operators named '{SGD}' alike, so they "
           "pair as by that name without it (an entry pairs a name of one side with another name of the other)")
    assert _said(caplog, level1, level2, op_name_map={SGD: FUSED}) == [
        f"op_name_map: {ops}.",
        f"op_name_map: the entry '{SGD}': '{FUSED}' renames the 1 base and 1 comparison module paths holding '{SGD}' "
        "alike, so they pair as without it (an entry pairs a name of one side with another name of the other)."]
    opts = build_options(enable_operator_compare=True, op_name_map={SGD: FUSED})[0]
    pairs = optree.operator_pairs(RunContext(load_profile(str(level1), opts), load_profile(str(level2), opts), opts))
    assert not optree.entry_pairs_ops(pairs, SGD)
    assert optree.idle_map_entries({SGD: FUSED}, pairs) == [ops]
    assert optree.idle_map_entries({SGD: FUSED}, pairs, pairs_modules=[SGD]) == []
