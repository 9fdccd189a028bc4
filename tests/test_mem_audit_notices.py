"""Memory comparison notices a first-time user depends on (session 36 memory audit).

Inputs: the GPU excerpts of tests/data/kineto (provenance in its README).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from msprof_compare.api import compare

DATA = Path(__file__).resolve().parent / "data" / "kineto"
NO_MEMORY = (DATA / "b200_vllm_moe_excerpt.pt.trace.json", DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json")


def _memory_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if "memory" in r.getMessage()]


def test_asked_memory_comparison_of_two_traces_without_memory_says_how_to_record_it(caplog):
    """`--enable_memory_compare` on two GPU traces recorded without profile_memory writes no workbook: the
    per-side line was the original's bare "Can't find any memory event", so the user learnt neither why nor
    what to do. Asked for, each side's line now carries the profile_memory advice (a default run does not)."""
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(*(str(p) for p in NO_MEMORY), enable_memory_compare=True)
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    said = [m for lv, m in _memory_lines(caplog) if lv == "WARNING" and m.startswith("Can't find any memory event")]
    assert said == [f"Can't find any memory event in the file: {p} (no memory was recorded: profile_memory=True "
                    "records it)" for p in NO_MEMORY]
