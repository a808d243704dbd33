"""rungs for PyTorch models: route a model's nn.Linear layers through rungs.linear, and quantize
tensors to fp8 in the layouts rungs.scaled_mm reads.

    import rungs.torch
    swapped = rungs.torch.swap_linears(model)                  # every nn.Linear now runs rungs.linear
    swapped = rungs.torch.swap_linears(model, filter=lambda name, m: "mlp" in name)
    swapped.restore()                                          # back to torch's own
    with rungs.torch.swap_linears(model): ...                  # swapped inside the block only

A swapped layer is the same module object with the same parameters, buffers, hooks and state_dict;
only its class changes (to RungsLinear, a subclass of nn.Linear whose forward calls rungs.linear),
so isinstance(m, nn.Linear) still holds, torch.compile traces it with no graph break, and
restore() puts the class back.
"""

import torch.nn as nn

from . import _linear, linear as _rungs_linear

__all__ = ["RungsLinear", "SwappedLinears", "swap_linears", "quantize_fp8"]

quantize_fp8 = _linear.quantize_fp8


class RungsLinear(nn.Linear):
    """nn.Linear whose forward is rungs.linear (the variant and math mode as attributes)."""

    rungs_variant = "auto"
    rungs_math = "fp32"

    def forward(self, x):
        return _rungs_linear(x, self.weight, self.bias, variant=self.rungs_variant, math=self.rungs_math)


class SwappedLinears:
    """The layers swap_linears swapped (names, in module order), with restore(); a context manager
    that restores on exit."""

    def __init__(self, swapped):
        self._swapped = swapped  # [(name, module, its class before)]

    @property
    def names(self):
        return [name for name, _, _ in self._swapped]

    def __len__(self):
        return len(self._swapped)

    def restore(self):
        """Gives every swapped layer its class back (a second call does nothing)."""
        for _, module, cls in reversed(self._swapped):
            if type(module) is RungsLinear:
                module.__class__ = cls
                for attr in ("rungs_variant", "rungs_math"):
                    module.__dict__.pop(attr, None)
        self._swapped = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()
        return False

    def __repr__(self):
        return f"SwappedLinears({self.names})"


def swap_linears(module, *, filter=None, variant="auto", math="fp32"):
    """Routes the nn.Linear layers of `module` (itself included) through rungs.linear: every
    submodule whose type is exactly torch.nn.Linear and, with filter, for which filter(name,
    submodule) is true (name as in module.named_modules()). variant and math: rungs.linear's, per
    layer. Returns a SwappedLinears whose restore() undoes the swap."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module: {type(module).__qualname__} is not a torch.nn.Module")
    if not isinstance(variant, str):
        raise TypeError(f"variant: {variant!r} is not a str")
    if math not in ("fp32", "tf32", "tf32x3"):
        raise ValueError(f"math: {math!r} (must be 'fp32', 'tf32' or 'tf32x3')")
    swapped = []
    for name, sub in module.named_modules():
        if type(sub) is not nn.Linear or (filter is not None and not filter(name, sub)):
            continue
        sub.__class__ = RungsLinear
        if variant != "auto":
            sub.rungs_variant = variant
        if math != "fp32":
            sub.rungs_math = math
        swapped.append((name, sub, nn.Linear))
    return SwappedLinears(swapped)
