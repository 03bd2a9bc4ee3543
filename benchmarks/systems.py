"""The systems compared: each turns a workload into a zero-argument call that returns the
gradient, with its inputs converted once, outside the timing.

Autograd, PyTorch and JAX run the very same model code: the model function's code object
is rebound to globals where ``np`` is ``autograd.numpy``, ``torch`` or ``jax.numpy``.
"""
import functools
import importlib
import types

import numpy as np


class Unavailable(Exception):
    """The system cannot run this workload (not installed, or the program does not trace)."""


def rebind(fn, array_module):
    """``fn``'s own code, with ``np`` meaning ``array_module``, in it and in the functions of
    its module it calls (soft-DTW's ``softmin3``)."""
    namespace = dict(fn.__globals__, np=array_module)
    for name, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__:
            namespace[name] = types.FunctionType(value.__code__, namespace, value.__name__, value.__defaults__,
                                                 value.__closure__)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _as_tuple(grads):
    return tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)


def _import(name):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # a broken install is as good as none: skip with the reason
        raise Unavailable(f"import {name} failed: {type(exc).__name__}: {exc}") from None


class System:
    key = label = ""

    def version(self):
        return ""

    def prepare(self, w):
        """``(call, to_numpy)``: ``call()`` gives the gradient, ``to_numpy`` makes it a tuple of arrays."""
        raise NotImplementedError


class Hand(System):
    key, label = "hand", "hand-written NumPy"

    def version(self):
        return f"NumPy {np.__version__}"

    def prepare(self, w):
        extra = () if w.v is None else (w.v,)
        return functools.partial(w.hand, *w.args, *extra), _as_tuple


class SrcadAdjoint(System):
    key, label = "srcad", "srcad f.adjoint"

    def version(self):
        return f"srcad {_import('srcad').__version__}"

    def prepare(self, w):
        srcad = _import("srcad")
        if w.kind == "jacobian":
            return functools.partial(srcad.jacobian(w.function, wrt=w.wrt, mode="rev"), *w.args), _as_tuple
        adjoint = srcad.adjoint(w.function, wrt=w.wrt) if w.companion else srcad.differentiable(w.function, wrt=w.wrt).adjoint
        extra = () if w.v is None else (w.v,)
        return functools.partial(adjoint, *w.args, *extra), _as_tuple


class SrcadVjp(System):
    key, label = "srcad_vjp", "srcad f.vjp + pullback"

    def prepare(self, w):
        srcad = _import("srcad")
        if w.kind == "jacobian":
            raise Unavailable("the Jacobian is timed once, as srcad.jacobian(mode=\"rev\") in the f.adjoint column")
        d = srcad.differentiable(w.function, wrt=w.wrt)
        args, v = w.args, w.v

        def call():
            _, pullback = d.vjp(*args)
            return pullback(v)

        return call, _as_tuple


class Autograd(System):
    key, label = "autograd", "autograd"

    def version(self):
        return f"autograd {getattr(_import('autograd'), '__version__', '')}".strip()

    def prepare(self, w):
        autograd = _import("autograd")
        f = rebind(w.function, _import("autograd.numpy"))
        if w.kind == "jacobian":
            return functools.partial(autograd.jacobian(f, argnum=w.wrt), *w.args), _as_tuple
        if w.v is None:
            return functools.partial(autograd.grad(f, argnum=w.wrt), *w.args), _as_tuple
        make_vjp = autograd.make_vjp(f, argnum=w.wrt)
        args, v = w.args, w.v

        def call():
            pullback, _ = make_vjp(*args)
            return pullback(v)

        return call, _as_tuple


class Torch(System):
    key, label = "torch", "PyTorch eager"

    def version(self):
        return f"PyTorch {_import('torch').__version__}"

    def prepare(self, w):
        torch = _import("torch")
        torch.set_num_threads(1)
        torch.set_default_dtype(torch.float64)  # np.zeros, np.full, ... in the program: float64 as NumPy's
        f = rebind(w.function, _TorchAsNumpy(torch))
        args = [torch.tensor(a, dtype=torch.float64, requires_grad=i in w.wrt_tuple) if isinstance(a, np.ndarray)
                or i in w.wrt_tuple else a for i, a in enumerate(w.args)]
        if w.kind == "jacobian":
            position = w.wrt_tuple[0]
            jacobian, x = torch.autograd.functional.jacobian, args[position].detach()

            def of_x(value):
                return f(*args[:position], value, *args[position + 1:])

            return (lambda: jacobian(of_x, x)), lambda grads: (grads.numpy(),)
        wrt = [args[i] for i in w.wrt_tuple]
        v = None if w.v is None else torch.tensor(w.v, dtype=torch.float64)
        grad = torch.autograd.grad

        def call():
            return grad(f(*args), wrt, grad_outputs=v)

        return call, lambda grads: tuple(g.detach().numpy() for g in grads)


class _TorchAsNumpy:
    """``torch`` for a NumPy program: NumPy's spellings torch lacks, by their torch equivalents."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def dot(self, a, b):  # torch.dot takes 1-D tensors only; np.dot of 1-D and 2-D operands is matmul
        return self._torch.matmul(a, b)

    def pad(self, a, width, mode="constant"):
        return self._torch.nn.functional.pad(a, (width,) * (2 * a.ndim), mode=mode)

    def logaddexp(self, x1, x2):
        torch = self._torch
        return torch.logaddexp(torch.as_tensor(x1, dtype=torch.float64), torch.as_tensor(x2, dtype=torch.float64))


class _Jax(System):
    jit = True

    def version(self):
        return f"JAX {_import('jax').__version__}"

    def _modules(self):
        jax = _import("jax")
        jax.config.update("jax_enable_x64", True)
        return jax, _import("jax.numpy")

    def prepare(self, w):
        if self.jit and w.jax_jit:
            raise Unavailable(w.jax_jit)
        jax, jnp = self._modules()
        program = w.jit_function if self.jit and w.jit_function is not None else w.function
        f = rebind(program, jnp)
        wrt = w.wrt_tuple
        if w.kind == "jacobian":
            gradient = jax.jacrev(f, argnums=wrt[0])
        elif w.v is None:
            gradient = jax.grad(f, argnums=wrt)
        else:
            def gradient(*args_and_v):
                *args, v = args_and_v

                def of_wrt(*values):
                    full = list(args)
                    for i, value in zip(wrt, values):
                        full[i] = value
                    return f(*full)

                return jax.vjp(of_wrt, *(args[i] for i in wrt))[1](v)
        # Python ints (trip counts) stay static: a loop's range cannot be traced
        static = [i for i, a in enumerate(w.args) if isinstance(a, int) and i not in wrt]
        if self.jit:
            gradient = jax.jit(gradient, static_argnums=static)
        inputs = [a if i in static else jnp.asarray(a) for i, a in enumerate(w.args)]
        inputs += [] if w.v is None else [jnp.asarray(w.v)]
        block = jax.block_until_ready

        def call():
            return block(gradient(*inputs))

        return call, lambda grads: tuple(np.asarray(g) for g in _as_tuple(grads))


class Tangent(System):
    """tangent-ad (source transformation too): ``tangent.grad``, or ``tangent.autodiff`` whose
    adjoint takes the cotangent last."""
    key, label = "tangent", "tangent-ad"

    def version(self):
        return f"tangent-ad {getattr(_import('tangent'), '__version__', '')}".strip()

    def prepare(self, w):
        tangent = _import("tangent")
        if w.kind == "jacobian":
            raise Unavailable("tangent-ad has no Jacobian")
        if w.v is None:
            return functools.partial(tangent.grad(w.function, wrt=w.wrt_tuple), *w.args), _as_tuple
        return functools.partial(tangent.autodiff(w.function, wrt=w.wrt_tuple), *w.args, w.v), _as_tuple


class JaxJit(_Jax):
    key, label, jit = "jax_jit", "JAX jit", True


class JaxEager(_Jax):
    key, label, jit = "jax_eager", "JAX no jit", False


ALL = [Hand(), SrcadAdjoint(), SrcadVjp(), Autograd(), Torch(), JaxJit(), JaxEager(), Tangent()]

