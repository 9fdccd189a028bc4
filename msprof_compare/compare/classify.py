"""Categorisation of computing time (reference-1 §3.6-§3.8), shared by GPU, NPU text and DB.

Every loader family calls the same two functions:

1. ``cube_ops(names, ts, dur, tid, backward_tid=...)`` builds the start-sorted
   "cpu cube ops" (torch ops whose name holds a FA / Conv / Matmul keyword);
2. ``categorize(dur, flow_ts, is_cube, ops, ...)`` gives each kernel a label,
   one of ``breakdown.BUCKETS`` or ``"mc2"``; ``fill_buckets`` then sums the
   labels into ``Breakdown.buckets``.

The original walks kernels sorted by the start time of their launching flow
("unmatched kernels first") with a pointer into the cube ops that never moves
backwards: for a kernel whose flow started at ``t`` it skips ops that *end*
before ``t`` and takes the current op if it *starts* at or before ``t``.
Because the kernels are visited in ascending ``t``, every op skipped before
has ``end < t``, so the pointer always lands on the first op (in start order)
whose end is >= t. That is ``searchsorted`` on the running maximum of the op
ends, so the whole walk is one vectorised lookup with the same result.

NPU callers pass their extra predicates (page attention, tensor move, MC2,
trans kernels, the kernel ``Type`` fallback) as boolean / text arrays aligned
with the kernels; GPU callers leave them out.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ..errors import ConfigError
from ..model import GPU_COMM_PREFIXES, factorize, knows_backward_thread
from .breakdown import Breakdown, Bucket

#: Environment variable naming an ini file that replaces the default keyword lists.
CONFIG_ENV = "MSPROF_COMPARE_CONFIG"
_DEFAULT_INI = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compare_config.ini")
_KEYS = ("FA_MASK", "CONV_MASK", "MATMUL_MASK", "CUBE_MASK", "TRANS_MASK", "MC2_KERNEL")
#: Task types (args "Task Type") of the Ascend Hardware lane that run an operator's kernel (reference-1 §3.1).
COMPUTE_TASK_TYPES = ("AI_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "AI_VECTOR_CORE", "FFTS_PLUS")
#: Optional key of ours: GPU kernel- and cpu-op-name prefixes after which no mask word counts
PREFIX_KEY = "NOT_CUBE_PREFIX"
#: Optional key of ours: words of GPU collective kernels that are no NCCL / RCCL kernels
COMM_KEY = "GPU_COMM_MASK"

#: Default of ``GPU_COMM_MASK`` (not the original's rule, see docs/differences.md): collectives that run in
#: kernels of their own library, not NCCL's: PyTorch symmetric memory (``multimem_all_reduce_kernel``,
#: ``two_shot_all_reduce_kernel``), vLLM / SGLang custom all-reduce (``cross_device_reduce_1stage``),
#: TensorRT-LLM / FlashInfer (``oneShotAllReduceKernel``, ``allreduce_fusion_kernel_...``), AMD quick reduce.
#: Matched in the kernel's function name only (template arguments and parameters can name reduce functors).
GPU_COLLECTIVE_WORDS = ("all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "reducescatter",
                        "all_to_all", "alltoall", "cross_device_reduce")

#: Words that make a cpu op (or an NPU op Type) "backward" (reference-1 §3.1).
BACKWARD_WORDS = ("bwd", "backward", "back", "grad")

#: Kinds of cpu cube op, in the original's check order (FA, then Conv, then Matmul).
OP_NONE, OP_FA, OP_CONV, OP_MATMUL = 0, 1, 2, 3

#: The label ``categorize`` gives MC2 kernels (not a bucket: they go to ``Breakdown.mc2``).
MC2 = "mc2"


@dataclass(frozen=True)
class Keywords:
    """The ``[OP_MASK]`` keyword sets, lower-cased."""

    fa: frozenset[str]
    conv: frozenset[str]
    matmul: frozenset[str]
    cube: frozenset[str]
    trans: frozenset[str]
    mc2: frozenset[str]
    #: GPU kernel- and cpu-op-name prefixes after which no mask word counts (``NOT_CUBE_PREFIX``, ours, optional)
    not_cube_prefix: tuple[str, ...]
    #: words of GPU collective kernels outside NCCL / RCCL (``GPU_COMM_MASK``, ours, optional)
    gpu_comm: frozenset[str] = frozenset(GPU_COLLECTIVE_WORDS)


def load_keywords(path: str | None = None) -> Keywords:
    """Read the keyword lists: ``path``, else ``$MSPROF_COMPARE_CONFIG``, else the packaged default.

    All six keys of section ``OP_MASK`` are mandatory, as in the original. Read anew on every
    call (no process-wide cache, so an edited file counts); a run reads it once, before loading
    (``api._compare``, which hands it on as ``RunContext.keywords``).
    """
    # A file named by the environment may have been set long ago: its errors say where the name came from.
    hint = f"named by {CONFIG_ENV}; unset it to use the packaged lists" if not path and os.environ.get(CONFIG_ENV) \
        else None
    path = path or os.environ.get(CONFIG_ENV) or _DEFAULT_INI
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep key case for the error messages
    try:
        with open(path, encoding="utf-8") as fh:
            parser.read_file(fh)
    except OSError as exc:  # the path leads the line already; strerror does not repeat it
        raise ConfigError(path, f"cannot read keyword configuration: {exc.strerror or exc}", hint) from None
    except (UnicodeDecodeError, configparser.Error) as exc:
        raise ConfigError(path, f"cannot read keyword configuration: {exc}", hint) from None
    if not parser.has_section("OP_MASK"):
        raise ConfigError(path, "Missing required section: OP_MASK", hint)
    sec = {k.upper(): v for k, v in parser.items("OP_MASK")}
    values = []
    for key in _KEYS:
        if key not in sec:
            raise ConfigError(path, f"Missing required key '{key}' in section 'OP_MASK'.", hint)
        values.append(_words(sec[key]))
    # our keys: a file written for the original (six keys) gets the defaults; an empty value none
    prefixes = _words(sec[PREFIX_KEY]) if PREFIX_KEY in sec else frozenset(INDUCTOR_VECTOR_PREFIXES)
    comm = _words(sec[COMM_KEY]) if COMM_KEY in sec else frozenset(GPU_COLLECTIVE_WORDS)
    return Keywords(*values, not_cube_prefix=tuple(sorted(prefixes)), gpu_comm=comm)


def _words(value: str) -> frozenset[str]:
    return frozenset(w.strip().lower() for w in value.split(",") if w.strip())


# --------------------------------------------------------------------------- name predicates


def per_unique(names: Iterable[str], test: Callable[[str], bool], lower: bool = True) -> np.ndarray:
    """Apply a str -> bool test once per distinct name (names repeat a lot), to the lower-cased
    name unless ``lower`` is False; None reads as ""."""
    arr = names if isinstance(names, np.ndarray) and names.dtype == object else np.asarray(names, dtype=object)
    if arr.size == 0:
        return np.zeros(0, dtype=bool)
    if arr.size <= SET_FLAGS_MAX:
        got = _set_flags(arr, test, lower)
        if got is not None:
            return got
    codes, uniq = factorize(arr)
    return distinct_flags(uniq, test, lower)[codes]


#: Up to this many values ``per_unique`` tests the distinct texts of a set: most columns it sees (flow
#: categories, device task names) have a handful of texts of which none or all pass, and numbering the rows
#: (``factorize``, 30-90 us for a few hundred rows) was most of its time.
SET_FLAGS_MAX = 20_000


def _str_set(items: list) -> list[str] | None:
    """The distinct values of ``items`` (in no set order); None unless every one is a ``str``."""
    try:
        uniq = set(items)
    except TypeError:  # an unhashable value
        return None
    return list(uniq) if all(type(u) is str for u in uniq) else None


def _set_flags(arr: np.ndarray, test: Callable[[str], bool], lower: bool) -> np.ndarray | None:
    """``per_unique`` by the set of distinct values; None unless every one is a ``str`` (a missing value reads
    as "" through ``factorize``, and pandas decides what is missing)."""
    items = arr.tolist()
    uniq = _str_set(items)
    if uniq is None:
        return None
    hits = {u for u in uniq if test(u.lower() if lower else u)}
    if not hits:
        return np.zeros(arr.size, dtype=bool)
    if len(hits) == len(uniq):
        return np.ones(arr.size, dtype=bool)
    return np.fromiter(map(hits.__contains__, items), dtype=bool, count=len(items))


def distinct_flags(uniq: np.ndarray, test: Callable[[str], bool], lower: bool = True) -> np.ndarray:
    """``test`` of each distinct name of a factorization (``per_unique`` without the factorization, for a caller
    that has the codes already); None reads as ""."""
    texts = ("" if u is None else str(u) for u in uniq.tolist())
    return np.fromiter((test(t.lower() if lower else t) for t in texts), dtype=bool, count=len(uniq))


def per_unique_many(names: Iterable[str], tests: Sequence[tuple[Callable[[str], bool], bool]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
    """(codes, one bool array per ``(test, lower)`` over the distinct names): several predicates of one
    column with a single factorization and one pass over its distinct names (each ``per_unique`` call
    factorized the column again). Index a flag array with ``codes`` (or a subset of them) for per-row flags."""
    arr = names if isinstance(names, np.ndarray) and names.dtype == object else np.asarray(names, dtype=object)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64), [np.zeros(0, dtype=bool) for _ in tests]
    codes, uniq = factorize(arr)
    texts = ["" if u is None else str(u) for u in uniq.tolist()]
    low = [t.lower() for t in texts] if any(lower for _, lower in tests) else texts
    return codes, [np.fromiter(map(test, low if lower else texts), dtype=bool, count=len(texts))
                   for test, lower in tests]


def contains_any(names: Iterable[str], words: Iterable[str]) -> np.ndarray:
    """Per name: does its lower-cased text contain any of ``words``."""
    return per_unique(names, holds_any(words))


def is_backward_name(names: Iterable[str]) -> np.ndarray:
    """Per name: holds a backward word (``bwd``, ``backward``, ``back``, ``grad``)."""
    return contains_any(names, BACKWARD_WORDS)


#: Words inside which a CUBE_MASK word does not count on GPU kernel names (not the original's rule, see
#: docs/differences.md): ``convert`` / ``conversion`` hold "conv" in dtype and layout conversions (cuDNN's
#: ``convert_dq_to_16bits``, vLLM's ``_typeConvert``, Triton's ``float_conversion_kernel``), ``fbgemm``
#: holds "gemm" in the FBGEMM library's namespace ``fbgemm_gpu::`` of embedding, permute and quantize kernels,
#: ``fmhareduction`` holds "fmha" in TensorRT-LLM's / FlashInfer's ``fmhaReductionKernel``, which only combines
#: the partial results of a multi-CTA decode attention.
NOT_CUBE_WORDS = ("convert", "conversion", "fbgemm", "fmhareduction")

#: Default of ``NOT_CUBE_PREFIX``: name prefixes of the kernels torch.compile (Inductor) generates for fused
#: pointwise, reduction, persistent-reduction and foreach code (not the original's rule, see docs/differences.md).
#: Their names list the aten ops fused into them (``triton_red_fused_..._addmm_clone_convolution_...``,
#: ``..._fmha_v3_fwd_...``), whose matrix work runs in other kernels, so a CUBE_MASK word after the prefix does
#: not count. Template kernels (``triton_tem_``: Inductor's GEMM, convolution and flex-attention code) are Cube
#: through CUBE_MASK's ``triton_tem_``.
INDUCTOR_VECTOR_PREFIXES = ("triton_poi_", "triton_red_", "triton_per_", "triton_for_")


def _inside(name: str, at: int, word: str, outer: str) -> bool:
    """Is the occurrence of ``word`` at ``name[at:]`` part of an occurrence of ``outer``."""
    off = outer.find(word)
    while off >= 0:
        if at >= off and name.startswith(outer, at - off):
            return True
        off = outer.find(word, off + 1)
    return False


def _prefix_limit(name: str, prefixes: tuple[str, ...]) -> int:
    """Where a mask word may start at the latest: within a ``NOT_CUBE_PREFIX`` prefix the name starts with,
    anywhere in other names."""
    if not name.startswith(prefixes):  # nearly every name: one C-level test of all prefixes
        return len(name)
    return next((len(p) for p in prefixes if name.startswith(p)), len(name))


def cube_name_test(words: Iterable[str], not_words: Iterable[str] = NOT_CUBE_WORDS,
                   vector_prefixes: Iterable[str] = INDUCTOR_VECTOR_PREFIXES) -> Callable[[str], bool]:
    """str -> bool for lower-cased GPU kernel names: holds one of ``words`` somewhere other than inside one
    of ``not_words`` (a not-word counts only for the words it strictly contains, so a CUBE_MASK that lists
    ``convert`` itself still matches it). ``convolve_x_convert`` is cube by its first "conv". In a name
    that starts with one of ``vector_prefixes`` only a word starting inside the prefix counts (so a
    CUBE_MASK that lists ``triton_poi`` still matches those kernels)."""
    words = tuple(words)
    prefixes = tuple(vector_prefixes)
    outers = {w: tuple(o for o in not_words if w in o and w != o) for w in words}

    def test(name: str) -> bool:
        limit = _prefix_limit(name, prefixes)
        for w in words:
            at = name.find(w)
            while 0 <= at < limit:
                if not any(_inside(name, at, w, o) for o in outers[w]):
                    return True
                at = name.find(w, at + 1)
        return False

    return test


def is_cube_kernel_name(names: Iterable[str], kw: Keywords | None = None) -> np.ndarray:
    """GPU cube kernels: lower-cased name contains a CUBE_MASK word outside ``NOT_CUBE_WORDS``, not after a
    ``NOT_CUBE_PREFIX`` prefix."""
    kw = kw or load_keywords()
    return per_unique(names, cube_name_test(kw.cube, vector_prefixes=kw.not_cube_prefix))


def _last_identifier(text: str) -> str:
    words = text.split()
    return words[-1].rsplit("::", 1)[-1] if words else ""


def kernel_function_name(name: str) -> str:
    """The function's own name in a demangled kernel name: no return type, namespaces, template arguments,
    parameters or what follows them (``void (anonymous namespace)::f<c10::BFloat16, 16>(int*) const`` -> ``f``).

    The parameter list is the first ``(`` outside brackets right after the name or its template arguments
    (``(anonymous namespace)`` follows a space). Brackets that do not balance (``operator<``): the text before
    the first bracket; a name without brackets: its last word, without namespaces."""
    stack: list[str] = []
    kept: list[str] = []
    prev = ""
    for ch in name:
        if not stack and ch == "(" and (prev.isalnum() or prev in "_>"):
            break  # the parameter list
        if ch in "<(":
            stack.append(ch)
        elif ch == ")" or (ch == ">" and stack and stack[-1] == "<"):  # ">" inside "(...)" is an operator
            if not stack or stack.pop() != ("(" if ch == ")" else "<"):
                stack.append("!")
                break
        elif not stack:
            kept.append(ch)
        prev = ch
    if stack:  # unbalanced
        cut = min((i for i in (name.find("<"), name.find("(")) if i >= 0), default=len(name))
        return _last_identifier(name[:cut]) or name
    return _last_identifier("".join(kept)) or name


#: torch.compile (Inductor) kernel name prefixes: its generated kernels are named after the ops around them
#: (``triton_poi_fused_all_reduce_0`` copies into an all-reduce's buffer), so they are never collectives.
INDUCTOR_PREFIXES = (*INDUCTOR_VECTOR_PREFIXES, "triton_tem_")


def word_starts(name: str, low: str, word: str) -> bool:
    """Does ``word`` occur in ``low`` (the lower-cased ``name``) where a word starts: at the beginning, after a
    character that is no letter, or at a capital after a small letter (``oneShotAllReduceKernel``), so that
    ``small_reduce_kernel`` holds no "all_reduce"."""
    at = low.find(word)
    while at >= 0:
        if at == 0 or not name[at - 1].isalpha() or (name[at].isupper() and name[at - 1].islower()):
            return True
        at = low.find(word, at + 1)
    return False


def gpu_comm_test(kw: Keywords) -> Callable[[str], bool]:
    """str -> bool for GPU kernel names (as written): a collective. NCCL / RCCL by prefix, case-insensitively
    (the original's rule); other libraries' collectives by a ``GPU_COMM_MASK`` word starting a word of the
    function name (``kernel_function_name``), never torch.compile's generated kernels (``INDUCTOR_PREFIXES``)."""
    words = tuple(sorted(kw.gpu_comm))

    def test(name: str) -> bool:
        low = name.lower()
        if low.startswith(GPU_COMM_PREFIXES):
            return True
        if not any(w in low for w in words):  # most names: no bracket walk
            return False
        base = kernel_function_name(name)
        low = base.lower()
        return not low.startswith(INDUCTOR_PREFIXES) and any(word_starts(base, low, w) for w in words)

    return test


def is_gpu_comm_kernel_name(names: Iterable[str], kw: Keywords | None = None) -> np.ndarray:
    """GPU collective kernels (communication, not computing): see ``gpu_comm_test``."""
    return per_unique(names, gpu_comm_test(kw or load_keywords()), lower=False)


def trans_test(kw: Keywords) -> Callable[[str], bool]:
    """str -> bool for lower-cased NPU kernel names: contains a TRANS_MASK word."""
    return holds_any(kw.trans)


def holds_any(words: Iterable[str]) -> Callable[[str], bool]:
    """str -> bool: the text contains one of ``words`` (``any(w in text for w in words)``), as one C-level
    search: the generator per name cost more than the tests (~1.5 % of a profiling compare of NPU pair 1)."""
    ws = tuple(words)
    if not ws:
        return lambda n: False
    if "" in ws:  # every text holds the empty word
        return lambda n: True
    if len(ws) == 1:
        w = ws[0]
        return lambda n: w in n
    search = re.compile("|".join(map(re.escape, ws))).search
    return lambda n: search(n) is not None


def mc2_test(kw: Keywords) -> Callable[[str], bool]:
    """str -> bool for lower-cased NPU kernel names: equals a MC2_KERNEL word exactly."""
    words = kw.mc2
    return lambda n: n in words


def is_trans_kernel_name(names: Iterable[str], kw: Keywords | None = None) -> np.ndarray:
    """NPU trans kernels: lower-cased name contains a TRANS_MASK word."""
    return per_unique(names, trans_test(kw or load_keywords()))


def is_mc2_name(names: Iterable[str], kw: Keywords | None = None) -> np.ndarray:
    """NPU MC2 kernels: lower-cased name equals a MC2_KERNEL word exactly."""
    return per_unique(names, mc2_test(kw or load_keywords()))


#: Kernels HCCL runs for a collective (AIV mode; AI-CPU): msprof's Overlap Analysis leaves tasks with these name
#: endings out of Computing (overlap_analysis_processor.cpp). Case as msprof writes and tests them.
HCCL_KERNEL_SUFFIXES = ("AivKernel", "AicpuKernel")


def hccl_test(name: str) -> bool:
    """For NPU kernel names as written: ends with an HCCL_KERNEL_SUFFIX."""
    return name.endswith(HCCL_KERNEL_SUFFIXES)


def is_hccl_kernel(names: Iterable[str]) -> np.ndarray:
    """NPU kernels of a collective (communication work, no computing): name ends with an HCCL_KERNEL_SUFFIX."""
    return per_unique(names, hccl_test, lower=False)


def cube_op_kind(names: Iterable[str], kw: Keywords | None = None) -> np.ndarray:
    """Per cpu op name: OP_FA, OP_CONV, OP_MATMUL or OP_NONE (first matching set wins).

    As in kernel names, in an op name starting with a ``NOT_CUBE_PREFIX`` prefix only a word starting
    inside the prefix counts: torch.compile runs its generated kernels under ops of the kernel's name
    (``triton_poi_fused__scaled_dot_product_flash_attention_cat_...``, a pointwise copy feeding the
    attention), which name the fused aten ops but do none of their work."""
    kw = kw or load_keywords()
    prefixes = tuple(kw.not_cube_prefix)
    # one alternation per set: its leftmost match starts where the first-found word of the set does, so
    # "some word found before ``limit``" is one search (was a find per word and name)
    sets = [(re.compile("|".join(map(re.escape, sorted(words)))), k)
            for words, k in ((kw.fa, OP_FA), (kw.conv, OP_CONV), (kw.matmul, OP_MATMUL)) if words]

    def kind(n: str) -> int:
        limit = _prefix_limit(n, prefixes)
        for rx, k in sets:
            m = rx.search(n)
            if m is not None and m.start() < limit:
                return k
        return OP_NONE

    arr = np.asarray(names, dtype=object)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int8)
    words = [w for words in (kw.fa, kw.conv, kw.matmul) for w in words]
    items = arr.tolist() if arr.size <= SET_FLAGS_MAX else None
    texts = _str_set(items) if items is not None else None
    if texts is not None:  # the distinct texts of a set, and the few cube ops looked up per row
        low = [t.lower() for t in texts]
        found = {texts[i]: k for i in _holding_any(low, words) if (k := kind(low[i])) != OP_NONE}
        if not found:
            return np.zeros(arr.size, dtype=np.int8)
        return np.fromiter(map(found.get, items, repeat(OP_NONE)), dtype=np.int8, count=len(items))
    codes, uniq = factorize(arr)
    low = ["" if u is None else str(u).lower() for u in uniq.tolist()]
    kinds = np.zeros(len(low), dtype=np.int8)  # OP_NONE
    for i in _holding_any(low, words):
        kinds[i] = kind(low[i])
    return kinds[codes]


def _holding_any(texts: list[str], words: Iterable[str]) -> list[int]:
    """Indices of the ``texts`` that contain one of ``words``, and maybe a few more (where an occurrence
    spans two texts); the caller tests each one found in full.

    Most op names hold no cube word: a C-level ``find`` of each word in the texts joined by line breaks
    replaces a regex search per text (which cost more than the rest of the classification). Every
    occurrence inside a text starts within that text's span, so no text holding a word is missed.
    """
    words = [w for w in words if w]
    if not words or not texts:
        return []
    text = "\n".join(texts)
    at: list[int] = []
    for w in words:
        i = text.find(w)
        while i >= 0:
            at.append(i)
            i = text.find(w, i + 1)
    if not at:
        return []
    if len(at) <= 32 and text.count("\n") == len(texts) - 1:
        # a few occurrences and no line break inside a text: the line breaks before each one number its text
        return sorted({text.count("\n", 0, i) for i in at})
    starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
    return np.unique(np.searchsorted(starts, at, side="right") - 1).tolist()


# --------------------------------------------------------------------------- cube ops


@dataclass(frozen=True)
class CubeOps:
    """The cpu cube ops, sorted by start (stable): the targets of the pointer walk.

    ``backward`` is already resolved per op: FA by name; Conv by name or
    ``tid == backward_tid`` (text parsers) ; Matmul has no direction.
    ``reach`` is the running maximum of ``end``.
    """

    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray
    backward: np.ndarray
    reach: np.ndarray

    def __len__(self) -> int:
        return int(self.start.size)


def cube_ops(names: Iterable[str], ts: np.ndarray, dur: np.ndarray, tid: np.ndarray | None = None,
             backward_tid: int | None = None, kw: Keywords | None = None) -> CubeOps:
    """Select and sort the cpu cube ops among all torch ops.

    ``ts``/``dur`` are int64 ns. Pass ``tid`` and ``backward_tid`` (GPU: tid of
    the first fwdbwd flow end; NPU text: of the last) to make Conv ops on the
    backward thread backward; the DB parser passes neither (name only).
    """
    kinds = cube_op_kind(names, kw)
    sel = np.flatnonzero(kinds != OP_NONE)
    ts = np.asarray(ts, dtype=np.int64)[sel]
    end = ts + np.asarray(dur, dtype=np.int64)[sel]
    kinds = kinds[sel]
    sel_names = np.asarray(names, dtype=object)[sel]
    back = is_backward_name(sel_names)
    if tid is not None and knows_backward_thread(backward_tid):
        on_bwd_thread = np.asarray(tid, dtype=np.int64)[sel] == int(backward_tid)
        back = back | ((kinds == OP_CONV) & on_bwd_thread)
    order = np.argsort(ts, kind="stable")
    ts, end, kinds, back = ts[order], end[order], kinds[order], back[order]
    reach = np.maximum.accumulate(end) if end.size else end
    return CubeOps(ts, end, kinds, back, reach)


def covering_op(ops: CubeOps, flow_ts: np.ndarray) -> np.ndarray:
    """Index into ``ops`` of the cube op each kernel is attributed to, -1 if none.

    Kernels with ``flow_ts == 0`` (no launching flow) get -1: only 0 is "none" (reference-1 §3.7, "if
    flow_start_time is non-zero"), a trace whose times are negative (a rebased trace) has flows all the same.
    """
    t = np.asarray(flow_ts, dtype=np.int64)
    out = np.full(t.size, -1, dtype=np.int64)
    if len(ops) == 0 or t.size == 0:
        return out
    p = np.searchsorted(ops.reach, t, side="left")
    ok = (t != 0) & (p < len(ops))
    pc = np.where(ok, p, 0)
    ok &= ops.start[pc] <= t
    out[ok] = p[ok]
    return out


# --------------------------------------------------------------------------- categorisation


def processing_order(flow_ts: np.ndarray) -> np.ndarray:
    """The original's visiting order: stable sort by flow start, kernels without a flow first.

    Only the MC2 figures depend on it (the first-seen order of their names, and their communication time: the
    C_CORE_SQE pointer walks the MC2 kernels in this order, reference-1 §5.6); labels do not.
    """
    t = np.asarray(flow_ts, dtype=np.int64)
    key = np.where(t > 0, t, np.iinfo(np.int64).min)
    return np.argsort(key, kind="stable")


#: Every label ``categorize`` gives, by code: the labels are set as small codes and read out once (object arrays
#: of labels cost a new str per kernel and an object compare per mask).
_LABELS = ("other_cube", "vector_notrans", "vector_trans",
           "fa_fwd_cube", "fa_fwd_vector", "fa_bwd_cube", "fa_bwd_vector",
           "conv_fwd_cube", "conv_fwd_vector", "conv_bwd_cube", "conv_bwd_vector",
           "matmul_cube", "matmul_vector", MC2, "sdma_tm", "page_attention")
_LABEL_ARRAY = np.array(_LABELS, dtype=object)
_CODE = {label: i for i, label in enumerate(_LABELS)}


def _type_fallback(types: np.ndarray) -> np.ndarray:
    """NPU step 5: label code by the op ``Type`` text (-1 where it does not apply). Always Cube."""
    arr = np.asarray(types, dtype=object)
    codes, uniq = factorize(arr)

    def label(t: object) -> int:
        t = "" if t is None else str(t).lower()
        if "flashattention" in t:
            return _CODE["fa_bwd_cube" if ("bwd" in t or "grad" in t) else "fa_fwd_cube"]
        if t.startswith("conv"):
            return _CODE["conv_bwd_cube" if any(w in t for w in BACKWARD_WORDS) else "conv_fwd_cube"]
        if "matmul" in t:
            return _CODE["matmul_cube"]
        return -1

    if not len(uniq):
        return np.full(arr.size, -1, dtype=np.int8)
    return np.array([label(u) for u in uniq.tolist()], dtype=np.int8)[codes]


def categorize(dur: np.ndarray, flow_ts: np.ndarray, is_cube: np.ndarray, ops: CubeOps, *,
               is_trans: np.ndarray | None = None, page_attention: np.ndarray | None = None,
               tensor_move: np.ndarray | None = None, mc2: np.ndarray | None = None,
               npu_type: np.ndarray | None = None) -> np.ndarray:
    """Label every kernel with its computing category (reference-1 §3.7), in input order.

    Arguments are aligned per kernel: ``dur`` (ns; unused for labels, checked
    for length), ``flow_ts`` (int64 ns start of the launching flow, 0 for
    none), ``is_cube`` (bool). NPU-only predicates (bool arrays, or ``npu_type``
    texts for the Type fallback) default to "never". Priority: page attention,
    tensor move, MC2, covering cpu cube op, Type fallback, cube, trans, vector.

    Returns an object array of labels from ``breakdown.BUCKETS`` or ``MC2``.
    """
    n = int(np.asarray(dur).size)
    is_cube = np.asarray(is_cube, dtype=bool)
    if is_cube.size != n or np.asarray(flow_ts).size != n:
        raise ValueError("categorize: per-kernel arrays differ in length")
    codes = np.where(is_cube, _CODE["other_cube"], _CODE["vector_notrans"]).astype(np.int8)
    if is_trans is not None:
        codes[np.asarray(is_trans, dtype=bool) & ~is_cube] = _CODE["vector_trans"]
    if npu_type is not None and n:
        fb = _type_fallback(npu_type)
        has = fb >= 0
        codes[has] = fb[has]
    idx = covering_op(ops, flow_ts)
    hit = idx >= 0
    if hit.any():
        k = ops.kind[idx[hit]]
        bwd = ops.backward[idx[hit]]
        # the cube label of the op's kind and direction; its vector label is the next code
        cube_code = np.where(k == OP_FA, np.where(bwd, _CODE["fa_bwd_cube"], _CODE["fa_fwd_cube"]),
                             np.where(k == OP_CONV, np.where(bwd, _CODE["conv_bwd_cube"], _CODE["conv_fwd_cube"]),
                                      _CODE["matmul_cube"]))
        codes[hit] = cube_code + ~is_cube[hit]
    # the NPU specials come first in priority, so they overwrite everything
    for mask, name in ((mc2, MC2), (tensor_move, "sdma_tm"), (page_attention, "page_attention")):
        if mask is not None:
            codes[np.asarray(mask, dtype=bool)] = _CODE[name]
    return _LABEL_ARRAY[codes]


#: NPU op types (kernel_details.csv's Type, a DB export's opType; lower-cased) that convert a tensor's layout or data
#: type and compute nothing: TransData between NCHW / ND and the private formats that the NPU's Cube units read
#: (NC1HWC0, FRACTAL_Z: their Input and Output Formats differ), Transpose (a permutation of dimensions) and Cast
#: (their Input and Output Data Types differ). By the Type the export gives, not the kernel's name: TRANS_MASK's
#: "cast" is in BroadcastTo too, and a TransData kernel in Conv's Vector row is named ``trans_TransData_<n>``.
CONVERSION_TYPES = frozenset({"transdata", "transdatarnn", "transpose", "transposed", "cast"})


def is_conversion_type(types: Iterable[object]) -> np.ndarray:
    """NPU kernels whose op Type is a layout or data-type conversion (``CONVERSION_TYPES``)."""
    return per_unique(types, lambda t: t.strip() in CONVERSION_TYPES)


#: GPU kernels that convert a tensor's layout, by the words of their names (a Kineto trace gives no op type):
#: cuDNN's NCHW <-> NHWC transforms around its NHWC convolution kernels (26 + 13 of them, 0.272 ms, in the H200
#: AlexNet trace), the GPU's counterpart of an NPU's TransData.
GPU_LAYOUT_WORDS = ("nchwtonhwc", "nhwctonchw")


def is_gpu_layout_kernel(names: Iterable[str]) -> np.ndarray:
    """GPU kernels named as layout transforms (``GPU_LAYOUT_WORDS``)."""
    return per_unique(names, holds_any(GPU_LAYOUT_WORDS))


def fill_conversions(bd: Breakdown, labels: np.ndarray, dur: np.ndarray, conv: np.ndarray) -> None:
    """Add each conversion kernel (``conv``: ``is_conversion_type`` of an NPU's op types, ``is_gpu_layout_kernel``
    of a GPU's names) to ``bd.conversions`` under the category it is filed in (``labels``, aligned with ``dur``):
    an NPU's go to Conv's Vector rows as much as to Vector (Trans), whose row alone understated what they cost."""
    conv = np.asarray(conv, dtype=bool)
    if not conv.any():
        return
    labels, dur = np.asarray(labels, dtype=object)[conv], np.asarray(dur, dtype=np.int64)[conv]
    for label in dict.fromkeys(labels.tolist()):
        if label in bd.buckets:
            here = labels == label
            bd.conversions.setdefault(label, Bucket()).add(int(dur[here].sum()), int(here.sum()))


def fill_buckets(bd: Breakdown, labels: np.ndarray, dur: np.ndarray) -> None:
    """Add each labelled kernel's duration (ns) and a count to its bucket (MC2 labels are skipped)."""
    labels = np.asarray(labels, dtype=object)
    if labels.size == 0:
        return
    codes, uniq = factorize(labels)
    dur = np.asarray(dur, dtype=np.int64)
    # one sort by label and a sum per run (a mask and a sum per label cost ~5 us each)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(uniq))
    sums = np.add.reduceat(dur[order], np.cumsum(counts) - counts)
    for label, ns, count in zip(uniq.tolist(), sums.tolist(), counts.tolist(), strict=True):
        if label in bd.buckets:
            bd.buckets[label].add(ns, count)
