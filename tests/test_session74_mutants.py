"""Session 74's hand mutants of session 74's source changes that the suite let live (mut74).

Each test names the mutants it kills; each fails under them and passes on the real code. Expected figures come
from the original's reference workbooks or the raw sample files, never read back from this package."""

from __future__ import annotations

from pathlib import Path

from test_gate_result import NPU_L1, NPU_L2, _reference

import msprof_compare
from msprof_compare import compare


def test_the_gates_repr_states_its_verdict_change_and_counts(samples: Path) -> None:
    """Kills a_repr_counts (the repr's contributors count read from waterfall_steps) and a_repr_ns (its diff_ms
    given in ns): level 2 -> level 1 with the kernel comparison at 1 % lists one kernel (hcom_allReduce_, the only
    KernelCompare row that grew) and three waterfall steps, and the E2E change is the reference workbook's level-1
    E2E Time less level 2's, in ms."""
    overall, _ = _reference(samples)
    base, comp = (round(overall["E2E Time"][i] * 1e6) for i in (1, 0))  # ms to whole ns: level 2 is the base
    gate = compare(str(samples / NPU_L2), str(samples / NPU_L1), enable_kernel_compare=True,
                   fail_on_regression=1).regression_gate()
    assert repr(gate) == (f"RegressionGate(code=3, regressed=True, threshold='1', diff_ms={(comp - base) / 1e6}, "
                          f"contributors=1, waterfall_steps=3, message={gate.message!r})")


def test_a_star_import_and_dir_give_the_gate_types() -> None:
    """Kills i_all (RegressionGate left out of ``__all__``, where ``from msprof_compare import RegressionGate``
    still resolves through the module's ``__getattr__``): ``from msprof_compare import *`` and ``dir()`` give the
    package's public names, the gate's three types among them, each the API's class."""
    from msprof_compare import api

    names: dict[str, object] = {}
    exec("from msprof_compare import *", names)  # noqa: S102 - the star import a script or notebook does
    for name in ("RegressionGate", "GateContributor", "GateStep", "CompareResult"):
        assert names.get(name) is getattr(api, name), name
        assert name in dir(msprof_compare), name


def test_a_gate_without_an_e2e_pair_has_no_e2e_times() -> None:
    """Kills a_e2e_zero (a verdict without E2E times read as 0 ns each): a result whose breakdown made no E2E row
    (the state test_api_face_messages sets up) is not judged, and the gate's ``base_ns`` / ``comparison_ns`` are
    None, as its docstring says ("None without them"), not 0 ns, which is a reading of no device time."""
    from types import SimpleNamespace

    import pandas as pd

    from msprof_compare.api import judge_regression
    from msprof_compare.options import API_FACE, Options

    side = SimpleNamespace(path="x")
    result = SimpleNamespace(frames={"e2e": pd.DataFrame({"base_ns": [], "comparison_ns": []})}, base=side,
                             comparison=side, options=Options(), _verdicts={})
    gate = judge_regression(result, 5.0, API_FACE)
    assert (gate.code, gate.regressed, gate.diff_ns, gate.diff_ms) == (1, None, None, None)
    assert (gate.base_ns, gate.comparison_ns) == (None, None)
