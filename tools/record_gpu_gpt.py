"""Record a large real PyTorch (Kineto) GPU trace: several training steps of a GPT-2-small-shaped model.

The samples in shared/samples are small (the largest GPU trace is ~20 MB), and the large-input
benchmarks scale them synthetically (``bench/make_large.py``). This script records what users feed the
tool in practice: a multi-step training trace of a transformer language model, hundreds of MB, with the
profiler switches users turn on (record_shapes, profile_memory, with_stack, with_modules). Recorded with
``--precision bf16`` and ``--precision fp32`` and the same step count, the two traces are a realistic
same-workload regression pair (autocast dropped: cuBLAS fp32 GEMMs instead of bf16, no flash attention).

It needs only torch: the model is defined here (GPT-2 layer layout and attribute names), the tokens are
random, nothing is downloaded.

Usage (on a machine with a CUDA GPU):
    python tools/record_gpu_gpt.py OUT_DIR --precision bf16 --target-mb 200   # prints the step count used
    python tools/record_gpu_gpt.py OUT_DIR --precision fp32 --active N
Writes OUT_DIR/<worker>.<time>.pt.trace.json (torch's tensorboard_trace_handler naming) and
OUT_DIR/environment_<precision>.txt. With ``--target-mb`` one profiled step is recorded first to size
the run, and the step count whose trace is nearest that size is used.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

VOCAB, CONTEXT = 50304, 512
WAIT, WARMUP = 3, 2


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, layers: int, dim: int, heads: int) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, dim)
        self.wpe = nn.Embedding(CONTEXT, dim)
        self.h = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight
        for module in self.modules():  # GPT-2's initialisation, so the loss starts near ln(VOCAB)
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def train(out_dir: Path, worker: str, precision: str, active: int, args: argparse.Namespace) -> Path:
    """Train WAIT + WARMUP + active steps under the profiler; returns the trace written."""
    torch.manual_seed(0)
    device = torch.device("cuda", 0)
    model = GPT(args.layers, args.dim, args.heads).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if precision == "bf16" else nullcontext()
    gen = torch.Generator(device=device).manual_seed(1)
    before = set(out_dir.glob("*.pt.trace.json"))
    model.train()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=active, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(out_dir), worker_name=worker),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        with_modules=True,
    ) as prof:
        for _ in range(WAIT + WARMUP + active):
            idx = torch.randint(0, VOCAB, (args.batch, CONTEXT + 1), device=device, generator=gen)
            with autocast:
                loss = model(idx[:, :-1], idx[:, 1:])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            args.last_loss = loss.item()
            prof.step()
    torch.cuda.synchronize()
    written = sorted(set(out_dir.glob("*.pt.trace.json")) - before)
    if len(written) != 1:
        raise SystemExit(f"expected one trace in {out_dir}, found {len(written)}")
    return written[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--precision", choices=("bf16", "fp32"), required=True)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--active", type=int, help="profiled training steps")
    group.add_argument("--target-mb", type=float, help="size the run to about this many MB of trace")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("error: no CUDA GPU visible to torch", file=sys.stderr)
        return 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.cuda.set_device(0)
    worker = f"gpt_{args.precision}"
    active = args.active
    if active is None:
        with tempfile.TemporaryDirectory() as tmp:
            one = train(Path(tmp), worker, args.precision, 1, args)
            per_step = one.stat().st_size / 1e6
        active = max(1, round(args.target_mb / per_step))
        print(f"one profiled step: {per_step:.1f} MB; recording {active} steps", file=sys.stderr)
    t0 = time.perf_counter()
    trace = train(args.out_dir, worker, args.precision, active, args)
    seconds = time.perf_counter() - t0
    props = torch.cuda.get_device_properties(0)
    lines = [
        f"trace: {trace.name} ({trace.stat().st_size / 1e6:.1f} MB, recorded in {seconds:.1f} s)",
        f"gpu: {props.name} ({props.total_memory // 2**20} MiB, {props.multi_processor_count} SMs)",
        f"torch: {torch.__version__}; cuda: {torch.version.cuda}; cudnn: {torch.backends.cudnn.version()}",
        f"python: {platform.python_version()}; host: {platform.platform()}",
        f"model: GPT {args.layers} layers, dim {args.dim}, {args.heads} heads, vocab {VOCAB}, context {CONTEXT}; "
        f"batch {args.batch}; AdamW, grad-norm clip 1.0; precision {args.precision}",
        f"schedule: wait={WAIT} warmup={WARMUP} active={active}",
        "profiler: record_shapes, profile_memory, with_stack, with_modules",
        f"last step loss: {args.last_loss:.4f} (random tokens: ~ln({VOCAB}) = {math.log(VOCAB):.2f})",
    ]
    (args.out_dir / f"environment_{args.precision}.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), file=sys.stderr)
    print(active)
    return 0


if __name__ == "__main__":
    sys.exit(main())
