"""The options of ``compare()`` as a notebook passes them: numbers computed in Python or NumPy, and errors that name
the keyword argument the caller wrote, not a CLI flag.

Inputs: the bundled sample_data pair (sample_data/README.md) for refusals made before loading; the msinsight
AlexNet text exports, level 1 against level 2 of rank 0 (../shared/samples, PROVENANCE.md; one profiled step,
ProfilerStep#50), for a step given as a float.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import msprof_compare
from msprof_compare.errors import UsageError
from msprof_compare.options import build_options

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "sample_data" / "bert-small_h100.json.gz"
COMP = ROOT / "sample_data" / "bert-small_mi300.json.gz"


def test_a_step_given_as_a_whole_float_or_numpy_number_is_that_step(samples: Path) -> None:
    """``base_step=50.0`` (a step read from a DataFrame is a float) was refused with "(got --base_step '50.0')";
    a whole float or NumPy number is now the step it equals, and the sheets are those of ``base_step=50``."""
    pt = samples / "msinsight/test/data/pytorch/text"
    base, comp = pt / "level1/rank0_ascend_pt", pt / "level2/rank0_ascend_pt"
    as_int = msprof_compare.compare(base, comp, base_step=50, comparison_step=50, enable_profiling_compare=True)
    as_float = msprof_compare.compare(base, comp, base_step=50.0, comparison_step=np.float64(50),
                                      enable_profiling_compare=True)
    assert (as_float.options.base_step, as_float.options.comparison_step) == (50, 50)
    assert type(as_float.options.base_step) is int and type(as_float.options.comparison_step) is int
    assert as_float.sheet_names == as_int.sheet_names
    for name in as_int.sheet_names:
        pd.testing.assert_frame_equal(as_float.sheet(name), as_int.sheet(name))


@pytest.mark.parametrize(("given", "message"), [
    ({"base_step": 3.5, "comparison_step": 3}, "Invalid param, base_step and comparison_step must be a number. "
     "(got base_step=3.5: a step id is a whole number >= 0, the N of ProfilerStep#N)"),
    ({"base_step": "x", "comparison_step": -2}, "Invalid param, base_step and comparison_step must be a number. "
     "(got base_step='x' and comparison_step=-2: a step id is a whole number >= 0, the N of ProfilerStep#N)"),
    ({"max_kernel_num": "many"}, "Invalid param, max_kernel_num has to be an integer greater than 3 (got 'many')"),
    ({"max_kernel_num": 3}, "Invalid param, max_kernel_num has to be greater than 3"),
    ({"op_name_map": [1]}, "Invalid param, op_name_map must be dict, for example: op_name_map={'name1':'name2'}"),
    ({"op_name_map": {"a": 1}}, "Invalid param, key/value in op_name_map must be string"),
    ({"op_name_map": {"a" * 201: "b"}},
     "Invalid param, the length of key/value in op_name_map exceeded the maximum value 200"),
    ({"gpu_flow_cat": 5}, "Invalid param, gpu_flow_cat must be text (got 5)"),
    ({"gpu_flow_cat": " "}, "Invalid param, gpu_flow_cat is blank (got ' '); leave it out to use the usual flow "
                            "categories"),
    ({"gpu_flow_cat": "c" * 21}, "Invalid param, gpu_flow_cat exceeded the maximum value 20"),
    # found by fuzzing the API: a falsy non-text gpu_flow_cat was "not given"; a bool step named neither step;
    # a blank op_name_map said only "invalid syntax"
    # found by option fuzzing (optfuzz63): an int past 4,300 digits has no str() or repr() (ValueError), nor a
    # float() (OverflowError): each escaped as that exception
    ({"base_step": 10**5000, "comparison_step": 1}, "Invalid param, base_step and comparison_step must be a number. "
     "(got base_step=<too long to show>: a step id is a whole number from 0 to 9223372036854775807 (int64), the N of "
     "ProfilerStep#N)"),
    ({"base_step": 1, "comparison_step": -2**63}, "Invalid param, base_step and comparison_step must be a number. "
     "(got comparison_step=-9223372036854775808: a step id is a whole number from 0 to 9223372036854775807 (int64), "
     "the N of ProfilerStep#N)"),
    ({"fail_on_regression": 10**5000}, "Invalid param, fail_on_regression must be a finite percentage >= 0 "
     "(got <too long to show>)"),
    ({"fail_on_regression": 10**400}, "Invalid param, fail_on_regression must be a finite percentage >= 0 "
     "(got 1000000000000000000000000000000000000...)"),
    ({"output_format": 10**5000}, "Invalid param, output_format must be xlsx, json or xlsx,json "
     "(got <too long to show>)"),
    ({"output_format": ["json", 10**5000]}, "Invalid param, output_format must be xlsx, json or xlsx,json "
     "(got <too long to show>)"),
    # a notebook's missing cell (pd.NA) or a column's array: the test for the empty text ("$VAR" unset) compared them
    # with "", whose result is no bool (TypeError / ValueError escaped); a list holding a huge int had no str()
    ({"fail_on_regression": pd.NA}, "Invalid param, fail_on_regression must be a number of percent (got <NA>)"),
    ({"fail_on_regression": np.array([5, 6])}, "Invalid param, fail_on_regression must be a number of percent "
     "(got array([5, 6]))"),
    ({"output_format": np.array(["json", "excel"])}, "Invalid param, output_format must be xlsx, json or xlsx,json "
     "(got array(['json', 'excel'], dtype='<U5'))"),
    ({"output_format": np.array([["json"]])}, "Invalid param, output_format must be xlsx, json or xlsx,json "
     "(got array([['json']], dtype='<U4'))"),
    # an object whose repr() raises: the message names its type, where the repr's error escaped the message
    ({"output_format": type("Unshown", (), {"__repr__": lambda self: 1 / 0})()},
     "Invalid param, output_format must be xlsx, json or xlsx,json (got <Unshown object>)"),
    ({"max_kernel_num": type("Unshown", (), {"__repr__": lambda self: 1 / 0})()},
     "Invalid param, max_kernel_num has to be an integer greater than 3 (got <Unshown object>)"),
    ({"op_name_map": pd.NA}, "Invalid param, op_name_map must be dict, for example: op_name_map={'name1':'name2'}"),
    ({"base_step": [10**5000], "comparison_step": 1}, "Invalid param, base_step and comparison_step must be a number. "
     "(got base_step=<too long to show>: a step id is a whole number >= 0, the N of ProfilerStep#N)"),
    ({"gpu_flow_cat": False}, "Invalid param, gpu_flow_cat must be text (got False)"),
    ({"gpu_flow_cat": []}, "Invalid param, gpu_flow_cat must be text (got [])"),
    ({"base_step": 1, "comparison_step": True},
     "Invalid param, base_step and comparison_step must be a number. (got comparison_step=True: a step id is a whole "
     "number >= 0, the N of ProfilerStep#N)"),
    ({"op_name_map": "\t"}, "Invalid param, op_name_map is blank (got '\\t'); leave it out or write a literal dict "
                            "such as \"{'aten::mm': 'aclnnMm'}\""),
    ({"output_format": "csv"}, "Invalid param, output_format must be xlsx, json or xlsx,json (got 'csv')"),
    ({"fail_on_regression": -1}, "Invalid param, fail_on_regression must be a finite percentage >= 0 (got -1)"),
])
def test_api_errors_name_the_keyword_argument(given: dict, message: str) -> None:
    """From Python, a refused option named the CLI's flag ("--max_kernel_num", "--base_step '3.5'"), which the
    caller never typed; the message now names the keyword and the value as written. The CLI keeps its flags."""
    with pytest.raises(UsageError) as info:
        msprof_compare.compare(BASE, COMP, **given)
    assert str(info.value) == message
    with pytest.raises(UsageError) as cli:
        build_options(**given)
    assert "--" in str(cli.value) and str(cli.value) != message


def test_output_format_takes_a_sequence_of_any_kind_as_rank_list_does() -> None:
    """``output_format`` given as a 1-D NumPy array, a pandas Series or a set of formats is those formats, as
    ``rank_list`` takes a 1-D array (``output_format=np.array(["json"])`` was refused while
    ``rank_list=np.array([0, 1])`` was taken); the formats are written in their fixed order, as from a list."""
    for value, want in ((np.array(["json"]), ("json",)), (np.array(["json", "XLSX"]), ("xlsx", "json")),
                        (pd.Series(["json"]), ("json",)), ({"json", "xlsx"}, ("xlsx", "json")),
                        (frozenset({"xlsx"}), ("xlsx",)), (["json", "xlsx"], ("xlsx", "json"))):
        assert build_options(output_format=value)[0].formats == want, value


def test_op_name_map_literal_error_names_the_keyword() -> None:
    """A text ``op_name_map`` that is no literal: the keyword, not "'--op_name_map'"."""
    with pytest.raises(UsageError, match=r"^Invalid value for 'op_name_map': calls and variables are not allowed"):
        msprof_compare.compare(BASE, COMP, op_name_map="abc")


@pytest.mark.parametrize("value", [np.float32(5.5), 5.5, float("nan"), float("inf"), True, np.bool_(True), [5]])
def test_max_kernel_num_must_be_whole(value: object) -> None:
    """``int()`` of any number but a Python float truncated it: ``max_kernel_num=np.float32(5.5)`` ran with 5."""
    with pytest.raises(UsageError, match=r"^Invalid param, max_kernel_num has to be an integer greater than 3"):
        msprof_compare.compare(BASE, COMP, max_kernel_num=value)


def test_whole_numbers_of_any_kind_are_taken() -> None:
    """Python and NumPy integers and whole floats are the integer they equal; a flag takes NumPy's 0 / 1 as it
    takes Python's (``np.int64(1)`` was refused while ``1`` was taken)."""
    for value in (7, 7.0, np.int64(7), np.int32(7), np.float32(7.0), "7"):
        got = build_options(max_kernel_num=value, enable_operator_compare=True)[0].max_kernel_num
        assert got == 7 and type(got) is int, value
    opts = build_options(enable_api_compare=np.int64(1), enable_kernel_compare=np.uint8(0), force=np.int8(0))[0]
    assert (opts.enable_api_compare, opts.enable_kernel_compare, opts.force, opts.enable_operator_compare) == \
        (True, False, False, False)
    shown = re.escape(repr(np.int64(2)))  # "np.int64(2)" from NumPy 2, "2" before
    with pytest.raises(UsageError, match=rf"^Invalid param, force must be True or False \(got {shown}\)$"):
        build_options(force=np.int64(2))


def test_exact_numbers_follow_the_same_rule() -> None:
    """``max_kernel_num=Decimal("5")`` was refused while ``Fraction(10, 2)`` was taken: the standard library's exact
    numbers follow the one rule of every number (an integral value is that integer, any other is refused, never
    truncated), for the integer options, the steps and the rank list alike. Found by fuzzing the API's options."""
    from decimal import Decimal
    from fractions import Fraction

    from msprof_compare.options import parse_rank_list

    for value in (Decimal("5"), Decimal("5.0"), Decimal("0.5E+1"), Fraction(10, 2)):
        opts = build_options(max_kernel_num=value, base_step=value, comparison_step=value,
                             enable_operator_compare=True)[0]
        assert (opts.max_kernel_num, opts.base_step, opts.comparison_step) == (5, 5, 5), value
        assert type(opts.max_kernel_num) is int and type(opts.base_step) is int
    assert parse_rank_list([Decimal("3"), Fraction(1)]) == (1, 3)
    for value in (Decimal("5.5"), Fraction(11, 2), Decimal("NaN"), Decimal("sNaN"), Decimal("-Infinity"),
                  Decimal("1E+10000000")):  # the last: int() of it ran for minutes
        with pytest.raises(UsageError, match=r"^Invalid param, max_kernel_num has to be an integer greater than 3 "
                                             rf"\(got {re.escape(repr(value))}\)$"):
            msprof_compare.compare(BASE, COMP, max_kernel_num=value)
    with pytest.raises(UsageError, match=r"^Invalid param, max_kernel_num has to be greater than 3$"):
        msprof_compare.compare(BASE, COMP, max_kernel_num=Decimal("3"))
    with pytest.raises(UsageError, match=r"\(got base_step=Decimal\('2\.5'\): a step id is a whole number"):
        msprof_compare.compare(BASE, COMP, base_step=Decimal("2.5"), comparison_step=Fraction(2))


def test_on_off_options_take_a_number_by_the_integer_rule() -> None:
    """An on/off option took ``1`` and ``np.int64(1)`` but refused ``Fraction(1)``, ``Decimal("1")`` and ``1.0`` ("must
    be True or False"), while ``max_kernel_num`` takes any of them as the integer it equals: a flag now takes any
    number that is 0 or 1 by that rule, and refuses any other number (0.5, 2, NaN) and any text, as before."""
    from decimal import Decimal
    from fractions import Fraction

    for on, off in ((Fraction(1), Fraction(0)), (Decimal("1"), Decimal("0.0")), (1.0, 0.0),
                    (np.float32(1.0), np.float64(-0.0)), (Fraction(2, 2), Decimal("0E+3"))):
        opts = build_options(enable_api_compare=on, enable_kernel_compare=off, force=on, use_input_shape=off)[0]
        assert (opts.enable_api_compare, opts.enable_kernel_compare, opts.force, opts.use_input_shape) == \
            (True, False, True, False), (on, off)
        assert type(opts.force) is bool and type(opts.use_input_shape) is bool
    for bad in (Fraction(1, 2), Decimal("2"), Decimal("NaN"), 0.5, float("nan"), 2.0, -1, "1", "true"):
        with pytest.raises(UsageError) as info:
            build_options(force=bad)
        assert str(info.value) == f"Invalid param, force must be True or False (got {bad!r})", bad


def test_regression_gate_names_its_argument() -> None:
    """``result.regression_gate("x")`` said "--fail_on_regression must be...": the argument is ``pct``."""
    result = msprof_compare.compare(BASE, COMP, enable_api_compare=True)
    with pytest.raises(UsageError, match=r"^Invalid param, pct must be a number of percent \(got 'x'\)$"):
        result.regression_gate("x")


def test_result_options_cannot_be_changed_through_op_name_map(tmp_path: Path) -> None:
    """``result.options`` is frozen, but its ``op_name_map`` was a plain dict: ``options.op_name_map["a"] = "b"``
    changed what the result (and its JSON report) says the run used. Every change is now refused; the map stays a
    dict to read (``==``, ``json``), and the options are hashable and survive pickling (the loader's processes)."""
    import json
    import pickle

    given = {"aten::addmm": "aten::mm"}
    result = msprof_compare.compare(BASE, COMP, enable_api_compare=True, op_name_map=given)
    m = result.options.op_name_map
    for change in (lambda: m.__setitem__("a", "b"), lambda: m.update(a="b"), lambda: m.pop("aten::addmm"),
                   lambda: m.setdefault("a", "b"), m.clear, m.popitem, lambda: m.__delitem__("aten::addmm")):
        with pytest.raises(TypeError, match="op_name_map of Options cannot be changed"):
            change()
    m2 = m
    with pytest.raises(TypeError):
        m2 |= {"a": "b"}
    given["x"] = "y"  # the caller's dict is not the options' map
    assert result.options.op_name_map == {"aten::addmm": "aten::mm"} and isinstance(m, dict)
    assert hash(result.options) == hash(build_options(enable_api_compare=True, op_name_map=dict(m))[0])
    assert pickle.loads(pickle.dumps(result.options)) == result.options
    doc = json.loads(Path(result.to_json(tmp_path)).read_text())
    assert doc["options"]["op_name_map"] == {"aten::addmm": "aten::mm"}


def test_options_made_or_replaced_with_a_plain_dict_keep_a_read_only_map() -> None:
    """``Options`` built directly, or by ``dataclasses.replace`` with a plain dict, take the map read-only as
    ``build_options`` gives it: the frozen options have no field left to change."""
    import dataclasses

    from msprof_compare.options import Options

    for opts in (Options(op_name_map={"a": "b"}),
                 dataclasses.replace(build_options(enable_api_compare=True)[0], op_name_map={"a": "b"})):
        assert opts.op_name_map == {"a": "b"}
        with pytest.raises(TypeError, match="op_name_map of Options cannot be changed"):
            opts.op_name_map["c"] = "d"


def test_copied_options_share_their_read_only_map() -> None:
    """``copy.copy`` / ``copy.deepcopy`` of options (a caller keeping a result's options beside a changed copy) give
    equal options whose map is the very read-only map: immutable, it needs no copy, as a tuple's deep copy is the
    tuple (through ``__reduce__`` alone each copy built a new dict)."""
    import copy

    opts = build_options(enable_api_compare=True, op_name_map={"aten::addmm": "aten::mm"})[0]
    for clone in (copy.copy(opts), copy.deepcopy(opts), copy.copy(opts.op_name_map), copy.deepcopy(opts.op_name_map)):
        m = clone if isinstance(clone, dict) else clone.op_name_map
        assert m is opts.op_name_map and m == {"aten::addmm": "aten::mm"}
        assert clone == (opts.op_name_map if isinstance(clone, dict) else opts)
    with pytest.raises(TypeError, match="op_name_map of Options cannot be changed"):
        copy.deepcopy(opts).op_name_map["a"] = "b"


def test_a_flag_given_as_a_huge_int_is_refused() -> None:
    """``force=10**5000``: the refusal's repr of it raised ValueError (an int past 4,300 digits has no repr), which
    escaped compare() (found by option fuzzing, optfuzz63)."""
    with pytest.raises(UsageError) as info:
        msprof_compare.compare(BASE, COMP, force=10**5000)
    assert str(info.value) == "Invalid param, force must be True or False (got <too long to show>)"
