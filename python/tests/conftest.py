"""Shared pieces of rungs' Python tests: whether a CUDA device is usable, the optional frameworks,
and FakeCudaArray, an array that claims to live on a CUDA device (for the argument checks on
machines without one)."""

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

import rungs

REPO = Path(__file__).resolve().parents[2]


def gpu_usable():
    """A CUDA device the library can use (the runtime sees one) and, where torch is installed, one
    torch can use too."""
    if rungs._rungs.device_count() == 0:
        return False
    if importlib.util.find_spec("torch") is not None:
        import torch

        return torch.cuda.is_available()
    return True


GPU = gpu_usable()
needs_gpu = pytest.mark.skipif(not GPU, reason="no usable CUDA device")
needs_no_gpu = pytest.mark.skipif(GPU, reason="a CUDA device is usable here (this checks the failure without one)")


def cmake_version():
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(rungs VERSION ([0-9.]+)", text).group(1)


def rungs_cli():
    """The rungs executable the wheel installed beside this Python, else the one on PATH, else the
    C++ build's (build/rungs), else None."""
    beside = Path(sys.executable).parent / "rungs"
    if beside.exists():
        return str(beside)
    for candidate in (shutil.which("rungs"), os.environ.get("RUNGS_CLI"), str(REPO / "build" / "rungs")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


class FakeCudaArray:
    """A NumPy array presented as if it were in CUDA device memory: __dlpack_device__ says CUDA
    device `device` and __dlpack__ hands out the NumPy array's capsule (recording the stream it was
    asked for). rungs reads pointer, shape, strides and dtype from it like from any DLPack producer,
    so every check before the library call runs on it; a call that reaches the library gets
    rungs.Error where no GPU is usable. Never pass one to rungs where a GPU is usable."""

    def __init__(self, array, device=0):
        self.array = array
        self.device = device
        self.streams = []

    def __dlpack_device__(self):
        return (2, self.device)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.array.__dlpack__()

    @property
    def T(self):
        return type(self)(self.array.T, self.device)

    def __getitem__(self, index):
        return type(self)(self.array[index], self.device)


class OtherFakeCudaArray(FakeCudaArray):
    """The same, from another framework (its type's module differs)."""


OtherFakeCudaArray.__module__ = "otherframework"
