"""Negations folded into the arithmetic around them: the reverse sweep negates no value it
can hand on with its sign to an operation that takes it back for free.

Rules write the adjoints of ``-x``, ``a - b`` and ``c / u`` with a minus, and chained they
negate one value again and again: a sigmoid ``1 / (1 + np.exp(-a))`` gives ``d_t28 = -do *
o / _t28``, ``d_t26 = d_t28 * _t27``, ``d_t25 = -d_t26``, two whole-array negations that
cancel. IEEE arithmetic is exact under negation: ``(-a) * b``, ``a * (-b)`` and ``-(a * b)``
are the same number (and so for ``/``), ``-(-a)`` is ``a``, ``a - b`` is by definition
``a + (-b)``, and ``+`` is commutative; signed zeros included. Every rewrite here is one of
these identities, so each number computed is the one computed before.

Guarantee: afterwards a name may hold the negation of the value it held before (it is
*flipped*) only if all of these hold, each checked on the whole function:

- it is bound exactly once, by ``name = expr`` in the reverse sweep (in no ``try``, ``with``
  or nested scope), and is no parameter, no saved value and no name of a nested scope;
- every read of it is in the reverse sweep, reached from the value of ``name = ...`` or of
  ``x += ...``/``x -= ...`` through unary minus, ``*``, ``/``, ``+`` and ``-`` only, and
  rewritten with it: a product or quotient hands the sign on, unary minus, ``+`` and the
  right side of ``-`` take it back, and a sign that reaches ``x += v`` turns it into
  ``x -= v``. A sign that reaches a name not flipped stays where it is, as a minus.

No sign is taken out of a sum (``-(a + b)`` is ``(-a) + (-b)`` only up to the sign of a zero
sum), so the number of negations computed never grows.

>>> import gast
>>> from srcad import astutil as A
>>> fn = gast.parse('''
... def f_adjoint(a, v=None):
...     _t1 = np.exp(a)
...     d_t2 = -v * _t1
...     d_t3 = d_t2 * a
...     da = -d_t3
...     return da
... ''').body[0]
>>> _ = A.set_anno(fn, "n_forward", 1)
>>> print(A.to_source(fold_negations(fn)).strip())
def f_adjoint(a, v=None):
    _t1 = np.exp(a)
    d_t2 = v * _t1
    d_t3 = d_t2 * a
    da = d_t3
    return da
"""
import collections

import gast

from .. import astutil as A

_SCOPES = {gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.ListComp, gast.SetComp,
           gast.DictComp, gast.GeneratorExp}
_BINDERS = {gast.Global, gast.Nonlocal}
_SIGNED = (gast.Add, gast.Sub)
_NEGATION = "-"  # (no name): where ``_roots`` notes that it met a unary minus


def fold_negations(node):
    """Flip the names the module doc allows, where that removes a negation; see module doc."""
    rev = node.body[A.anno(node, "n_forward"):]
    definitions, sites = _roots(rev)
    if "taken" not in sites.get(_NEGATION, ()):  # no minus where a sign can move: nothing to fold
        return node
    loads, excluded = _census(node)
    eligible = _eligible(definitions, sites, loads, excluded)
    flipped = _flipped(definitions, eligible)
    if flipped:
        _rewrite(rev, flipped)
    return node


def _roots(rev):
    """``(definitions, sites)``: the reverse sweep's ``name = expr`` statements by name (a name
    bound twice maps to None), and for each name every read reached from the value of one of
    them or of ``x += ...``/``x -= ...`` through signed arithmetic, as where its sign ends up:
    ``"taken"`` (by unary minus, ``+``, the right of ``-``, or ``+=``/``-=``), or the name it
    is handed to."""
    definitions, sites = {}, collections.defaultdict(list)
    for s in A.walk_statements(rev):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            definitions[name] = None if name in definitions else s
            _climb(s.value, name, sites)
        elif isinstance(s, gast.AugAssign) and isinstance(s.op, _SIGNED):
            _climb(s.value, "taken", sites)
    return definitions, sites


def _climb(expr, end, sites):
    """Record the reads in ``expr`` whose sign ends at ``end`` (see ``_roots``)."""
    if isinstance(expr, gast.Name):
        sites[expr.id].append(end)
    elif isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        sites[_NEGATION].append("taken")
        _climb(expr.operand, "taken", sites)
    elif isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Mult, gast.Div)):
        _climb(expr.left, end, sites)
        _climb(expr.right, end, sites)
    elif isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Add):
        _climb(expr.left, "taken", sites)
        _climb(expr.right, "taken", sites)
    elif isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Sub):
        _climb(expr.left, end, sites)
        _climb(expr.right, "taken", sites)


def _census(node):
    """How often each name is read anywhere in the function, and the names never to flip:
    bound more than once or otherwise than by assignment, parameters, names of nested
    scopes, names a save or restore placeholder (an ``Expr``) stands for."""
    loads, stores, excluded = collections.Counter(), collections.Counter(), set()
    name_node, load, store, expr = gast.Name, gast.Load, gast.Store, gast.Expr
    for n in A.walk(node):
        cls = n.__class__
        if cls is name_node:
            if n.ctx.__class__ is load:
                loads[n.id] += 1
            else:  # Store, Del, Param
                stores[n.id] += 1
                if n.ctx.__class__ is not store:
                    excluded.add(n.id)
        elif cls is expr:
            for role in ("save", "restore"):
                site = A.anno(n, role)
                if site is not None:
                    excluded.add(site.var)
        elif cls in _BINDERS:
            excluded.update(n.names)
        elif cls is gast.alias:
            excluded.add((n.asname or n.name).split(".")[0])
        elif cls in _SCOPES and n is not node:
            excluded.update(x.id for x in A.walk(n) if x.__class__ is name_node)
    excluded.update(name for name, count in stores.items() if count != 1)
    return loads, excluded


def _eligible(definitions, sites, loads, excluded):
    """The names that may be flipped: bound once by a reverse-sweep assignment, every read of
    them a recorded site whose sign is taken, or handed to a name that may be flipped."""
    memo = {}

    def ok(name):
        if name not in memo:
            memo[name] = False  # (a cycle of names handing signs round: none flipped)
            ends = sites.get(name, ())
            memo[name] = (definitions.get(name) is not None and name not in excluded and len(ends) == loads[name]
                          and all(end == "taken" or ok(end) for end in ends))
        return memo[name]

    return {name for name in definitions if ok(name)}


def _flipped(definitions, eligible):
    """The eligible names whose value comes out negated when the names flipped so far are
    read with their signs: iterated until no name changes (a loop may read a name bound
    later in its body), or none if that does not settle."""
    order = [name for name in definitions if name in eligible]
    flipped = set()
    for _ in range(8):
        now = {name for name in order if _pulled(definitions[name].value, flipped)[1]}
        if now == flipped:
            return flipped
        flipped = now
    return set()


def _rewrite(rev, flipped):
    for s in A.walk_statements(rev):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            value, negative = _pulled(s.value, flipped)
            s.value = value if s.targets[0].id in flipped else _kept(s.value, value, negative, flipped)
        elif isinstance(s, gast.AugAssign) and isinstance(s.op, _SIGNED):
            s.value, negative = _pulled(s.value, flipped)
            if negative:  # x += -v is x -= v
                s.op = gast.Sub() if isinstance(s.op, gast.Add) else gast.Add()


def _pulled(expr, flipped):
    """``(e, negative)``: ``expr`` is ``-e`` if ``negative`` else ``e``, exactly, with the
    names in ``flipped`` holding their negations. ``expr`` is not changed: ``e`` is made of
    new nodes where it differs, of ``expr``'s own where it does not."""
    if isinstance(expr, gast.Name):
        return expr, expr.id in flipped
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        inner, negative = _pulled(expr.operand, flipped)
        return inner, not negative
    if not (isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Mult, gast.Div, gast.Add, gast.Sub))):
        return expr, False
    left, left_negative = _pulled(expr.left, flipped)
    right, right_negative = _pulled(expr.right, flipped)
    if isinstance(expr.op, (gast.Mult, gast.Div)):
        same = left is expr.left and right is expr.right
        return (expr if same else _binop(left, expr.op, right, expr)), left_negative != right_negative
    # a sum keeps its sign inside: -(a + b) differs from (-a) + (-b) in the sign of a zero sum
    add = isinstance(expr.op, gast.Add)
    swappable = A.is_atom(left) or A.is_atom(right)  # (an atom's read has no effect to reorder)
    if right_negative:  # l + (-r) is l - r, l - (-r) is l + r
        if left_negative and not add and swappable:  # (-l) - (-r) is r - l
            return _binop(right, gast.Sub(), left, expr), False
        left = _kept(expr.left, left, left_negative, flipped)
        return _binop(left, gast.Sub() if add else gast.Add(), right, expr), False
    if left_negative and add and swappable:  # (-l) + r is r - l
        return _binop(right, gast.Sub(), left, expr), False
    left = _kept(expr.left, left, left_negative, flipped)
    return (expr if left is expr.left and right is expr.right else _binop(left, expr.op, right, expr)), False


def _kept(original, pulled, negative, flipped):
    """The value of ``original``, from its ``_pulled`` form: a negation is computed where it
    was (on a scalar, not moved onto the array a product makes of it) unless a flipped name
    inside needs it computed here."""
    if not negative:
        return pulled
    if not any(n.__class__ is gast.Name and n.id in flipped for n in A.walk(original)):
        return original
    return _negated(pulled, original)
def _binop(left, op, right, like):
    return gast.copy_location(gast.BinOp(left=left, op=op, right=right), like)


def _negated(value, like):
    return gast.copy_location(gast.UnaryOp(op=gast.USub(), operand=value), like)
