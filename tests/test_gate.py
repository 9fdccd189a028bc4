"""--fail_on_regression PCT: exit 3 on an E2E regression beyond PCT percent (report/deliver.py)."""

from __future__ import annotations

import pytest

from msprof_compare import cli

NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"   # E2E 136.581009 ms (reference pair 1)
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"   # E2E 129.862875 ms


def _run(samples, tmp_path, base, comparison, pct, *extra_flags):
    params = {"base_profiling_path": str(samples / base), "comparison_profiling_path": str(samples / comparison),
              "output_path": str(tmp_path), "enable_profiling_compare": True, "fail_on_regression": pct}
    for flag in extra_flags:
        params[flag] = True
    return cli.execute(params)


def test_faster_comparison_passes(samples, tmp_path, capsys):
    # L1 -> L2 is 4.92% faster: no regression at any threshold
    assert _run(samples, tmp_path, NPU_L1, NPU_L2, "0") == 0
    err = capsys.readouterr().err
    assert "No regression" in err and "-4.92%" in err


def test_slower_comparison_fails_with_contributors(samples, tmp_path, capsys):
    # the reverse pair is (136.581009 - 129.862875) / 129.862875 = +5.17% slower
    assert _run(samples, tmp_path, NPU_L2, NPU_L1, "1", "enable_operator_compare") == 3
    err = capsys.readouterr().err
    assert "Performance regression: E2E time 129.863 ms -> 136.581 ms (+5.17%), threshold +1%" in err
    assert "AccumulateGrad" in err                     # the top contributor is named
    assert "Group 0 Communication +6.001 ms" in err    # and the largest waterfall step
    assert list(tmp_path.glob("*.xlsx"))               # the workbook is still written


def test_threshold_above_the_regression_passes(samples, tmp_path):
    assert _run(samples, tmp_path, NPU_L2, NPU_L1, "10") == 0
    assert _run(samples, tmp_path, NPU_L2, NPU_L1, "5.2") == 0
    assert _run(samples, tmp_path, NPU_L2, NPU_L1, "5.1") == 3


def test_bad_threshold_is_usage_error(samples, tmp_path, capsys):
    assert _run(samples, tmp_path, NPU_L2, NPU_L1, "ten") == 2
    assert "--fail_on_regression" in capsys.readouterr().err


def test_api_gate_and_cli_flag_parsing(samples, tmp_path):
    from msprof_compare.api import compare

    r = compare(str(samples / NPU_L2), str(samples / NPU_L1), enable_profiling_compare=True)
    code, message = r.regression_gate(5.0)
    assert code == 3 and "+5.17%" in message
    assert r.regression_gate(6.0)[0] == 0
    with pytest.raises(SystemExit) as exc:
        cli.compare_main(["-bp", str(samples / NPU_L2), "-d", str(samples / NPU_L1), "--enable_profiling_compare",
                          "--fail_on_regression", "3", "-o", str(tmp_path)])
    assert exc.value.code == 3
