"""The columnar model's table builders (``model.frame`` / ``frame_of``) and lane ordering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import sql
from hypothesis import given
from hypothesis import strategies as st

from msprof_compare import model
from msprof_compare.model import SCHEMAS, frame, frame_of, positions_in_runs, threads_in_order

L1_DB = Path(__file__).resolve().parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"


def _cols() -> dict[str, np.ndarray]:
    return {"name": np.array(["aten::add", "", "aten::mm"], dtype=object),
            "ts": np.array([3, 1, 2], dtype=np.int64), "dur": np.array([0, 5, 7], dtype=np.int64)}


def test_frame_fills_the_schema_and_keeps_text_as_object() -> None:
    f = frame("ops", _cols())
    assert list(f.columns) == list(SCHEMAS["ops"])
    assert f["name"].dtype == object and f["name"].tolist() == ["aten::add", "", "aten::mm"]
    assert f["ts"].dtype == np.int64 and f["ts"].tolist() == [3, 1, 2]
    assert (f["pid"] == -1).all() and f["pid"].dtype == np.int64  # absent integer -> -1
    assert (f["input_dims"] == "").all() and f["input_dims"].dtype == object  # absent text -> ""
    assert isinstance(f.index, pd.RangeIndex) and len(f) == 3


def test_frame_of_equals_the_public_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path and the fallback (a pandas without ``_from_arrays``) build the same frame."""
    cols = {**_cols(), "x": np.array([0.5, np.nan, 2.0])}
    fast = frame_of(cols)

    def gone(*args, **kwargs):
        raise AttributeError("_from_arrays")

    monkeypatch.setattr(pd.DataFrame, "_from_arrays", gone, raising=False)
    slow = frame_of(cols)
    pd.testing.assert_frame_equal(fast, slow)
    assert [str(t) for t in fast.dtypes] == ["object", "int64", "int64", "float64"]


def test_frame_of_refuses_ragged_columns() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        frame_of({"a": np.arange(3), "b": np.arange(2)})


def test_object_array_takes_any_sequence() -> None:
    raw = ["a", None, "c"]
    arr = model.object_array(raw)
    assert arr.dtype == object and arr.tolist() == raw
    assert model.object_array(arr) is arr  # already an object array: no copy


def test_threads_in_order_sorts_by_sort_index_then_tid() -> None:
    th = frame("threads", {"pid": [7, 7, 7, 7, 9], "tid": [40, 10, 30, 20, 1],
                           "name": ["d", "a", "c", "b", "other"], "sort_index": [1, -1, 1, 0, 0]})
    # sort keys: 1, 10 (tid, no sort_index), 1, 0 -> b (0), d (1), c (1; stable after d), a (10)
    assert threads_in_order(th, 7) == ([20, 40, 30, 10], ["b", "d", "c", "a"])
    assert threads_in_order(th, 8) == ([], [])


@given(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "aten::mm", ""])), max_size=40))
def test_factorize_matches_pandas_with_missing_values_as_one_category(values: list) -> None:
    arr = np.array(values, dtype=object)
    codes, uniq = model.factorize(arr)
    ref_codes, ref_uniq = pd.factorize(arr, use_na_sentinel=False)
    assert codes.tolist() == ref_codes.tolist()
    assert [None if u is None or u != u else u for u in ref_uniq.tolist()] == uniq.tolist()



@given(st.lists(st.one_of(st.sampled_from(["a", "b", "aten::mm", "", "A"]), st.none(), st.floats(allow_nan=True),
                          st.integers(-2, 2), st.booleans(), st.binary(max_size=1)), max_size=40),
       st.booleans())
def test_factorize_small_arrays_match_pandas(values: list, only_text: bool) -> None:
    """Small object arrays of str are numbered by a dict (``SMALL_FACTORIZE_MAX``): the same codes and distinct
    values as pandas, including mixes the dict leaves to pandas (missing values, 1 / 1.0 / True, bytes)."""
    if only_text:
        values = [v for v in values if type(v) is str]
    arr = model.object_array(values)
    codes, uniq = model.factorize(arr)
    ref_codes, ref_uniq = pd.factorize(arr, use_na_sentinel=False)
    assert codes.dtype == ref_codes.dtype and codes.tolist() == ref_codes.tolist()
    assert uniq.dtype == object and len(uniq) == len(ref_uniq)
    assert [type(u) for u in uniq.tolist() if u is not None] == [type(u) for u in ref_uniq.tolist()
                                                                 if not pd.isna(u)]


def test_factorize_dict_and_pandas_paths_agree_around_the_bound() -> None:
    texts = np.array([f"op{i % 97}" for i in range(model.SMALL_FACTORIZE_MAX + 5)], dtype=object)
    for n in (model.SMALL_FACTORIZE_MAX, model.SMALL_FACTORIZE_MAX + 1):
        codes, uniq = model.factorize(texts[:n])
        ref_codes, ref_uniq = pd.factorize(texts[:n])
        assert codes.tolist() == ref_codes.tolist() and uniq.tolist() == list(ref_uniq)
    unhashable = model.object_array([["a"], ["a"]])
    with pytest.raises(TypeError):
        pd.factorize(unhashable)
    with pytest.raises(TypeError):
        model.factorize(unhashable)


def test_factorize_long_texts_take_the_dict_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column of long texts (32 values spread over it average ``LONG_TEXT_MIN`` characters or more) is numbered by
    the dict however long it is: the same codes and distinct values, the same objects, as pandas; a column of such
    texts holding a missing value is left to pandas (one category, None, where it first appears)."""
    long = [f"void at::native::kernel_{i}<float>".ljust(model.LONG_TEXT_MIN + i % 3, "_") for i in range(7)]
    texts = model.object_array([long[(i * 5) % 7] for i in range(model.SMALL_FACTORIZE_MAX * 3)])
    codes, uniq = model.factorize(texts)
    ref_codes, ref_uniq = pd.factorize(texts)
    assert codes.dtype == ref_codes.dtype and codes.tolist() == ref_codes.tolist()
    assert uniq.tolist() == list(ref_uniq) and all(u is r for u, r in zip(uniq, ref_uniq, strict=True))
    with monkeypatch.context() as m:  # the dict numbered them: pandas is not asked
        m.setattr(model.pd, "factorize", lambda *a, **k: pytest.fail("pandas factorized long texts"))
        assert model.factorize(texts)[0].tolist() == ref_codes.tolist()
    held = texts.copy()
    held[400] = None
    codes, uniq = model.factorize(held)
    ref_codes, ref_uniq = pd.factorize(held, use_na_sentinel=False)
    assert codes.tolist() == ref_codes.tolist() and uniq.tolist() == [None if u != u else u for u in ref_uniq]
    short = model.object_array(["x" * (model.LONG_TEXT_MIN - 1), "y"] * model.SMALL_FACTORIZE_MAX)
    assert model.factorize(short)[0].tolist() == [0, 1] * model.SMALL_FACTORIZE_MAX
    assert not model._long_texts(short) and model._long_texts(texts)
    # a short first value (a memcpy among kernel names) does not hide a column of long texts
    assert model._long_texts(model.object_array(["Memcpy DtoD (Device -> Device)", *texts.tolist()]))
    # values that are no text count no characters: a column of missing values or numbers is left to pandas at once,
    # not tried by the dict first (mutation audit mut66b)
    assert not model._long_texts(model.object_array([None, 7, 2.5] * model.SMALL_FACTORIZE_MAX))


def test_ranges_concatenates_aranges() -> None:
    assert model.ranges(np.array([2, 5, 7]), np.array([4, 5, 10])).tolist() == [2, 3, 7, 8, 9]
    assert model.ranges(np.array([3]), np.array([1])).tolist() == []  # hi <= lo: nothing


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=30))
def test_pair_codes_number_pairs_by_first_appearance(pairs: list) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    codes, first_row = model.pair_codes(a, b)
    seen: dict = {}
    for i, p in enumerate(pairs):
        seen.setdefault(p, (len(seen), i))
    assert codes.tolist() == [seen[p][0] for p in pairs]
    assert first_row.tolist() == [i for _, i in seen.values()]


def test_whole_int() -> None:
    from msprof_compare.loaders.traceio import whole_int

    values = [1, None, True, "12", " 7 ", 3.9, 7.0, "7.0", "x", float("nan"), 2**64, -(2**63), "123456789012345678",
              2**63 - 1, 2**63, "9223372036854775808", -(2**63) - 1, 2.0**63]
    assert [whole_int(v) for v in values] == [1, None, None, 12, 7, None, 7, 7, None, None, None, -(2**63),
                                             123456789012345678, 2**63 - 1, None, None, None, None]
    # text is read exactly (a float would give 2**53 for the first), in ASCII digits without separators
    # (Python's int() takes "1_000" and Arabic-Indic digits); a sign and an exponent are a number's
    texts = ["9007199254740993.0", "9223372036854775807.0", "9223372036854775808.0", "1_000", "\u0661\u0662",
             "+7", "-7.", "7e3", "7.5e1", "1e19", "1e-3", "0.5", "0" + "." + "0" * 40, "0e99999999", "1" * 5000,
             "inf", "0x10", "", "-"]
    assert [whole_int(v) for v in texts] == [2**53 + 1, 2**63 - 1, None, None, None, 7, -7, 7000, 75, None, None,
                                            None, 0, 0, None, None, None, None, None]


def _positions_by_loop(keys: list) -> list[int]:
    """Each key's position within its run of equal keys, counted one by one."""
    out: list[int] = []
    for i, k in enumerate(keys):
        out.append(out[-1] + 1 if i and keys[i - 1] == k else 0)
    return out


@pytest.mark.parametrize("query", [
    # the PMU rows of the level-1 DB excerpt by globalTaskId, as the replay pairing sorts them: 185 runs of 3
    "SELECT globalTaskId FROM TASK_PMU_INFO ORDER BY globalTaskId, rowid",
    # its communication tasks by plane (the history rule's lanes): runs of 16 and 40
    "SELECT planeId FROM COMMUNICATION_TASK_INFO ORDER BY planeId, rowid",
], ids=["pmu_rows_by_task", "comm_tasks_by_plane"])
def test_positions_in_runs_matches_a_loop_on_real_keys(query: str) -> None:
    """Runs of 3 or more that start after the first element: a position looked up one step back (right for runs
    of at most 2, or for the first run) counts the third element of a later run from the array's start."""
    keys = [k for (k,) in sql(L1_DB, query)]
    want = _positions_by_loop(keys)
    assert max(want) >= 2 and any(p == 2 and i > 2 for i, p in enumerate(want))
    assert positions_in_runs(np.array(keys, dtype=np.int64)).tolist() == want
    assert positions_in_runs(np.zeros(0, np.int64)).tolist() == []


@given(st.lists(st.tuples(st.sampled_from(["cpu_op", "cuda_runtime", "user_annotation", "User_Annotation",
                                           "cuda_driver", "Runtime", "Operator", "operator"]),
                          st.sampled_from(["ProfilerStep#3", "ProfilerStep#4", "aten::mm", "nccl:all_reduce"])),
                max_size=25))
def test_gpu_framework_ops_from_category_codes_as_from_the_column(ops: list) -> None:
    """The loader's category codes (a code per op and the distinct cats, lower-cased: two spellings of one cat are
    two codes of one text) give the answer the scan of the text column gives."""
    from msprof_compare.loaders.kineto import _Events
    from msprof_compare.loaders.traceio import Event

    events = [Event(ph="X", cat=c, name=n, ts=i, dur=1) for i, (c, n) in enumerate(ops)]
    ev = _Events("t.json", events)
    idx = np.arange(len(events))
    code, cats = ev.cat_codes(idx, lower=True)
    cat = cats[code]
    assert cat.tolist() == [c.lower() for c, _ in ops]  # each event's own cat, lower-cased
    assert ev.cat_of(idx).tolist() == [c for c, _ in ops]
    names = model.object_array([n for _, n in ops])
    # a cpu_op is work whatever its name; a legacy Operator unless it is a step marker (PyTorch 1.8 writes them so);
    # an annotation never
    framework = any(c == "cpu_op" or c.lower() == "operator" and not n.startswith("ProfilerStep#") for c, n in ops)
    assert model.gpu_framework_ops(cat, names, (code, cats)) is model.gpu_framework_ops(cat, names) is framework


def test_unread_categories_names_the_first_five_and_says_more():
    """The unread categories as messages name them: the first five with their complete events, then ", ..." where
    there are more (a trace written under many other names would bury the line); "" for none. Written by hand from
    the counts given."""
    prof = model.Profile(path="p", kind="GPU", source="kineto")
    assert model.unread_categories(prof) == ""
    prof.extra["unread_cats"] = {"gpu_kernel": 62, "gpu_memset_v2": 13}
    assert model.unread_categories(prof) == "'gpu_kernel' (62), 'gpu_memset_v2' (13)"
    prof.extra["unread_cats"] = {f"c{i}": 1000 + i for i in range(6)}
    assert model.unread_categories(prof) == ("'c0' (1,000), 'c1' (1,001), 'c2' (1,002), 'c3' (1,003), 'c4' (1,004), "
                                             "...")
