"""The Summary's notes and titles read the contributors frames through ``col_of``, not ``frame[column]``: a frame's
Series copies its ``attrs`` (the notes' figures) deeply on every pull under pandas 2.1+, ~250 us a pull of the 1 GB
NPU pair's one-row contributors frame on a loaded 2-core machine against ~13 us through ``col_of`` (session 78: the
nine readers here took 3.6-4.3 ms a pass over that pair's frames, 0.6-0.7 ms after). Data: reference pair 4 (the
H200 AlexNet trace against the NPU level-1 text export), whose contributors hold AccumulateGrad's all-reduce, so the
communication readers have a row to read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from refpairs import PAIRS

from msprof_compare import compare
from msprof_compare.compare import contributors as C
from msprof_compare.compare import summary_notes as N


@pytest.fixture(scope="module")
def frames():
    from conftest import SAMPLES

    if not SAMPLES.is_dir():
        pytest.skip(f"sample data not found at {SAMPLES}")
    base, comp = PAIRS["4-gpu-alexnet-vs-npu-text-l1"]
    return compare(str(SAMPLES / base), str(SAMPLES / comp))


def test_the_notes_read_the_contributors_frames_without_a_series(frames, monkeypatch):
    """Each reader of the contributors (and their communication) frame gives what it gave, and pulls no column of
    those frames as a Series: ``DataFrame.__getitem__`` on them fails the test. The level's gross and net change
    are OperatorCompareStatistic's rows' diffs added up (all 37 rows, listed or not)."""
    res = frames
    contrib, comm, wf = (res.frames[k] for k in ("contributors", "contributor_communication", "waterfall"))
    assert len(contrib) == 2 and len(comm) and comm.attrs.get("net")
    names = contrib["Name"].tolist()
    calls = {
        "coverage_text": lambda: C.coverage_text(contrib),
        "shares_of_e2e": lambda: C.shares_of_e2e(contrib),
        "contributors_title": lambda: C.contributors_title(contrib),
        "level_gross_ms": lambda: C.level_gross_ms(contrib),
        "level_net_ms": lambda: C.level_net_ms(contrib),
        "communication_pieces": lambda: N._communication_pieces(contrib, comm),
        "net_of_communication": lambda: N.net_of_communication(contrib, comm),
        "communication_kernels_note": lambda: N.communication_kernels_note(contrib),
        "unexplained": lambda: N._unexplained(contrib, wf),
        "mapped_names": lambda: N.mapped_names(names, np.array([66.195, 0.0]), np.array([0.0, 106.247]), contrib,
                                               {names[0]: names[1]}, 3),
    }
    before = {k: f() for k, f in calls.items()}
    # the figures the readers give, by hand from the two rows: AccumulateGrad +106.247 ms, [param|cuda] -66.195 ms
    assert before["coverage_text"] == "2 rows cover 94.8%"
    stat = res.sheet("OperatorCompareStatistic")
    diffs = [round(c - b, 6) for b, c in zip(stat["Base Device Duration(ms)"].astype(float),
                                             stat["Comparison Device Duration(ms)"].astype(float), strict=True)]
    assert len(diffs) == 37
    assert before["level_gross_ms"] == pytest.approx(sum(abs(d) for d in diffs), abs=1e-6)
    assert before["level_net_ms"] == pytest.approx(sum(diffs), abs=1e-6)
    assert before["communication_pieces"][0] == f"most of the change of {names[0]} is collective communication " \
        "launched inside it"
    # the net ranking holds [param|cuda] alone, which is listed, so none is added (its listed names were read)
    assert comm.attrs["net"] == [("[param|cuda]", -66.195)] and before["net_of_communication"] == []
    assert before["unexplained"].startswith(f"all operators together changed by {sum(diffs):+.3f} ms, against an E2E "
                                            "change of -12783.663 ms")
    assert before["mapped_names"] == [(names, 66.195, 106.247)]
    plain = pd.DataFrame.__getitem__

    def no_series(self, key):
        assert self is not contrib and self is not comm, f"a Series of the contributors frame: {key!r}"
        return plain(self, key)

    monkeypatch.setattr(pd.DataFrame, "__getitem__", no_series)
    assert {k: f() for k, f in calls.items()} == before
