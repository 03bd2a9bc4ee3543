"""Call resolution: bind every call in a function to the Python object it calls."""
import inspect

import gast
import numpy as np

from .. import astutil as A
from ..astutil import anno, names_stored, set_anno
from ..errors import missing_name
from ..naming import BUILTIN
from .callees import Callee, denoted, dotted, local_names, lookup_path, parameter_names, readable
from .dispatch_tables import read_dispatch_tables
from .getter_calls import GETTERS, read_getter_calls
from .frozen_distributions import frozen_locals, frozen_method_call
from .held_calls import held_function_call
from .item_methods import (ItemMethodCalls, container_locals, held_classes, item_functions, item_method_call,
                           object_items)
from .local_lists import unroll_local_lists
from .local_objects import lower_local_objects
from .local_partials import read_local_partials
from .local_functions import SCOPES, defined_before, inner_scope_children, outer_scope_children, scope_functions
from .method_calls import (ClassItself, bound_method_call, called_object_call, method_owner, partial_call, rule_partial_call,
                           through_class_itself, through_parameter, through_self, through_super)
from .module_aliases import read_module_aliases
from .record_stores import rebuild_stored_records
from .property_reads import PropertyReads, property_read
from .record_classes import record_locals
from .stored_methods import stored_method_call


def _calls_in_scopes(node, locals_, functions, source):
    """Each call and attribute read in ``node`` with the local names where it runs, which of them are parameters
    of a function around it, which a nested ``def`` or ``lambda`` around it binds (it adds
    its parameters and assignments to its enclosing scope's), and which denote a function
    defined in the function there (``local_functions``: a scope binding a name hides the
    function of that name around it)."""
    params = parameter_names(node) if isinstance(node, (gast.FunctionDef, gast.Lambda)) else set()
    stack = [(child, locals_, params, frozenset(), functions) for child in A.child_nodes(node)]
    while stack:
        n, scope, scope_params, nested, functions = stack.pop()
        if isinstance(n, SCOPES):
            stack.extend((child, scope, scope_params, nested, functions) for child in outer_scope_children(n))
            bound, defined = scope_functions(n, functions, source)
            _check_defined_before(n, defined, source)
            functions, children = (functions - bound) | set(defined), inner_scope_children(n)
        if isinstance(n, gast.FunctionDef):
            inner = local_names(n)
            scope, scope_params, nested = scope | inner, (scope_params - inner) | parameter_names(n), nested | inner
        elif isinstance(n, gast.Lambda):
            inner = parameter_names(n)
            scope, scope_params, nested = scope | inner, scope_params | inner, nested | inner
        if isinstance(n, gast.Call) or isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Load):
            yield n, scope, scope_params, nested, functions
        # (its children read after ``n`` is handled: resolving a call may change it)
        stack.extend((child, scope, scope_params, nested, functions) for child in A.child_nodes(n))


def _check_defined_before(scope, defined, source):
    """Refuse a call of a function ``scope`` defines (``defined``: name -> its statement) that
    may run where the definition has not (``local_functions.defined_before``)."""
    if not defined or not isinstance(scope, gast.FunctionDef):
        return
    for call in A.walk(scope):
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id in defined
                and not defined_before(scope, defined[call.func.id], call)):
            raise source.syntax_error(
                f"'{call.func.id}' may be called here where its definition (line "
                f"{defined[call.func.id].lineno}) has not run (it is in a branch, loop, try or with of its own, or "
                "later); define the function before the call, outside the branch", call)


def resolve_calls(node, source, local_functions=(), param_classes=()):
    """Annotate each ``gast.Call`` in ``node`` with a ``Callee`` under the key ``"callee"``.

    Every name path resolved this way is recorded with its object under ``"resolved"`` on
    ``source.node``: the code generated from it is only valid while they are the same.

    Afterwards every call is one of: ``Callee("object", obj)`` for a name or dotted name
    that resolves through the function's closure, globals and builtins (``np.sin`` becomes
    the real ``numpy.sin``); ``Callee("method", name=...)`` for a method of a local value
    (``x.sum``); ``Callee("local", name=...)`` for a function defined inside the function;
    ``Callee("parameter", name=...)`` for a call of a parameter (``f(y)`` in ``def rk4(f, y)``),
    which inlining replaces by the function the caller passes when it is known
    (``inline.static_function``) and normalisation refuses otherwise. A name that resolves
    nowhere raises ``SrcadSyntaxError`` at its line.

    ``param_classes`` (``(parameter, class)`` pairs: the classes of the arguments the code
    is compiled for) resolves ``model.predict(x)`` and ``model(x)`` on such a parameter
    through the class, as ``self.step(x)`` in a method is; a pair holding a
    ``held_objects.HeldFunction`` (``("model.act", ...)``: a function the object holds in an
    attribute) resolves ``model.act(z)`` as that function (``held_calls``).

    >>> import gast, numpy as np
    >>> from srcad.source import capture
    >>> def f(x):
    ...     return np.sin(x).sum()
    >>> src = capture(f)
    >>> tree = resolve_calls(src.node, src)
    >>> calls = [n for n in gast.walk(tree) if isinstance(n, gast.Call)]
    >>> sorted(str(anno(c, "callee")) for c in calls)
    ["Callee(method, 'sum')", "Callee(object, 'np.sin')"]
    """
    if node is source.node and isinstance(node, gast.FunctionDef):
        read_getter_calls(node, source)  # attrgetter("w")(obj): obj.w
        unroll_local_lists(node, source)  # for layer in [Dense(W1, b1), Dense(W2, b2)]: one copy per layer
        lower_local_objects(node, source)  # acc = Accumulator(); acc.add(x): its attributes in names
        rebuild_stored_records(node, source)  # p = P(w, b); p.w = e: p = P(w=e, b=p.b)
        read_module_aliases(node, source)  # xp = np: xp.sin(x) calls np.sin
        read_local_partials(node, source)  # half = partial(g, s=0.5); half(x): g(x, s=0.5)
        frozen_locals(node, source)  # prior = norm(mu, s); prior.logpdf(x): norm.logpdf(x, *prior)
        read_dispatch_tables(node, source)  # ACTS[act](z): np.tanh(z) if ACTS[act] is np.tanh else ...
    locals_ = local_names(node)
    nodes = list(A.walk(node))
    functions = frozenset(local_functions)
    if isinstance(node, gast.FunctionDef):
        defined = scope_functions(node, functions, source)[1]
        _check_defined_before(node, defined, source)
        functions |= set(defined)
    owner = method_owner(source, node)
    # super() in a lambda, nested def or comprehension is not the method's (its first argument is theirs)
    nested_calls = {id(c) for n in nodes if isinstance(n, _NESTED_SCOPES) and n is not node
                    for c in A.walk(n) if isinstance(c, gast.Call)} if owner is not None else set()
    given = {p: c for p, c in param_classes if isinstance(c, type)}
    stored = names_stored(node) if param_classes else set()
    param_classes = {p: c for p, c in param_classes if p.partition(".")[0] not in stored}
    class_objects = {p: param_classes.pop(p).cls for p in list(param_classes) if isinstance(param_classes[p], ClassItself)}
    held_functions = {p: param_classes.pop(p) for p in list(param_classes) if not isinstance(param_classes[p], type)}
    if isinstance(node, gast.FunctionDef):
        param_classes.update(record_locals(nodes, locals_, source, given))
        set_anno(node, "object_classes", param_classes)  # a helper called with these objects is compiled for them
        set_anno(node, "held_functions", held_functions)  # and for the functions they hold
    conditional = None  # ids of the calls in branches, worked out if a name is missing
    held = None  # the classes of objects in lists (layer(h) in a loop over them), worked out if needed
    containers = container_locals(nodes)  # out = [h]: out.append(y) is the list's
    call_functions, property_calls = set(), {}  # self.W of a property: C.W.fget(self), in place when all are resolved
    for call, locals_, params, nested, functions_here in _calls_in_scopes(node, locals_, functions, source):
        if isinstance(call, gast.Attribute):  # (a call's own function is looked at first, as the call)
            parts = dotted(call)
            if id(call) not in call_functions and parts is not None and parts[0] not in nested:
                found = property_read(call, param_classes, owner, source)
                if found is not None:
                    property_calls[id(call)] = found
            continue
        call_functions.add(id(call.func))
        if anno(call, "callee") is not None:
            continue
        if frozen_method_call(call, locals_, source):  # stats.norm(mu, s).logpdf(x): stats.norm.logpdf(x, mu, s)
            continue
        if owner is not None and id(call) not in nested_calls and through_super(call, owner, source, param_classes.get(owner[0])):
            continue
        parts = dotted(call.func)
        if parts is None or root_is_local(parts, locals_, functions_here, params, param_classes):
            if held is None:
                held, objects = held_classes(given, nodes, locals_, source), object_items(nodes, locals_, source)
            if item_method_call(call, locals_ - containers, held, source, objects):  # a method of an object in a list
                continue
        if parts is None:
            if isinstance(call.func, gast.Attribute):
                set_anno(call, "callee", Callee("method", name=call.func.attr))
                continue
            made = _static_call(call.func, source, locals_)
            if made is not None:  # srcad.grad(h)(x): the function srcad.grad(h) makes
                set_anno(call, "callee", Callee("object", obj=readable(made), name=type(made).__name__))
                continue
            if _transform_of_a_local(call.func, source, locals_):
                raise source.syntax_error(
                    "srcad differentiates srcad.grad(h)(...) inside differentiated code only for a function h "
                    "defined at module level (srcad reads it when compiling); move h out of this function", call)
            raise source.syntax_error(
                "srcad cannot tell which function this call calls; " + _named_instead(call.func, source, locals_), call)
        root = parts[0]
        if root in functions_here and len(parts) == 1:
            set_anno(call, "callee", Callee("local", name=root))
        elif root not in nested and held_function_call(call, parts, held_functions, source):
            continue  # self.act(z) of an object holding np.tanh: that function, checked when it runs
        elif (root in param_classes and root not in nested
              and through_parameter(call, parts, param_classes, source)):
            continue
        elif root not in nested and through_class_itself(call, parts, class_objects, source):
            continue  # cls.huber(r) in a class method called as Loss.total(x): Loss.huber(r)
        elif (owner is not None and parts == [owner[0]] and root not in nested
              and through_self(call, [root, "__call__"], owner, source)):
            continue  # self(x) in a method: C.__call__(self, x)
        elif root in params and len(parts) == 1:
            set_anno(call, "callee", Callee("parameter", name=root))
        elif (owner is not None and root == owner[0] and len(parts) == 2 and root not in nested
              and through_self(call, parts, owner, source)):
            continue
        elif root in locals_:
            if len(parts) == 1 and root in functions:  # hidden here by a comprehension's or nested def's own
                raise source.syntax_error(
                    f"'{root}' here is a variable of the comprehension or function around this call, not the "
                    f"function {root} defined in this function; give one of them another name", call)
            if len(parts) == 1:
                shown = (anno(source.node, "renamed_from") or {}).get(root, root)  # layers_0: the loop's layer
                raise source.syntax_error(
                    f"'{shown}' is a local variable, so srcad cannot tell which function it holds; "
                    "call the function by its global name, or define it with def in this function; if it holds an "
                    "object of your class taken from a list (for layer in self.layers: h = layer(h)), srcad calls "
                    "its method through its class where it knows the classes the list holds when compiling: a list "
                    "an argument of the differentiated function holds (pass the model, made outside, as an "
                    "argument) or a module-level list or object, not one made in this function",
                    call,
                )
            set_anno(call, "callee", Callee("method", name=parts[-1]))
        else:
            if (bound_method_call(call, parts, source) or partial_call(call, parts, source)
                    or rule_partial_call(call, parts, source) or stored_method_call(call, parts, source)):
                continue
            called = called_object_call(call, parts, source)
            if called is not None:
                if isinstance(node, gast.FunctionDef):  # its __call__ is compiled for its class (self.forward)
                    param_classes[".".join(parts)] = type(called)
                continue
            try:
                obj = lookup_path(parts, source)
            except (KeyError, AttributeError):
                if _read_when_run(parts[:-1], source):  # M.V.copy() with V a property: a method of its value
                    set_anno(call, "callee", Callee("method", name=parts[-1]))
                    continue
                if conditional is None:
                    conditional = _conditional_calls(node)
                if id(call) not in conditional:
                    if root in _imported_names(node):
                        raise source.syntax_error(
                            f"'{root}' is imported inside the function, which srcad does not follow; import it at "
                            "the top of the module", call) from None
                    raise source.syntax_error(f"name '{'.'.join(parts)}' is not defined", call) from None
                # in a branch: raised where it runs, as Python does (a version test skips np.trapz on NumPy 2)
                call.args.insert(0, A.const(".".join(parts)))
                call.func = set_anno(A.load("missing_name"), BUILTIN, ("missing_name", missing_name))
                set_anno(call, "callee", Callee("object", obj=missing_name, name="missing_name"))
                continue
            if array_method(obj):  # c.dot(x) of a global array c: differentiated like np.dot(c, x)
                set_anno(call, "callee", Callee("method", name=parts[-1]))
                continue
            set_anno(call, "callee", Callee("object", obj=readable(obj), name=".".join(parts)))
    if property_calls:
        node = PropertyReads(property_calls).visit(node)
    if held:
        node = ItemMethodCalls(source, item_functions(given, held_functions)).visit(node)
    return _ItemCalls(source, locals_).visit(node)


def _named_instead(func, source, locals_):
    """What to call instead of ``func``: for ``FUNCS[1]``, an item (at a constant index) of a
    container of the module, the function it holds now, by the global name it has there (the
    container may hold another when the code runs, so srcad does not read it)."""
    advice = "call a named function"
    if not (isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name) and func.value.id not in locals_
            and isinstance(func.slice, gast.Constant)):
        return advice
    try:
        held = lookup_path([func.value.id], source)[func.slice.value]
    except (KeyError, AttributeError, IndexError, TypeError):
        return advice
    name = getattr(held, "__name__", None)
    text = A.to_source(func).strip()
    try:
        named = name is not None and lookup_path([name], source) is held
    except (KeyError, AttributeError):
        named = False
    if not named:
        return (f"'{text}' is an item of a list or dict of your module, which may hold another function when the "
                f"code runs; bind it to a name at module level ('F = {text}') and call F")
    return (f"'{text}' is an item of a list or dict of your module, which may hold another function when the "
            f"code runs; call the function it holds by its name, {name}(...)")


def root_is_local(parts, locals_, functions, params, classes):
    """Is the call of the dotted name ``parts`` one of a local value with no class srcad knows:
    ``layer(h)`` or ``layer.forward(h)``, ``layer`` no function, parameter called, or object of a
    known class?"""
    root = parts[0]
    if root not in locals_ or root in classes or len(parts) > 2 or len(parts) == 1 and (root in functions
                                                                                        or root in params):
        return False
    return True


def _read_when_run(path, source):
    """Does the dotted ``path`` (two names or more) end in a property of an object srcad can
    name (``M.V`` of a module-level object)? Its value is read when the code runs (a method
    called on it is that value's method), not when the code is made."""
    if len(path) < 2:
        return False
    try:
        owner = denoted(path[:-1], source)
    except (KeyError, AttributeError):
        return False
    return not isinstance(owner, type) and isinstance(inspect.getattr_static(owner, path[-1], None), property)


_NESTED_SCOPES = (gast.FunctionDef, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _conditional_calls(node):
    """The ids of the calls in ``node`` that run only on some paths: in a branch of an ``if``
    (statement or expression), the operands of ``and``/``or`` after the first, a ``try``'s
    handlers. (A loop's body runs as a rule: a name missing there is a typo, refused now.)"""
    parts = []
    for n in A.walk(node):
        if isinstance(n, gast.If):
            parts += n.body + n.orelse
        elif isinstance(n, gast.IfExp):
            parts += [n.body, n.orelse]
        elif isinstance(n, gast.BoolOp):
            parts += n.values[1:]
        elif isinstance(n, gast.Try):
            parts += n.handlers + n.orelse
    return {id(c) for part in parts for c in A.walk(part) if isinstance(c, gast.Call)}


#: values whose ``[...]`` is indexing proper (its derivative flows to the indexed value)
_INDEXABLE = (np.ndarray, np.generic, list, tuple, dict, str, bytes, int, float, complex, type)


class _ItemCalls(A.Transformer):
    """``obj[key]`` for a module-level object that is not an array or container (``np.r_``,
    ``np.c_``, ``np.mgrid``) is a call of ``obj.__getitem__``, which needs a derivative rule
    like any call: its key holds the data (``np.r_[x, 2 * x]``), so it must not read as
    indexing a constant, whose derivative would be silently zero."""

    def __init__(self, source, locals_):
        self.source, self.locals_ = source, locals_

    def visit_Subscript(self, node):
        self.generic_visit(node)
        parts = dotted(node.value)
        if not isinstance(node.ctx, gast.Load) or parts is None or parts[0] in self.locals_:
            return node
        try:
            obj = lookup_path(parts, self.source)
        except (KeyError, AttributeError):
            return node
        if isinstance(obj, _INDEXABLE) or not hasattr(type(obj), "__getitem__"):
            return node
        func = gast.Attribute(value=node.value, attr="__getitem__", ctx=gast.Load())
        call = gast.Call(func=func, args=[self.key(node.slice)], keywords=[])
        set_anno(call, "callee", Callee("object", obj=obj.__getitem__, name=".".join(parts) + ".__getitem__"))
        return gast.copy_location(call, node)

    def key(self, index):
        """An index expression as a value: ``a:b:c`` becomes ``slice(a, b, c)``."""
        if isinstance(index, gast.Slice):
            bounds = [gast.Constant(value=None, kind=None) if b is None else b
                      for b in (index.lower, index.upper, index.step)]
            call = gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None, type_comment=None),
                             args=bounds, keywords=[])
            set_anno(call, "callee", Callee("object", obj=slice, name="slice"))
            return call
        if isinstance(index, gast.Tuple):
            return gast.Tuple(elts=[self.key(e) for e in index.elts], ctx=gast.Load())
        return index


def array_method(obj):
    """Is ``obj`` a method of an array that srcad differentiates as a function of the array
    (``registry.METHODS``)?"""
    from .. import registry

    return isinstance(getattr(obj, "__self__", None), np.ndarray) and getattr(obj, "__name__", None) in registry.METHODS


def _transform_of_a_local(func, source, locals_):
    """Is ``func`` a call of a static transform (``srcad.grad``) on a local function?"""
    if not isinstance(func, gast.Call) or not func.args:
        return False
    parts = dotted(func.func)
    try:
        transform = lookup_path(parts, source) if parts is not None and parts[0] not in locals_ else None
    except (KeyError, AttributeError):
        return False
    arg = dotted(func.args[0])
    return getattr(transform, "__srcad_static__", False) and arg is not None and arg[0] in locals_


def _static_call(func, source, locals_):
    """``transform(h, ...)`` evaluated now, if ``transform`` is marked ``__srcad_static__`` (pure
    function transformations such as ``srcad.grad``) or is ``operator.itemgetter``/``attrgetter``
    (``itemgetter(1, 0)(p)``: ``passes.functional`` makes it the reads, its keys written as
    literals), and its arguments are globals or literals."""
    if not isinstance(func, gast.Call):
        return None
    parts = dotted(func.func)
    if parts is None or parts[0] in locals_:
        return None
    try:
        transform = lookup_path(parts, source)
    except (KeyError, AttributeError):
        return None
    if not (getattr(transform, "__srcad_static__", False) or transform in GETTERS):
        return None
    values = []
    for arg in list(func.args) + [k.value for k in func.keywords]:
        if isinstance(arg, gast.Constant) or (isinstance(arg, gast.Tuple) and all(
                isinstance(e, gast.Constant) for e in arg.elts)):
            values.append(gast.literal_eval(arg))
            continue
        arg_parts = dotted(arg)
        if arg_parts is None or arg_parts[0] in locals_:
            return None
        try:
            values.append(lookup_path(arg_parts, source))
        except (KeyError, AttributeError):
            return None
    positional = values[: len(func.args)]
    keywords = {k.arg: v for k, v in zip(func.keywords, values[len(func.args):])}
    return transform(*positional, **keywords)


def _imported_names(node):
    """Names an ``import`` statement inside the function binds."""
    found = set()
    for n in A.walk(node):
        if isinstance(n, (gast.Import, gast.ImportFrom)):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in n.names}
    return found
