"""Inputs refused for what they are as soon as that is known, before the loading work they would waste."""

from __future__ import annotations

from pathlib import Path

import pytest

from msprof_compare import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import kineto


def test_mtia_trace_is_refused_before_the_other_loaders(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MTIA trace (hta's inference sample: mtia_ccp_events and mtia_runtime, no GPU kernel) is refused once its
    kernels are read, not after its ops, flows, memory and Python frames were loaded and thrown away: on hta's
    87 MB MTIA training trace that loading was about 2/3 of the time to the refusal (docs/performance.md is
    another helper's). The refusal is the one api._check_usable gave."""
    trace = samples / "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"
    if not trace.exists():
        pytest.skip("hta MTIA sample absent")
    loaded = []
    for name in ("_load_ops", "_load_flows", "_load_memory", "_load_meta", "_load_python"):
        monkeypatch.setattr(kineto, name, lambda *a, _n=name, **k: loaded.append(_n))
    with pytest.raises(ProfileError) as err:
        compare(str(trace), str(trace), enable_operator_compare=True)
    assert err.value.message == ("no GPU kernel, memcpy or memset events in the trace: it holds an MTIA "
                                 "accelerator's events (mtia_ccp_events, mtia_runtime), which are not supported")
    assert (err.value.path, err.value.hint, loaded) == (str(trace), None, [])
