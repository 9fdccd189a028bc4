"""Time figures that are sums (or averages) of whole-ns durations are the exact decimal, not a float running
sum's noise (docs/differences.md, "Communication totals, DB kernel-type figures and kernel-level contributors carry no
float noise").

Expected values are computed by hand from the inputs: every duration rounded to the ns, the ns summed as
integers, the sum written in µs (or ms).
"""

from __future__ import annotations

from pathlib import Path

from msprof_compare.api import compare

DB = Path(__file__).parent / "data" / "db"


def _comm_rows(base: Path, comparison: Path) -> dict[str, dict]:
    f = compare(str(base), str(comparison), enable_communication_compare=True).sheet("CommunicationCompare")
    rows = {}
    for _, r in f.iterrows():
        key = r["Communication OP Name"] if r["Communication OP Name"] != "|" else r["Task Name"]
        rows[key] = r
    return rows


def test_communication_totals_and_averages_are_exact_on_a_text_pair(samples) -> None:
    """Pair 1 (text level1 vs level2, trace_view.json). Base allreduce: 4 ops of 79089.52021875, 2281.1055625,
    2402.388 and 22218.8639375 µs, i.e. 79089520 + 2281106 + 2402388 + 22218864 = 105991878 ns: Total
    105991.878 µs (the float sum gave 105991.87800000001), Avg 105991878 / 4 ns = 26497.9695 µs (was
    26497.969500000003). The comparison's 36 Memcpy tasks: 12527.692 µs (was 12527.692000000003)."""
    text = samples / "msinsight/test/data/pytorch/text"
    rows = _comm_rows(text / "level1/rank0_ascend_pt", text / "level2/rank0_ascend_pt")
    allreduce = rows["allreduce"]
    assert allreduce["Total Duration(us)"] == 105991.878
    assert allreduce["Avg Duration(us)"] == 26497.9695
    assert allreduce["Max Duration(us)"] == 79089.52 and allreduce["Min Duration(us)"] == 2281.106
    assert rows["Reduce_Inline"]["Total Duration(us)"] == 15634.357  # was 15634.357000000004
    assert rows["Memcpy"]["Total Duration(us).1"] == 12527.692
    assert allreduce["Diff Duration(us)"] == -6018.6  # 99973.277 - 105991.878, to 0.01 µs as before


def test_communication_totals_and_averages_are_exact_on_a_db_pair() -> None:
    """The DB excerpts (tests/data/db, all COMMUNICATION_OP rows of pair 3's databases). Base allreduce:
    endNs - startNs = 88750993 + 2180324 + 2412628 + 8764155 = 102108100 ns: Total 102108.1 µs (was
    102108.09999999999), Avg 25527.025 µs (was 25527.024999999998); comparison Total 94107.521 µs (was
    94107.52100000001), Avg 94107521 / 4 ns = 23526.88025 µs (was 23526.880250000002)."""
    rows = _comm_rows(DB / "l1", DB / "l2")
    allreduce = rows["allreduce"]
    assert allreduce["Total Duration(us)"] == 102108.1
    assert allreduce["Avg Duration(us)"] == 25527.025
    assert allreduce["Total Duration(us).1"] == 94107.521
    assert allreduce["Avg Duration(us).1"] == 23526.88025


def test_kernel_level_contributors_are_exact_ms(samples) -> None:
    """With only the kernel sheet, the Summary's contributors read KernelCompare's µs totals (to 0.01 µs) and
    show them in ms: 105991.88 µs / 1000 gave 105.99188000000001 ms (pair 1's hcom_allReduce_), 321.47 µs
    gave 0.32147000000000003 (the DB excerpts' Conv2DBackpropFilter, comparison side); exact: 105.99188 and
    0.32147."""
    text = samples / "msinsight/test/data/pytorch/text"
    res = compare(str(text / "level1/rank0_ascend_pt"), str(text / "level2/rank0_ascend_pt"),
                  enable_kernel_compare=True)
    top = res.contributors
    assert (top["Level"] == "kernel").all()
    assert top.iloc[0]["Name"] == "hcom_allReduce_" and top.iloc[0]["Base(ms)"] == 105.99188
    assert top.iloc[0]["Comparison(ms)"] == 99.97328 and top.iloc[0]["Diff(ms)"] == -6.0186

    top = compare(str(DB / "l1"), str(DB / "l2"), enable_kernel_compare=True).contributors
    conv = top[top["Name"].str.startswith("Conv2DBackpropFilter ")].iloc[0]
    assert (conv["Base(ms)"], conv["Comparison(ms)"]) == (0.32893, 0.32147)
    # every contributor figure is a whole number of ns (0.01 µs here): no float noise left
    for col in ("Base(ms)", "Comparison(ms)", "Diff(ms)"):
        assert (top[col].round(6) == top[col]).all(), col


def test_db_kernel_type_totals_are_exact() -> None:
    """A DB has no op_statistic.csv: KernelTypeCompare's per-type figures are computed from the TASK rows. The DB
    excerpts' MatMulV2 (AI_CORE) tasks of l2 last 372927 + 129742 + 57222 + 22400 + 17200 + 44721 + 30381 +
    294346 = 968939 ns (endNs - startNs): Total 968.939 µs (the float sum of µs gave 968.9390000000001), Avg
    968939 / 8 ns = 121.117375 µs (was 121.11737500000001); l1's MaxPoolGradWithArgmaxV1: 109762 + 100642 +
    102862 = 313266 ns, Total 313.266 (was 313.26599999999996), Avg 104.422 (was 104.42199999999998)."""
    f = compare(str(DB / "l1"), str(DB / "l2"), enable_kernel_compare=True,
                use_kernel_type=True).sheet("KernelTypeCompare")
    mm = f[(f["Kernel Type"] == "MatMulV2") & (f["Core Type"] == "AI_CORE")].iloc[0]
    assert (mm["Total Duration(us).1"], mm["Avg Duration(us).1"], mm["Calls.1"]) == (968.939, 121.117375, 8)
    assert (mm["Max Duration(us).1"], mm["Min Duration(us).1"]) == (372.927, 17.2)
    mp = f[f["Kernel Type"] == "MaxPoolGradWithArgmaxV1"].iloc[0]
    assert (mp["Total Duration(us)"], mp["Avg Duration(us)"], mp["Calls"]) == (313.266, 104.422, 3)
