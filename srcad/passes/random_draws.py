"""Draws of a random generator the function makes itself, for ``normalize``: after ``rng =
np.random.default_rng(0)`` (``np.random.Generator(bit_generator)``, ``np.random.RandomState(0)``)
at every binding of ``rng``, ``rng.standard_normal(5)`` calls NumPy's own method,
``Generator.standard_normal(rng, 5)``, whose rules (``rules.refusals``) give the numbers no
derivative and refuse a parameter that carries one (``rng.normal(mu, s)``: the draw depends
on ``mu``; ``mu + s * rng.standard_normal()`` says how), and whose result is new memory
(``fresh``). Only the draws that answer numbers made anew (``NUMBER_DRAWS``: not ``choice``
or ``permutation``, which answer items of what they are given, nor ``shuffle``) are read so;
``rng.shuffle(a)`` of such a generator is marked as NumPy's (its callee's ``obj``, the
generator's class), but where every binding of ``a`` is a list display (a shuffle of a list
runs as written). A generator passed in, or a name bound otherwise anywhere in the function,
is left as it is (an object of yours may have a method of that name).
"""
import inspect

import gast
import numpy as np

from .. import astutil as A
from .callees import Callee, parameter_names
from .item_methods import container_locals

# Draws of NumPy's generators (``Generator``, ``RandomState``, ``np.random``'s functions) that
# answer an array or a number whatever they are given (not ``choice`` or ``permutation``, which
# answer items of what they are given).
NUMBER_DRAWS = {"random", "random_sample", "rand", "randn", "randint", "integers", "standard_normal", "normal",
                "uniform", "exponential", "standard_exponential", "gamma", "standard_gamma", "beta", "poisson",
                "binomial", "lognormal", "laplace", "logistic", "chisquare", "standard_t", "standard_cauchy",
                "multivariate_normal", "dirichlet", "multinomial", "rayleigh", "weibull", "pareto", "gumbel",
                "geometric", "negative_binomial", "triangular", "vonmises", "wald"}
_GENERATORS = (np.random.Generator, np.random.RandomState)
# NumPy's methods for those draws (``np.random.Generator.normal``)
DRAW_METHODS = {getattr(cls, name) for cls in _GENERATORS for name in NUMBER_DRAWS if hasattr(cls, name)}
# what makes a generator, and its class (exactly: a subclass may draw otherwise)
_MADE = ((np.random.default_rng, np.random.Generator), (np.random.Generator, np.random.Generator),
         (np.random.RandomState, np.random.RandomState))


def generator_made(call):
    """The class of the generator ``call`` makes (``np.random.default_rng(...)``,
    ``np.random.Generator(...)``, ``np.random.RandomState(...)``, whatever the seed), else None."""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or callee.kind != "object":
        return None
    return next((cls for maker, cls in _MADE if callee.obj is maker), None)


def read_draws(node):
    """Rewrite, in the function ``node`` (its calls resolved), each draw ``rng.d(...)`` (``d``
    one of ``NUMBER_DRAWS``) of a local ``rng`` every binding of which makes a generator of one
    class as ``cls.d(rng, ...)``, calling NumPy's method."""
    from .binding import helper_call  # (binding reads ``fresh``, which reads ``DRAW_METHODS``)

    classes = lists = None
    for call in A.walk(node):
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is None or callee.kind != "method" or callee.name not in NUMBER_DRAWS | {"shuffle"}:
            continue
        classes = _generator_locals(node) if classes is None else classes  # (where some method is a draw's)
        receiver = call.func.value
        cls = classes.get(receiver.id) if isinstance(receiver, gast.Name) else None
        if callee.name == "shuffle":  # NumPy's shuffle, which ``effect_calls.library_store`` makes a store
            lists = container_locals(A.walk(node)) if lists is None else lists
            if cls is not None and not (call.args and isinstance(call.args[0], gast.Name) and call.args[0].id in lists):
                A.set_anno(call, "callee", Callee("method", obj=cls, name="shuffle"))
            continue
        method = getattr(cls, callee.name, None)  # (RandomState has no integers: Python says so)
        if method is None or _may_write_into_an_argument(method, call):
            continue
        drawn = helper_call(f"{cls.__name__}_{callee.name}", method, receiver, *call.args)
        call.func, call.args = drawn.func, drawn.args
        A.set_anno(call, "callee", Callee("object", obj=method, name=f"{receiver.id}.{callee.name}"))


def _may_write_into_an_argument(method, call):
    """Does ``call`` pass ``method`` an array to draw into (``out=``, by keyword or by position),
    whose memory the result then is, or arguments srcad cannot count (``*a``, ``**k``)?"""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    params = list(inspect.signature(method).parameters)
    return "out" in params and (any(k.arg == "out" for k in call.keywords) or len(call.args) >= params.index("out"))


def _generator_locals(node):
    """Local name -> the generator class every binding of it makes; a name also bound any other
    way (a parameter, a loop's target, ``with ... as``, a nested function's) is not one."""
    made, other = {}, set(parameter_names(node))
    binding = {id(s.targets[0]): s.value for s in A.walk(node) if isinstance(s, gast.Assign)
               and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)}
    for n in A.walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            cls = generator_made(binding.get(id(n)))
            if cls is None or made.setdefault(n.id, cls) is not cls:
                other.add(n.id)
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            other.update(n.names)
    return {name: cls for name, cls in made.items() if name not in other}


def refuse_varied_parameters(node, source, varied):
    """Refuse a draw (NumPy's method, ``DRAW_METHODS``) given a value that carries a derivative
    (``varied``): its numbers depend on it, which srcad does not differentiate."""
    for call in A.walk(node):
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        obj = getattr(callee, "obj", None) if getattr(callee, "kind", None) == "object" else None
        if not isinstance(obj, type(np.random.Generator.normal)) or obj not in DRAW_METHODS:
            continue
        given = set().union(*(A.names_read(a) for a in call.args[1:] + [k.value for k in call.keywords]))
        if given & varied:
            raise source.syntax_error(
                f"srcad does not differentiate a random draw ({callee.name}) in its parameters, here "
                f"{', '.join(sorted(given & varied))}: draw standard numbers and write the parameters into "
                "them, mu + sigma * rng.standard_normal(size) (low + (high - low) * rng.random(size))", call)
