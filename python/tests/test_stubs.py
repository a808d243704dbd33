"""The type stubs (rungs/*.pyi, with py.typed) name every public function with the signature the
package has: the same parameters, in the same order, of the same kinds and defaults."""

import ast
import inspect
from pathlib import Path

import pytest

import rungs

PACKAGE = Path(rungs.__file__).resolve().parent


def stub_functions(name):
    tree = ast.parse((PACKAGE / name).read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def stub_params(fn):
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    for arg, default in zip(positional, defaults):
        out.append((arg.arg, "positional", None if default is None else ast.literal_eval(default)))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword", None if default is None else ast.literal_eval(default)))
    return out


def real_params(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kind = "keyword" if p.kind == p.KEYWORD_ONLY else "positional"
        out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


def test_py_typed_ships():
    assert (PACKAGE / "py.typed").exists()


@pytest.mark.parametrize("stub, module", [("__init__.pyi", "rungs"), ("dist.pyi", "rungs.dist"),
                                          ("torch.pyi", "rungs.torch")])
def test_stub_signatures_match(stub, module):
    if module == "rungs.torch":
        pytest.importorskip("torch")
    import importlib

    mod = importlib.import_module(module)
    stubs = stub_functions(stub)
    public = [n for n in getattr(mod, "__all__", stubs) if callable(getattr(mod, n, None))
              and inspect.isfunction(getattr(mod, n))]
    assert public
    for name in public:
        assert name in stubs, f"{module}.{name} has no stub"
        assert stub_params(stubs[name]) == real_params(getattr(mod, name)), name
