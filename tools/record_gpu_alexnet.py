"""Record a PyTorch (Kineto) GPU trace of one AlexNet training step.

The NPU samples in shared/samples (msinsight `text/level{0,1,2}/rank0_ascend_pt`) profile one step of the
PyTorch ImageNet example training AlexNet with DDP on Ascend (batch 32x3x224x224, SGD momentum 0.9 and
weight decay 1e-4, cross entropy, top-1/top-5 accuracy with `.item()`, schedule skip_first=40, warmup=10,
active=1, so the profiled step is ProfilerStep#50, record_shapes/profile_memory/with_stack/with_modules).
This script runs the same training loop on one CUDA GPU so the project has a same-workload GPU-vs-NPU
pair. It needs only torch: the model is AlexNet as torchvision defines it (same layers and attribute
names, so the module hierarchy matches), and the data are random images like the example's `--dummy`
mode, so nothing is downloaded.

Usage (on a machine with a CUDA GPU):
    python tools/record_gpu_alexnet.py OUT_DIR [--ddp auto|on|off] [--workers N]
Writes OUT_DIR/<worker>.<time>.pt.trace.json.gz (torch's tensorboard_trace_handler naming) and
OUT_DIR/environment.txt (torch, CUDA, GPU and the settings used).
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, Dataset

BATCH = 32
IMAGE = (3, 224, 224)
CLASSES = 1000
SKIP_FIRST, WARMUP, ACTIVE = 40, 10, 1


class AlexNet(nn.Module):
    """AlexNet with torchvision's layer layout and attribute names (features / avgpool / classifier)."""

    def __init__(self, num_classes: int = CLASSES, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class RandomImages(Dataset):
    """Random images and labels, seeded per index so every run sees the same data."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        gen = torch.Generator().manual_seed(index)
        image = torch.rand(IMAGE, generator=gen)
        label = int(torch.randint(0, CLASSES, (1,), generator=gen))
        return image, label


def accuracy(output: torch.Tensor, target: torch.Tensor, topk: tuple[int, ...] = (1,)) -> list[torch.Tensor]:
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in topk]


def init_ddp(mode: str) -> bool:
    """A one-rank NCCL group, so DDP's bucketed all-reduce kernels appear in the trace as on the NPU."""
    if mode == "off":
        return False
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    try:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    except Exception as exc:  # noqa: BLE001 - auto mode records without DDP rather than failing
        if mode == "on":
            raise
        print(f"DDP unavailable ({exc!r}); recording without it", file=sys.stderr)
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--ddp", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--worker-name", default=f"{socket.gethostname()}_{os.getpid()}")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("error: no CUDA GPU visible to torch", file=sys.stderr)
        return 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    ddp = init_ddp(args.ddp)

    model = AlexNet().to(device)
    if ddp:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[0])
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    steps = SKIP_FIRST + WARMUP + ACTIVE
    loader = DataLoader(
        RandomImages(steps * BATCH), batch_size=BATCH, shuffle=True, num_workers=args.workers, pin_memory=True
    )

    model.train()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(skip_first=SKIP_FIRST, wait=0, warmup=WARMUP, active=ACTIVE, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(args.out_dir), worker_name=args.worker_name, use_gzip=True),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        with_modules=True,
    ) as prof:
        for images, target in loader:
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            loss_value, top1, top5 = loss.item(), acc1[0].item(), acc5[0].item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()
    torch.cuda.synchronize()
    if ddp:
        dist.destroy_process_group()

    traces = sorted(p.name for p in args.out_dir.glob("*.pt.trace.json.gz"))
    props = torch.cuda.get_device_properties(device)
    lines = [
        f"trace: {', '.join(traces)}",
        f"gpu: {props.name} ({props.total_memory // 2**20} MiB, {props.multi_processor_count} SMs)",
        f"torch: {torch.__version__}; cuda: {torch.version.cuda}; cudnn: {torch.backends.cudnn.version()}",
        f"nccl: {'.'.join(map(str, torch.cuda.nccl.version())) if ddp else 'not used'}",
        f"python: {platform.python_version()}; host: {platform.platform()}",
        f"ddp: {ddp} (world size 1); dataloader workers: {args.workers}; batch: {BATCH}x{'x'.join(map(str, IMAGE))}",
        f"schedule: skip_first={SKIP_FIRST} warmup={WARMUP} active={ACTIVE} (profiled step ProfilerStep#{steps - 1})",
        "profiler: record_shapes, profile_memory, with_stack, with_modules",
        f"last step: loss {loss_value:.4f}, top-1 {top1:.1f}%, top-5 {top5:.1f}%",
    ]
    (args.out_dir / "environment.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if traces else 1


if __name__ == "__main__":
    sys.exit(main())
