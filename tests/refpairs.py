"""The inputs (paths under shared/samples) of the original's reference pairs (shared/reference-outputs, its
README): one table for the tests that compare our output with the original's."""

TEXT = "msinsight/test/data/pytorch/text"
L1 = f"{TEXT}/level1/rank0_ascend_pt"
TIMELINE = "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json"
H100 = "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
MSPROF = "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704"
LEGACY = "mindinsight/tests/utils/resource/run_{}/normal_run/profiler/{}timeline_display_1.json"
PAIRS = {
    "1-npu-text-l1-vs-l2": (L1, f"{TEXT}/level2/rank0_ascend_pt"),
    "2-npu-text-l0-rank0-vs-rank1": (f"{TEXT}/level0/rank0_ascend_pt", f"{TEXT}/level0/rank1_ascend_pt"),
    "3-npu-db-l1-vs-l2": ("msinsight/test/data/pytorch/db/level1/rank0_ascend_pt",
                          "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"),
    "4-gpu-alexnet-vs-npu-text-l1": (
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", L1),
    "5-gpu-kineto-resnet50": (
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"),
    "6b-gpu-timesformer-h100-self": (H100, H100),
    "7-gpu-hta-dfindex-vs-nsres": (
        "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
        "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
    "8-npu-traceview-file-vs-file": (TIMELINE, f"{L1}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    "8b-npu-traceview-file-vs-dir": (TIMELINE, L1),
    "9c-mindspore-legacy-timeline-display-files": (LEGACY.format(1, ""), LEGACY.format(2, "ascend_")),
    "9d-mindspore-legacy-msprof-timeline-files": (
        f"{MSPROF}322_COJGGGCANRMICFBC/device_0/timeline/msprof_0_2_1.json",
        f"{MSPROF}567_GQFAMHBKGODKJMLA/device_1/timeline/msprof_1_0_1.json"),
}
