"""The OverallMetrics sheet and the console summary (reference-1 §9, §10).

Each side's ``Breakdown`` comes from its loader family (GPU Kineto, NPU text,
NPU DB) through ``breakdown_of`` and is cached in ``ctx.cache`` under
``"breakdowns"`` (a (base, comparison) tuple), so later comparators (Summary) reuse it. All
figures stay integer ns until they are rendered here (ms in the sheet,
seconds on the console).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import on_side, side_named
from ..model import Profile
from ..options import Options
from ..textsafe import and_list, text_width
from .breakdown import BUCKETS, Breakdown, Bucket, hccl_group_stem, peak_reserved_gb
from .classify import Keywords, load_keywords
from .table import STYLE_FLOAT, STYLE_INT, STYLE_RATIO, Column, Sheet, exact_diffs, half_up_ns, plain_frame, ratio_of
from .waterfall import unsplit

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

SHEET_NAME = "OverallMetrics"
SUMMARY_TITLE = "Model Profiling Time Distribution"
BLUE = "blue"
LIGHT_BLUE = "light_blue"

COLUMNS = [
    Column("Index", STYLE_INT, 40),
    Column("Duration(ms)", STYLE_FLOAT, 20), Column("Duration Ratio", STYLE_RATIO, 20), Column("Number", STYLE_INT, 10),
    Column("Duration(ms)", STYLE_FLOAT, 20), Column("Duration Ratio", STYLE_RATIO, 20), Column("Number", STYLE_INT, 10),
    Column("Diff Duration(ms)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 10),
]

#: (label, buckets) of the computing category blocks: parent row then one row per bucket.
_BLOCKS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Flash Attention (Forward)", (("Flash Attention (Forward) (Cube)", "fa_fwd_cube"),
                                   ("Flash Attention (Forward) (Vector)", "fa_fwd_vector"))),
    ("Flash Attention (Backward)", (("Flash Attention (Backward) (Cube)", "fa_bwd_cube"),
                                    ("Flash Attention (Backward) (Vector)", "fa_bwd_vector"))),
    ("Conv (Forward)", (("Conv (Forward) (Cube)", "conv_fwd_cube"), ("Conv (Forward) (Vector)", "conv_fwd_vector"))),
    ("Conv (Backward)", (("Conv (Backward) (Cube)", "conv_bwd_cube"),
                         ("Conv (Backward) (Vector)", "conv_bwd_vector"))),
    ("Matmul", (("Matmul (Cube)", "matmul_cube"), ("Matmul (Vector)", "matmul_vector"))),
    ("Page Attention", ()),
    ("Vector", (("Vector (Trans)", "vector_trans"), ("Vector (No Trans)", "vector_notrans"))),
    ("Cube", ()),
    ("SDMA (Tensor Move)", ()),
)
_SINGLE = {"Page Attention": "page_attention", "Cube": "other_cube", "SDMA (Tensor Move)": "sdma_tm"}
#: Each computing bucket's OverallMetrics row name ("conv_bwd_vector" -> "Conv (Backward) (Vector)"), for notes.
ROW_OF_BUCKET = {**{b: row for _, rows in _BLOCKS for row, b in rows}, **{b: row for row, b in _SINGLE.items()}}


# --------------------------------------------------------------------------- breakdown dispatch


def breakdown_of(profile: Profile, opts: Options, kw: Keywords | None = None, side: str = "") -> Breakdown:
    """The time breakdown of one profile, computed by its loader family's module; ``side``: the profile's, which
    its warnings name ("base side", ...; ``RunContext.side``)."""
    kw = kw or load_keywords()
    if profile.source == "kineto":
        from .breakdown_gpu import gpu_breakdown

        return gpu_breakdown(profile, opts, kw, side)
    if profile.source == "ascend_text":
        from .breakdown_npu import npu_breakdown

        return npu_breakdown(profile, opts, kw)
    if profile.source == "ascend_db":
        from .breakdown_db import db_breakdown

        return db_breakdown(profile, opts, kw)
    raise ValueError(f"no breakdown for profile source {profile.source!r}")


def breakdowns(ctx: RunContext) -> tuple[Breakdown, Breakdown]:
    """Both sides' breakdowns, computed once per run."""
    if "breakdowns" not in ctx.cache:
        kw = ctx.keywords or load_keywords()  # once per run: both sides classify with the same lists
        made = []
        for p in (ctx.base, ctx.comparison):
            with on_side(ctx.side(p)):  # a side's refusal (no compute stream) names it, as a loader's error does
                made.append(breakdown_of(p, ctx.options, kw, ctx.side(p)))
        pair = (made[0], made[1])
        ctx.cache["breakdowns"] = pair
        ctx.cache["breakdowns.keywords"] = kw
        _gpu_without_memory(ctx)
    return ctx.cache["breakdowns"]


def _gpu_without_memory(ctx: RunContext) -> None:
    """The original's INFO line for a GPU side without device memory events (reference-1 §4: Mem Usage 0), unless
    the memory comparison names that side itself: its "Can't find any memory event in the file: <path>" (with why
    and what to do beside a side with memory) followed this line on reference pair 4, the one fact said twice. The
    memory comparison speaks of every side without records unless exactly one side has no torch op, when it leaves
    its sheets out with a warning of that side (``optree.one_sided``, asked here without its warning)."""
    opts = ctx.options
    if opts.enable_memory_compare and sum(not ctx.has_ops(p) for p in (ctx.base, ctx.comparison)) != 1:
        return
    for p in (ctx.base, ctx.comparison):
        if p.source == "kineto" and peak_reserved_gb(p) is None:
            # which side: both may be GPU
            log.info("%s: Gpu profiling data doesn't contain memory info.%s", p.path, side_named(ctx.side(p)))


def breakdown_keywords(ctx: RunContext) -> Keywords | None:
    """The keyword lists the cached breakdowns were classified with (None before ``breakdowns``): a note that
    names a list's words names the ones the run used, which a user's MSPROF_COMPARE_CONFIG file may change."""
    return ctx.cache.get("breakdowns.keywords")


def find_breakdowns(ctx: RunContext) -> tuple[Breakdown, Breakdown] | None:
    """The two sides' Breakdowns as this run cached them (``breakdowns``: the overall comparator, or the Summary
    for the --fail_on_regression gate); None when neither made them."""
    return ctx.cache.get("breakdowns")


# --------------------------------------------------------------------------- sheet rows


def _ms(ns: int | float) -> float:
    return ns / 1e6


class _Side:
    """One side's E2E time, which every row's Duration Ratio divides by."""

    def __init__(self, bd: Breakdown) -> None:
        self.e2e_ms = _ms(bd.e2e_ns)

    def cell(self, ms: float, number: Any) -> list[Any]:
        ratio = ms / self.e2e_ms if self.e2e_ms else float("inf")
        return [ms, ratio, number]


_MISSING = [0.0, 0.0, "/"]


class _Rows:
    def __init__(self, base: Breakdown, comparison: Breakdown) -> None:
        self.b, self.c = _Side(base), _Side(comparison)
        self.rows: list[list[Any]] = []
        self.styles: list[str] = []

    def add(self, label: str, style: str, base: tuple[float, Any] | None, comp: tuple[float, Any] | None) -> bool:
        """Append a row unless both durations are exactly zero (reference-1 §9.3)."""
        bcell = self.b.cell(*base) if base is not None else list(_MISSING)
        ccell = self.c.cell(*comp) if comp is not None else list(_MISSING)
        if bcell[0] == 0 and ccell[0] == 0:
            return False
        ratio = ratio_of(bcell[0], ccell[0])
        self.rows.append([label, *bcell, *ccell, None, ratio])  # Diff Duration(ms): ``diffs``, once all are added
        self.styles.append(style)
        return True

    def diffs(self) -> None:
        """Each row's Diff Duration(ms), in one pass over the rows: the exact change (the cells are whole ns) to
        0.01 ms, a half away from zero (``exact_diffs``, the rule of every sheet's duration diffs). The float
        difference rounded as reference-2 §0.1 says read one change three ways: an attention kernel 5 us longer
        made Computing Time +0.01, Free Time -0.01 and its ``\tFree`` 0.00 (0.0050000000000000044,
        -0.0050000000000003375 and -0.004999999999999893 ms)."""
        if self.rows:
            diffs = exact_diffs([r[1] for r in self.rows], [r[4] for r in self.rows], 10**6).tolist()
            for row, diff in zip(self.rows, diffs, strict=True):
                row[7] = diff


def _bucket_pair(bd: Breakdown, names: tuple[str, ...]) -> tuple[float, int]:
    bks: list[Bucket] = [bd.buckets[n] for n in names]
    return _ms(sum(b.ns for b in bks)), sum(b.count for b in bks)


def _group_label(key: str, pg: dict[str, str]) -> str:
    name = pg.get(key)
    return f"\t{name}: {key}" if name else f"\t{key}"


def _pair_label(a: str, b: str, pg: dict[str, str], names: dict[str, str]) -> str:
    return f"\t\t{pg.get(a) or names.get(a, a)} & {pg.get(b) or names.get(b, b)}"


def _stem_pairs(bkeys: list[str], ckeys: list[str]) -> dict[str, str]:
    """Base key -> comparison key of the HCCL groups that differ only by their creation time.

    A DB export names a group by its HCCL name, which ends in the time the group was created, so the same group
    of two runs of one job never had an equal key: OverallMetrics showed it leaving (Diff Ratio 0) and another
    arriving (INF), and no Wait or Transmit change could be read. A key whose other side has an equal one keeps
    that pair, and a name without its time that two groups of one side share pairs nothing (as in the Summary's
    waterfall)."""
    def by_stem(keys: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for k in keys:
            stem = hccl_group_stem(k)
            if stem is not None:
                out.setdefault(stem, []).append(k)
        return out

    # stems counted over every key of a side, the exactly paired ones too: the waterfall strips a name only where
    # no other group of its side shares the stem, so S_t1 + S_t2 against S_t1 + S_t3 pairs S_t2 with S_t3 in
    # neither
    bset, cset = set(bkeys), set(ckeys)
    bs, cs = by_stem(bkeys), by_stem(ckeys)
    return {b[0]: cs[stem][0] for stem, b in bs.items()
            if len(b) == 1 and len(cs.get(stem, ())) == 1 and b[0] not in cset and cs[stem][0] not in bset}


def _group_rows(rows: _Rows, base: Breakdown, comp: Breakdown) -> dict[str, str]:
    """Communication group blocks (reference-1 §9.4 item 26): pg-name pairs, then key pairs (an HCCL name of one
    run with that of another), then comparison-only. Returns key -> the name its block shows, for the keys of
    either side paired by their HCCL names without the creation time."""

    def by_pg(bd: Breakdown) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for key in bd.groups:
            out.setdefault(bd.pg_names.get(key) or "unknown", []).append(key)
        return out

    bpg, cpg = by_pg(base), by_pg(comp)
    blocks: list[tuple[str, str | None, str | None]] = []   # (label, base key, comparison key)
    used_b: set[str] = set()
    used_c: set[str] = set()
    for pg, bkeys in bpg.items():
        if pg != "unknown" and len(bkeys) == 1 and len(cpg.get(pg, ())) == 1:
            blocks.append((f"\t{pg}: Communication", bkeys[0], cpg[pg][0]))
            used_b.add(bkeys[0])
            used_c.add(cpg[pg][0])
    stems = _stem_pairs([k for k in base.groups if k not in used_b], [k for k in comp.groups if k not in used_c])
    names = {k: str(hccl_group_stem(k)) for pair in stems.items() for k in pair}
    for key in base.groups:
        if key in used_b:
            continue
        ckey = key if (key in comp.groups and key not in used_c) else stems.get(key)
        if ckey is not None:
            used_c.add(ckey)
        label = _group_label(key, base.pg_names) if ckey in (None, key) else f"\t{names[key]}"
        blocks.append((label, key, ckey))
    for key in comp.groups:
        if key not in used_c:
            blocks.append((_group_label(key, comp.pg_names), None, key))

    for label, bkey, ckey in blocks:
        bg = base.groups.get(bkey) if bkey is not None else None
        cg = comp.groups.get(ckey) if ckey is not None else None

        def val(g: dict[str, int] | None, part: str | None) -> tuple[float, str] | None:
            if g is None:
                return None
            ns = g.get("wait", 0) + g.get("transmit", 0) if part is None else g.get(part, 0)
            return _ms(ns), "/"

        rows.add(label, LIGHT_BLUE, val(bg, None), val(cg, None))
        rows.add("\t\tWait", "", val(bg, "wait"), val(cg, "wait"))
        rows.add("\t\tTransmit", "", val(bg, "transmit"), val(cg, "transmit"))
    return names


def _overlap_rows(rows: _Rows, base: Breakdown, comp: Breakdown, names: dict[str, str]) -> None:
    """``\\tUncovered Communication Overlapped`` and one row per group pair (NPU only); ``names``: the groups
    shown under their HCCL names without the creation time (``_group_rows``), so that their pairs pair too."""
    bpairs = {_pair_label(a, b, base.pg_names, names): ns for (a, b), ns in base.group_pairs.items()}
    cpairs = {_pair_label(a, b, comp.pg_names, names): ns for (a, b), ns in comp.group_pairs.items()}
    if not bpairs and not cpairs:
        return
    # the total covers every pair, also two whose labels coincide (two groups of one pg name), whose row shows the
    # last one's figure as the original's label-keyed rows do
    btot = (_ms(sum(base.group_pairs.values())), "/") if bpairs else None
    ctot = (_ms(sum(comp.group_pairs.values())), "/") if cpairs else None
    rows.add("\tUncovered Communication Overlapped", LIGHT_BLUE, btot, ctot)
    for label in list(bpairs) + [k for k in cpairs if k not in bpairs]:
        b = (_ms(bpairs[label]), "/") if label in bpairs else None
        c = (_ms(cpairs[label]), "/") if label in cpairs else None
        rows.add(label, "", b, c)


def overall_rows(base: Breakdown, comp: Breakdown) -> tuple[list[list[Any]], list[str]]:
    """The OverallMetrics rows (9 cells each) and their fills, in the original's order."""
    rows = _Rows(base, comp)
    rows.add("Computing Time", BLUE, (_ms(base.computing_ns), base.computing_count),
             (_ms(comp.computing_ns), comp.computing_count))
    for name in list(base.mc2) + [n for n in comp.mc2 if n not in base.mc2]:
        bm, cm = base.mc2.get(name), comp.mc2.get(name)
        rows.add(f"\t{name}", LIGHT_BLUE, (_ms(bm.ns), bm.count) if bm else None,
                 (_ms(cm.ns), cm.count) if cm else None)
        rows.add("\t\tComputing", "", (_ms(bm.computing_ns), "/") if bm else None,
                 (_ms(cm.computing_ns), "/") if cm else None)
        rows.add("\t\tCommunication", "", (_ms(bm.communication_ns), "/") if bm else None,
                 (_ms(cm.communication_ns), "/") if cm else None)
    for label, children in _BLOCKS:
        names = tuple(b for _, b in children) or (_SINGLE[label],)
        rows.add(f"\t{label}", LIGHT_BLUE, _bucket_pair(base, names), _bucket_pair(comp, names))
        for child, bucket in children:
            rows.add(f"\t\t{child}", "", _bucket_pair(base, (bucket,)), _bucket_pair(comp, (bucket,)))
    rows.add("\tOther", LIGHT_BLUE, (_ms(base.other_ns), "/"), (_ms(comp.other_ns), "/"))
    rows.add("Uncovered Communication Time", BLUE, (_ms(base.uncovered_comm_ns), "/"),
             (_ms(comp.uncovered_comm_ns), "/"))
    _overlap_rows(rows, base, comp, _group_rows(rows, base, comp))
    rows.add("Free Time", BLUE, (_ms(base.free_ns), "/"), (_ms(comp.free_ns), "/"))
    rows.add("\tSDMA", "", (_ms(base.sdma_stream.ns), "/"), (_ms(comp.sdma_stream.ns), "/"))
    rows.add("\tFree", "", (_ms(base.free_ns - base.sdma_stream.ns), "/"),
             (_ms(comp.free_ns - comp.sdma_stream.ns), "/"))
    rows.add("E2E Time", BLUE, (_ms(base.e2e_ns), "/"), (_ms(comp.e2e_ns), "/"))
    rows.diffs()
    return rows.rows, rows.styles


# --------------------------------------------------------------------------- console summary


def _s(ns: int | float) -> float:
    """A console cell's seconds: whole ns to 0.001 s, a half away from zero, so that ``:.3f`` shows the exact
    rounding. ``ns / 1e9`` rounded by its binary value: 2.5 ms showed 0.003s but 4.5 ms 0.004s."""
    return half_up_ns(ns, 10**9, 3)


#: The console's columns of an op's categories, each the sum of its buckets (``summary_table``), shown where a
#: side holds time in them
_OP_CATEGORY_COLUMNS = (("Conv Time(Forward)(Num)", ("conv_fwd_cube", "conv_fwd_vector")),
                        ("Conv Time(Backward)(Num)", ("conv_bwd_cube", "conv_bwd_vector")),
                        ("Flash Attention Time(Forward)(Num)", ("fa_fwd_cube", "fa_fwd_vector")),
                        ("Flash Attention Time(Backward)(Num)", ("fa_bwd_cube", "fa_bwd_vector")),
                        ("Paged Attention Time(Num)", ("page_attention",)))


def _cube_cell(bd: Breakdown) -> str:
    """The console's Cube Time(Num) cell: Matmul and the other cube kernels (MC2's computing time with them)."""
    cube = ("matmul_cube", "matmul_vector", "other_cube")
    t = sum(bd.buckets[n].ns for n in cube) + bd.mc2_ns
    return f"{_s(t):.3f}s({sum(bd.buckets[n].count for n in cube)})"


def _vector_cell(bd: Breakdown) -> str:
    names = ("vector_trans", "vector_notrans")
    return f"{_s(sum(bd.buckets[n].ns for n in names)):.3f}s({sum(bd.buckets[n].count for n in names)})"


def summary_table(base: Breakdown, comp: Breakdown, steps: tuple[int, int] = (-1, -1),
                  communication_sheet: bool = True) -> dict[str, Any]:
    """The console table (reference-1 §10) as {"title", "headers", "rows", "notes"}: base row first; "notes" are
    ours (``table_notes``; ``steps``: each side's step where its breakdown ignores it, else -1;
    ``communication_sheet``: whether the run writes CommunicationCompare, which a note points to)."""
    sides = (base, comp)
    headers: list[str] = [""]
    cols: list[list[str]] = [[bd.kind for bd in sides]]

    def add(header: str, cells: list[str]) -> None:
        headers.append(header)
        cols.append(cells)

    def timed(names: tuple[str, ...]) -> list[tuple[int, int]]:  # (ns, count) per side
        return [(sum(bd.buckets[n].ns for n in names), sum(bd.buckets[n].count for n in names)) for bd in sides]

    if not any(bd.hide_op_details for bd in sides):
        add("Cube Time(Num)", [_cube_cell(bd) for bd in sides])
        add("Vector Time(Num)", [_vector_cell(bd) for bd in sides])
    for header, names in _OP_CATEGORY_COLUMNS:
        vals = timed(names)
        if any(t for t, _ in vals):
            add(header, [f"{_s(t):.3f}s({n})" for t, n in vals])
    if any(bd.lccl.ns for bd in sides):
        add("Lccl Time(Num)", [f"{_s(bd.lccl.ns):.3f}s({bd.lccl.count})" for bd in sides])
    # GPU never computes "Other" for the console (reference-1 §8.3)
    other = [bd.other_ns if bd.kind == "NPU" else 0 for bd in sides]
    if any(other):
        add("Other Time", [f"{_s(v):.3f}s" for v in other])
    add("Computing Time", [f"{_s(bd.computing_ns):.3f}s" for bd in sides])
    if any(bd.memory_gb for bd in sides):
        add("Mem Usage", [f"{bd.memory_gb:.2f}G" for bd in sides])
    comm = [_s(bd.uncovered_comm_ns) for bd in sides]
    wait = [_s(bd.wait_ns) for bd in sides]
    base_cell = f"{comm[0]: .3f}s({wait[0]:.3f}s)" if base.wait_ns else f"{comm[0]: .3f}s( / )"
    add("Uncovered Communication Time(Wait Time)", [base_cell, f"{comm[1]: .3f}s({wait[1]:.3f}s)"])
    if any(bd.rdma_bandwidth for bd in sides):
        add("RDMA Bandwidth", [f"{bd.rdma_bandwidth:.3f}GB/s" for bd in sides])
    if any(bd.sdma_bandwidth for bd in sides):
        add("SDMA Bandwidth", [f"{bd.sdma_bandwidth:.3f}GB/s" for bd in sides])
    sdma = [(bd.buckets["sdma_tm"].ns + bd.sdma_stream.ns, bd.buckets["sdma_tm"].count + bd.sdma_stream.count)
            for bd in sides]
    if any(t for t, _ in sdma):
        add("SDMA Time(Num)", [f"{_s(t):.3f}s({n})" for t, n in sdma])
    add("Free Time", [f"{_s(bd.free_ns):.3f}s" for bd in sides])
    npu = any(bd.kind == "NPU" for bd in sides)  # "not minimal profiling": a side is NPU (reference-1 §8.4)
    add("E2E Time(Not minimal profiling)" if npu else "E2E Time", [f"{_s(bd.e2e_ns):.3f}s" for bd in sides])
    rows = [[c[i] for c in cols] for i in range(2)]
    return {"title": SUMMARY_TITLE, "headers": headers, "rows": rows,
            "notes": table_notes(base, comp, headers, steps, communication_sheet)}


#: The console's columns of computing categories (``summary_table``)
_CATEGORY_HEADERS = frozenset({"Cube Time(Num)", "Vector Time(Num)", *(h for h, _ in _OP_CATEGORY_COLUMNS)})


#: A zero Wait Time as the notes under the table name it: the original's base cell shows it as "( / )", not
#: 0.000s (reference-1 §10, item 11), which the notes quoted as "' / ' (0 s)", punctuation a reader took for garbage.
_BASE_ZERO = "(0 s, which the original's base cell shows as a slash)"
_BOTH_ZERO = "(0 s, shown as a slash on the base row as in the original, 0.000s on the comparison row)"


def table_notes(base: Breakdown, comp: Breakdown, headers: list[str], steps: tuple[int, int] = (-1, -1),
                communication_sheet: bool = True) -> list[str]:
    """Lines under the console table for cells that read as measurements but are none: the original prints a
    side without an E2E time (a legacy MindSpore timeline without its Overlap Analysis lane) as a row of
    0.000s, a side that recorded no memory as 0.00G beside the other side's peak, and a side with no bandwidth
    figure to read (a GPU trace, a DB export, a text export without communication.json) as 0.000GB/s beside
    the other side's bandwidth: each said once, here, where the cell is (they were log lines); and a side whose
    computing has no category (a lone timeline, a Level0 export) beside one whose has, as 0.000s(0) category
    cells; and the split side's Cube / Vector figures, which the original's table then has no column for."""
    notes = []
    # the category columns a side whose computing has no category shows as 0.000s(0): where exactly one side's is
    # split (the waterfall's and the validity check's rule), the other's zeros beside it read as work it did not do
    # (PARAM AlexNet's Conv Time(Forward) 0.006s(40) above a MindSpore timeline's 0.000s(0))
    unsplit = [bd.categorised_ns > 0 for bd in (base, comp) if bd.computing_ns > 0]
    category_cells = [h for h in headers if h in _CATEGORY_HEADERS] if len(unsplit) == 2 and len(set(unsplit)) == 2 \
        else []
    # a Level0 pair (reference pair 2) has the same unread Wait Time on both rows: one line names both, where two
    # said the same reason a line apart
    zero = [wait_zero(bd) for bd in (base, comp)]
    unread = [bd.wait_unread if why == "unread" else "" for bd, why in zip((base, comp), zero, strict=True)]
    both_unread = unread[0] == unread[1] and unread[0].startswith("its ")
    # the plane-rule note, the same on both rows (a self-compare of the level-1 text export: 112.541 ms of
    # Notify_Wait each), is one line too; two sides that hold different Notify_Wait keep a line each
    planes = [_plane_reason(bd, step, communication_sheet) if why == "plane" else ""
              for bd, step, why in zip((base, comp), steps, zero, strict=True)]
    both_planes = bool(planes[0]) and planes[0] == planes[1]
    # two sides without E2E time (reference pair 9c, two legacy MindSpore timelines) have one reason: one line,
    # where two said it a line apart
    both_blank = not base.e2e_ns and not comp.e2e_ns
    for (side, bd), plane in zip((("Base", base), ("Comparison", comp)), planes, strict=True):
        if not bd.e2e_ns:
            if not both_blank:
                notes.append(f"{side} row: no time breakdown (no E2E time), so its 0.000s cells are not measurements.")
            elif side == "Base":
                notes.append("Both rows: no time breakdown (no E2E time), so their 0.000s cells are not measurements.")
        elif category_cells and not bd.categorised_ns:
            # an NPU side's SDMA Time(Num) adds its TensorMove copies, a category, to its SDMA tasks on compute
            # streams: without categories and without such tasks, its 0.000s(0) beside the other side's TensorMove
            # copies (the level-1 export's 0.001s(11)) read as no copies, where the Level0 export's 11 TensorMove
            # kernels sit in Other Time; so it did beside a GPU's memory copies (the H200 AlexNet's 0.000s(21),
            # which the GPU-vs-NPU note compares with TensorMove): the side's own TensorMove kernels say it there
            other = comp if bd is base else base
            cells = category_cells + (["SDMA Time(Num)"] if "SDMA Time(Num)" in headers and bd.kind == "NPU"
                                      and not bd.sdma_stream.count
                                      and (other.buckets["sdma_tm"].count or bd.unsplit_moves.count) else [])
            notes.append(f"{side} row: its computing time is not split into categories (see the validity checks), so "
                         f"its {and_list(cells)} 0.000s(0) "
                         f"{'are not measurements' if len(cells) > 1 else 'is not a measurement'}: its "
                         "Computing Time is all Other Time.")
        if both_planes:
            if side == "Base":
                notes.append(f"Both rows: their Wait Time {_BOTH_ZERO} "
                             + plane.format(whose="each side's"))
        elif plane:
            shown = "0.000s" if side == "Comparison" else _BASE_ZERO
            notes.append(f"{side} row: its Wait Time {shown} {plane.format(whose='its')}")
        # a Level0 export's Wait Time is 0 for want of task types, not of waiting: 0.000s beside a level-1 side's
        # 0.003s read as the wait gone
        elif both_unread:
            if side == "Base":
                notes.append(f"Both rows: their Wait Time {_BOTH_ZERO} "
                             f"is not a measurement: each side's {bd.wait_unread.removeprefix('its ')}.")
        elif wait_zero(bd) == "unread":
            shown = "0.000s" if side == "Comparison" else _BASE_ZERO
            notes.append(f"{side} row: its Wait Time {shown} is not a measurement: {bd.wait_unread}.")
        # apart from the time note: a side without E2E time (a lone timeline) may have no memory either, and its
        # 0.00G is no 0.000s cell
        if "Mem Usage" in headers and not bd.memory_gb:
            why = bd.memory_missing or "no peak reserved memory recorded"
            notes.append(f"{side} row: {why}, so its Mem Usage shows 0.00G, the largest of them." if bd.memory_zero
                         else f"{side} row: {why}, so its Mem Usage 0.00G is not a measurement.")
        # only where the other side has a bandwidth (else no column, nothing reads 0): a side without figures
        # to read, not a measured 0 (a side whose transfers took no time)
        zero = [h for h, v in (("RDMA Bandwidth", bd.rdma_bandwidth), ("SDMA Bandwidth", bd.sdma_bandwidth))
                if h in headers and not v]
        if zero and bd.bandwidth_missing:
            cells = " and ".join(zero)
            notes.append(f"{side} row: {bd.bandwidth_missing}, so its {cells} 0.000GB/s "
                         f"{'are not measurements' if len(zero) > 1 else 'is not a measurement'}.")
        groupless = _groupless_note(bd, comp if bd is base else base)
        if groupless:
            notes.append(f"{side} row: {groupless}")
    # the original hides Cube Time(Num) and Vector Time(Num) on both rows where one side has no PMU figures (a
    # Level0 text export): the other side's Matmul and Vector time (level-1 DB: 0.001s(14), 0.004s(96)) then sat in
    # no column, its Computing Time more than its category cells and Other Time add up to, without a word
    hidden = [bd for bd in (base, comp) if bd.hide_op_details]
    if len(hidden) == 1:
        side, bd, other = ("Comparison", comp, "base") if hidden[0] is base else ("Base", base, "comparison")
        if bd.e2e_ns and hidden[0].e2e_ns and bd.categorised_ns:  # both E2E: OverallMetrics is written
            notes.append(f"{side} row: its Cube Time(Num) {_cube_cell(bd)} and Vector Time(Num) {_vector_cell(bd)} "
                         "have no column here, as in the original, which leaves both out where a side has no PMU "
                         "figures to split its computing by; the OverallMetrics sheet holds them, by category "
                         f"(the {other} side: {hidden[0].categories_missing or 'no PMU figures'}).")
    return notes


def wait_zero(bd: Breakdown) -> str:
    """Why a side's Wait Time of 0 is no measurement, as the notes under the console table say it (``table_notes``):
    "plane" where its communication groups' least-waiting planes hold no Notify_Wait while others do (a text
    export, ``Breakdown.notify_wait_ns``), "unread" where no task reads as Notify_Wait (a Level0 export's HCCL tasks
    without a task type, ``Breakdown.wait_unread``), "" where the Wait is a reading or there is none (no E2E time, no
    group: a GPU side). One rule for the table's notes and the Summary's (``wait_measured``)."""
    if not (bd.e2e_ns and bd.groups) or bd.wait_ns:
        return ""
    return "plane" if bd.notify_wait_ns else "unread" if bd.wait_unread else ""


def wait_measured(bd: Breakdown) -> bool:
    """Whether a side's Wait Time is a measurement: the side has communication groups and E2E time, and its Wait
    is no 0 that reads nothing (``wait_zero``). A GPU side has no group, so no Wait."""
    return bool(bd.e2e_ns and bd.groups) and not wait_zero(bd)


def wait_split(base: Breakdown, comp: Breakdown) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((base Wait, comparison Wait), (base Transmit, comparison Transmit)), ns summed over each side's
    communication groups as OverallMetrics' group rows give them (their sum is the groups' uncovered communication,
    the waterfall's group steps); None unless both sides' Wait is measured (``wait_measured``)."""
    if not (wait_measured(base) and wait_measured(comp)):
        return None
    parts = [tuple(sum(int(g.get(part, 0)) for g in bd.groups.values()) for bd in (base, comp))
             for part in ("wait", "transmit")]
    return (parts[0][0], parts[0][1]), (parts[1][0], parts[1][1])


#: Group rows named in full by ``_groupless_note``; more are counted.
_GROUPS_NAMED = 3


def _groupless_note(bd: Breakdown, other: Breakdown) -> str:
    """Why a GPU side's 0 in OverallMetrics' communication group rows is no reading: its collective kernels belong
    to no HCCL group, so beside an NPU side's groups (reference-1 §9.4 item 26: a side without the group reads 0)
    hta's 2-rank trace read Group 0 Communication 0.000 under its own Uncovered Communication Time 357.343 ms, as if
    its NCCL all-reduces were gone. "" where the side is no GPU trace, ran no uncovered communication (its 0 is
    then a reading: the AlexNet H200 trace of reference pair 4) or no group row is shown."""
    if bd.kind != "GPU" or bd.groups or not bd.uncovered_comm_ns:
        return ""
    # a row is shown where its figure is not 0 (reference-1 §9.3), which none of this side's is
    shown = [_group_label(k, other.pg_names).lstrip("\t") for k, g in other.groups.items()
             if g.get("wait", 0) + g.get("transmit", 0)]
    if not shown:
        return ""
    if len(shown) == 1:
        rows = f"{shown[0]} row and the rows under it"
    else:
        named = shown[:_GROUPS_NAMED] + ([f"{len(shown) - _GROUPS_NAMED:,} more"] if len(shown) > _GROUPS_NAMED else [])
        rows = (f"rows of the other side's {len(shown):,} communication groups ({and_list(named)}), with the rows "
                f"under them{' and Uncovered Communication Overlapped' if any(other.group_pairs.values()) else ''},")
    return (f"a GPU trace's collective kernels belong to no HCCL communication group, so OverallMetrics' {rows} "
            f"read 0 on its side, which is not a measurement: its {_s(bd.uncovered_comm_ns):.3f}s of uncovered "
            "communication is in Uncovered Communication Time alone.")


def _plane_reason(bd: Breakdown, step: int, communication_sheet: bool = True) -> str:
    """The plane-rule Wait Time note after its cell, ``{whose}`` left for the planes' owner ("its", "each
    side's"): a text export's Wait Time is its least-waiting plane's (reference-1 §5.7), often one with no
    Notify_Wait, and its 0.000s beside CommunicationCompare's Notify_Wait rows (level-1 excerpt: 112.541 ms) read
    as no wait. A run without the communication comparison (``--enable_profiling_compare`` alone, as the README's
    multi-rank and CI examples run) writes no such sheet: the note says so, where it sent the reader to a sheet the
    workbook does not have."""
    absent = "" if communication_sheet else \
        "; this run writes no CommunicationCompare: the enable_communication_compare option adds it"
    return ("is that of the HCCL plane that waits least in each communication group, as the original measures a text "
            f"export, here a plane with no Notify_Wait; {{whose}} planes hold {bd.notify_wait_ns / 1e6:,.3f} ms of "
            "Notify_Wait " + (f"in all (CommunicationCompare's Notify_Wait rows{absent})." if step < 0 else
                              "over the whole profile, which its Wait Time covers too (CommunicationCompare's "
                              f"Notify_Wait rows hold step {step}'s alone{absent})."))


#: The widest the Index column grows for a long label (`index_column`).
INDEX_MAX_WIDTH = 100


def index_column(labels: list[Any]) -> Column:
    """The Index column, 40 wide as the original's, wider where a label needs it (2 characters an indent level):
    a DB export's HCCL group, ``\t90.91.105.46%enp189s0f0_60000_0_1736410538306028`` against a text export's
    ``Group 0 Communication``, was cut at 40 in the creation time that tells two runs' groups apart."""
    need = max((text_width(t.lstrip("\t")) + 2 * (len(t) - len(t.lstrip("\t"))) + 2
                for t in labels if isinstance(t, str)), default=0)
    return replace(COLUMNS[0], width=max(COLUMNS[0].width, min(need, INDEX_MAX_WIDTH)))


def overall_frame(rows: list[list[Any]]) -> pd.DataFrame:
    """The OverallMetrics sheet's data, ``pd.DataFrame(rows, columns=["c0", ...])``, built by columns: the
    row-wise constructor's inference cost ~0.4 ms for its ~20 rows (the same frame: ``plain_frame`` infers a
    column of mixed cells as pandas does, tested)."""
    labels = [f"c{i}" for i in range(len(COLUMNS))]
    if not rows or any(len(r) != len(labels) for r in rows):
        return pd.DataFrame(rows, columns=labels)
    return plain_frame(dict(zip(labels, (list(c) for c in zip(*rows, strict=True)), strict=True)))


def breakdown_frame(base: Breakdown, comp: Breakdown) -> pd.DataFrame:
    """Tidy per-side figures (ns and counts) for API users."""
    recs = []
    for side, bd in (("base", base), ("comparison", comp)):
        for name in BUCKETS:
            recs.append((side, name, bd.buckets[name].ns, bd.buckets[name].count))
        for name, ns, n in (("computing", bd.computing_ns, bd.computing_count),
                            ("uncovered_communication", bd.uncovered_comm_ns, -1), ("wait", bd.wait_ns, -1),
                            ("lccl", bd.lccl.ns, bd.lccl.count),
                            ("sdma_stream", bd.sdma_stream.ns, bd.sdma_stream.count),
                            ("other", bd.other_ns, -1), ("free", bd.free_ns, -1), ("e2e", bd.e2e_ns, -1)):
            recs.append((side, name, int(ns), int(n)))
    # by columns: the same frame as ``pd.DataFrame(recs, columns=...)``, without its row-wise inference (~0.1 ms)
    return plain_frame({c: list(v) for c, v in zip(("side", "metric", "ns", "count"), zip(*recs, strict=True),
                                                  strict=True)})


# --------------------------------------------------------------------------- comparator


def _with_side(reason: str, side: str | None) -> tuple[str, str]:
    """``reason`` and its side, in one parenthesis (``side_named``): a reason that ends with an aside ("read as 0,
    as the original does (a block without a time ...)") read "(...) (comparison side)", two in a row."""
    if reason.endswith(")"):
        depth = 0
        for i in range(len(reason) - 1, -1, -1):  # the "(" that opens the closing aside
            depth += {")": 1, "(": -1}.get(reason[i], 0)
            if depth == 0:
                if i > 0 and reason[i - 1] == " ":
                    return reason[:i - 1], side_named(side, reason[i + 1:-1])
                break
    return reason, side_named(side)


def build(ctx: RunContext) -> list[Sheet]:
    """OverallMetrics sheet (omitted when either E2E is 0) plus ``ctx.summary`` and ``ctx.frames["overall"]``."""
    base, comp = breakdowns(ctx)
    # one side without categories beside a split one: the category check ("One side's computing time is not split
    # into categories") names that side with this reason, so its own line here would say the same again
    told = unsplit(base, comp)
    # each line ends with its side, as the loaders' notes do: a pair of ranks of one job gave two lines that
    # differed by one digit of a path (pair 2's "categorised computing rows ... are absent", one per side)
    for p, bd in ((ctx.base, base), (ctx.comparison, comp)):
        for reason in bd.missing:
            if not (told and bd.categories_missing and not bd.categorised_ns
                    and reason.endswith(f" are absent: {bd.categories_missing}")):
                log.warning("%s%s", *_with_side(reason, ctx.side(p)))
    # a text export's breakdown ignores a step (reference-1 §1.4): its Wait Time note sums the whole profile too,
    # and says so where CommunicationCompare's rows hold the step's alone (step 50 of the level-1 export split in
    # two: 112.541 ms of Notify_Wait, none of it in the step)
    # (``checks.whole_profile_sides``' rule)
    opts = ctx.options
    steps = (opts.base_step if opts.base_step >= 0 and ctx.base.source == "ascend_text" else -1,
             opts.comparison_step if opts.comparison_step >= 0 and ctx.comparison.source == "ascend_text" else -1)
    ctx.summary = summary_table(base, comp, steps, bool(opts.enable_communication_compare))
    ctx.frames["overall"] = breakdown_frame(base, comp)
    if not base.e2e_ns or not comp.e2e_ns:
        # the original leaves the sheet out without a word (reference-1 §9.1); the reason was logged above
        # one path once: a self-compare named its one input twice ("No E2E time in X and X")
        none = " and ".join(dict.fromkeys(p.path for p, bd in ((ctx.base, base), (ctx.comparison, comp))
                                          if not bd.e2e_ns))
        log.log(ctx.options.notice_level(), "No E2E time in %s: OverallMetrics and the Summary sheet are left out",
                none)
        return []
    rows, styles = overall_rows(base, comp)
    data = overall_frame(rows)
    columns = [index_column([r[0] for r in rows]), *COLUMNS[1:]]
    return [Sheet(SHEET_NAME, columns, data, base_span=(1, 3), comparison_span=(4, 6), row_styles=styles)]
