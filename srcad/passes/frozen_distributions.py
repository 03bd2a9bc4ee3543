"""Frozen ``scipy.stats`` distributions, for call resolution: a method of a frozen
distribution is the method of the distribution with the frozen parameters appended, whose
rules srcad has (``scipy_stats*``):

- ``stats.norm(mu, s).logpdf(x)`` is rewritten as ``stats.norm.logpdf(x, mu, s)``, so the
  derivative reaches the parameters too;
- ``D.logpdf(x)`` of a module-level ``D = stats.norm(0, 1)`` as
  ``norm.logpdf(x, D.args[0], D.args[1])`` (the ``norm`` of ``scipy.stats``), reading the
  parameters from ``D`` as the code runs; ``D`` itself is a constant;
- a local bound once, ``prior = stats.norm(mu, s)``, and read only through those methods,
  binds the tuple of its parameters, ``prior = (mu, s)``, and ``prior.logpdf(x)`` is
  ``stats.norm.logpdf(x, prior[0], prior[1])`` (``frozen_locals``).

Only the density, mass, distribution and quantile methods (``METHODS``) of a distribution
that is one of ``scipy.stats``'s own are rewritten, called with one positional argument;
any other use of a frozen distribution (``.rvs``, ``.mean()``, a local frozen distribution
bound twice or passed on) is left as it is, for which srcad has no rule.
"""
import sys

import gast

from .. import astutil as A
from ..astutil import set_anno
from ..naming import BUILTIN
from .callees import Callee, denoted, dotted, lookup_path, parameter_names, path_expr

#: methods of a frozen distribution that take one point and are the distribution's method
#: with the frozen parameters appended
METHODS = frozenset({"logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "logpmf", "pmf"})


def frozen_method_call(call, locals_, source):
    """Rewrite ``call`` if it calls a method of a frozen ``scipy.stats`` distribution
    (annotating its ``Callee``); True if it did. Raises ``SrcadSyntaxError`` for such a call
    srcad cannot rewrite (keywords, ``*args``)."""
    func = call.func
    if not isinstance(func, gast.Attribute) or func.attr not in METHODS or "scipy.stats" not in sys.modules:
        return False
    receiver = func.value
    if isinstance(receiver, gast.Call):
        return _frozen_here(call, receiver, locals_, source)
    parts = dotted(receiver)
    if parts is None or parts[0] in locals_:
        return False
    try:
        frozen = denoted(parts, source)
    except (KeyError, AttributeError):
        return False
    return _module_level_frozen(call, parts, frozen, source)


def _distribution(obj):
    """``obj`` if it is one of ``scipy.stats``'s distribution objects (``stats.norm``), else None."""
    stats = sys.modules["scipy.stats"]
    if not isinstance(obj, (stats.rv_continuous, stats.rv_discrete)):
        return None
    return obj if getattr(stats, getattr(obj, "name", ""), None) is obj else None


def _one_point(call, source, what):
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], gast.Starred):
        raise source.syntax_error(
            f"srcad differentiates {what}.{call.func.attr}(x) of a frozen scipy.stats distribution with one "
            f"positional argument; pass the point as {what}.{call.func.attr}(x)", call)


def _frozen_here(call, freezing, locals_, source):
    """``dist(params...).method(x)`` as ``dist.method(x, params...)``."""
    parts = dotted(freezing.func)
    if parts is None or parts[0] in locals_:
        return False
    try:
        dist = _distribution(denoted(parts, source))
    except (KeyError, AttributeError):
        return False
    if dist is None or not hasattr(dist, call.func.attr):  # (a continuous distribution has no logpmf)
        return False
    what = f"{'.'.join(parts)}(...)"
    _one_point(call, source, what)
    if any(isinstance(a, gast.Starred) for a in freezing.args) or any(k.arg is None for k in freezing.keywords):
        raise source.syntax_error(
            f"srcad differentiates a frozen {what} whose parameters are written out; write "
            f"{'.'.join(parts)}.{call.func.attr}(x, loc, scale) with them", freezing)
    method = lookup_path(parts + [call.func.attr], source)
    call.func = gast.copy_location(gast.Attribute(value=freezing.func, attr=call.func.attr, ctx=gast.Load()),
                                   call.func)
    call.args = call.args + freezing.args
    call.keywords = freezing.keywords
    set_anno(call, "callee", Callee("object", obj=method, name=".".join(parts + [call.func.attr])))
    return True


def _module_level_frozen(call, parts, frozen, source):
    """``D.method(x)`` of a module-level frozen distribution ``D`` as ``dist.method(x,
    D.args[0], ..., loc=D.kwds["loc"])`` with ``dist`` the distribution of ``scipy.stats`` it froze."""
    stats = sys.modules["scipy.stats"]
    dist = getattr(frozen, "dist", None)
    if not isinstance(frozen, getattr(stats.distributions, "rv_frozen", ())) or dist is None:
        return False
    own = getattr(stats, getattr(dist, "name", ""), None)
    if own is None or type(own) is not type(dist) or _distribution(own) is None or not hasattr(own, call.func.attr):
        return False
    what = ".".join(parts)
    _one_point(call, source, what)
    lookup_path(parts, source)  # the code is for this object: guarded on the name path
    method = getattr(own, call.func.attr)
    name = f"{own.name}_{call.func.attr}"
    call.func = gast.copy_location(set_anno(A.load(name), BUILTIN, (name, method)), call.func)
    call.args = call.args + [_parameter(parts, "args", i) for i in range(len(frozen.args))]
    call.keywords = [gast.keyword(arg=k, value=_parameter(parts, "kwds", k)) for k in frozen.kwds]
    set_anno(call, "callee", Callee("object", obj=method, name=f"scipy.stats.{own.name}.{method.__name__}"))
    return True


def _parameter(parts, field, key):
    """``D.args[i]`` or ``D.kwds[key]`` of the frozen distribution ``D`` named ``parts``."""
    return gast.Subscript(value=gast.Attribute(value=path_expr(parts), attr=field, ctx=gast.Load()),
                          slice=A.const(key), ctx=gast.Load())


def frozen_locals(node, source):
    """Rewrite, in the function ``node``, each local bound once (``prior = stats.norm(mu, s)``)
    to a frozen distribution of ``scipy.stats`` and read only as ``prior.method(x)`` (one of
    ``METHODS``, one positional argument): the binding holds the tuple of the parameters, each
    call is the distribution's method with them appended. Any other read of the name (passed
    on, ``.mean()``, a nested function's parameter of that name) leaves it as written."""
    if "scipy.stats" not in sys.modules or not isinstance(node, gast.FunctionDef):
        return
    nodes = list(A.walk(node))
    stores, declared = {}, set(parameter_names(node))
    for n in nodes:
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            declared.update(n.names)
    for s in nodes:
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and stores.get(s.targets[0].id) == 1 and s.targets[0].id not in declared
                and isinstance(s.value, gast.Call)):
            continue
        parts, freezing = dotted(s.value.func), s.value
        if (parts is None or stores.get(parts[0]) or parts[0] in declared
                or any(isinstance(a, gast.Starred) for a in freezing.args)
                or any(k.arg is None for k in freezing.keywords)):
            continue
        try:
            dist = _distribution(denoted(parts, source))
        except (KeyError, AttributeError):
            continue
        calls = _method_reads(nodes, s.targets[0]) if dist is not None else None
        if calls is not None and all(hasattr(dist, call.func.attr) for call in calls):
            _read_through_parameters(s, parts, calls)


def _method_reads(nodes, target):
    """The calls ``name.method(x)`` that are every read of the name ``target`` binds; None if
    it is read any other way."""
    calls, receivers = [], set()
    for n in nodes:
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
                and n.func.value.id == target.id and n.func.attr in METHODS and len(n.args) == 1
                and not isinstance(n.args[0], gast.Starred) and not n.keywords):
            calls.append(n)
            receivers.add(id(n.func.value))
    reads = [n for n in nodes if isinstance(n, gast.Name) and n.id == target.id and n is not target]
    return calls if calls and all(id(n) in receivers for n in reads) else None


def _read_through_parameters(binding, parts, calls):
    """``prior = dist(a, k=b)`` as ``prior = (a, b)``; ``prior.method(x)`` as
    ``dist.method(x, prior[0], k=prior[1])``."""
    name, freezing = binding.targets[0].id, binding.value
    binding.value = gast.copy_location(
        gast.Tuple(elts=list(freezing.args) + [k.value for k in freezing.keywords], ctx=gast.Load()), freezing)

    def item(i):
        return gast.Subscript(value=A.load(name), slice=A.const(i), ctx=gast.Load())

    for call in calls:
        call.func = gast.copy_location(gast.Attribute(value=path_expr(parts), attr=call.func.attr, ctx=gast.Load()),
                                       call.func)
        call.args = call.args + [item(i) for i in range(len(freezing.args))]
        call.keywords = [gast.keyword(arg=k.arg, value=item(len(freezing.args) + j))
                         for j, k in enumerate(freezing.keywords)]
