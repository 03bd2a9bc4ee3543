"""Local objects of plain classes of yours, for ``resolve_calls``: ``acc = Accumulator()``, then
``acc.add(x * 2)`` and ``acc.total``; ``conv = Conv1D(w)``, then ``conv(x)``.

Guarantee: such an object becomes one local name per attribute its ``__init__`` sets
(``acc__total``) and each method it runs a function defined at the top of the function
(``_acc_add(total, v)``, ``self.total`` its parameter ``total``), which normalisation inlines;
a method that sets attributes returns their new values too, so ``acc.add(v)`` is
``_, acc__total = _acc_add(acc__total, v)``. A method calling another (``self.layer(x)``,
at any depth, in a loop) calls that method's function the same way, with its own attribute
names, and so sets what its callee sets. What runs is Python's own computation, with the
object's attributes in names. It is done only where that is provably the same: the name
is bound once, to the class called, and used only as ``o.attr`` or ``o.method(...)``/``o(...)``,
outside nested functions and comprehensions; the class is defined in the function's module
(its methods read the same globals), has no class attribute named like an instance
attribute (but a dataclass field's default), no ``__slots__``, ``__new__``, ``__getattr__``, ``__setattr__`` and the like, and its
``__init__`` and the methods called are plain functions whose ``self`` appears only as
``self.attr`` (the attributes ``__init__`` sets at its top level), ``self.method(...)`` (not in
``__init__``; no method reaching itself again; never ``__init__``) or ``return self`` (the call's
result then discarded), with literal defaults and plain parameters. A method is keyed by the
class whose own function it is, so ``super().method(...)`` (or ``super(C, self).method(...)``)
in a method of ``C`` is the call of the method Python's ``super`` finds: the first class after
``C`` in the object's method resolution order defining it (``local_classes.super_calls``; the
only closure a method may have is the ``__class__`` cell holding ``C``). ``super().__init__(...)``
is allowed as a statement of an ``__init__`` itself: the base's ``__init__`` runs there as a
function returning the attributes it sets at its top level (the only ones it may read or set),
which are the object's too; ``object``'s does nothing. A dataclass with a ``__post_init__``
runs its generated ``__init__`` as that function (``local_classes.dataclass_init``), and an
object made only to call a method (``Model(w).loss(x)``) is named first. A class without an
``__init__`` of its own (object's, given no arguments) makes an object holding no attribute;
``o.k`` or ``self.k`` of no attribute the object holds reads through its class
(``class_reads``): a class attribute or a static or class method is ``Spring.k``, a
``property`` its getter's call, as a method's without arguments. Any other local
object is left as it is: one carrying no derivative runs as written, as before; one that carries derivatives is
refused where its derivative is needed, at the user's line, saying which condition failed and
what to do (``unlowered_object``).
"""
import inspect
import types

import gast

from .. import astutil as A
from ..errors import SrcadError
from .callees import local_names
from .class_constructors import read_alternative_constructors
from .class_reads import class_read, read_through_class
from .local_classes import (Refused, attribute_store_advice, attributes_set, base_call, called_method, dataclass_init,
                            fresh_in, guard_method, init_fields, made_class, name_temporary_objects, super_calls)
from .local_functions import SCOPES
from .object_edits import Hoisted, Replace, Statement, first_in_statement


_UNLOWERED = "unlowered_object"  # annotation: why a local object was not lowered (``unlowered_object``)
_HOOKS = ("__new__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__", "__class_getitem__")


def lower_local_objects(node, source):
    """Lower each local object of a plain class of the module (module doc) in ``node``, the
    function ``source`` reads, where it may be."""
    read_alternative_constructors(node, source, local_names(node))  # m = Model.from_params(W): m = Model(...)
    for call in name_temporary_objects(node, source, local_names(node)):
        made = call.func.value if isinstance(call.func, gast.Attribute) else call.func
        shown = A.to_source(made.func).strip()
        why = (f"the object {shown}(...) is made inside an expression, and srcad keeps an object's attributes in "
               f"local names only for an object bound to a name: name it first (obj = {shown}(...)) and call the "
               "method on obj")
        A.set_anno(call, _UNLOWERED, why)
        A.set_anno(made, _UNLOWERED, why)
    locals_ = local_names(node)
    for assign in [s for s in A.walk(node) if isinstance(s, gast.Assign)]:
        made = made_class(assign, locals_, source)
        if made is None:
            continue
        cls, foreign = made
        name = assign.targets[0].id
        try:
            if foreign:
                raise Refused(foreign)
            _Lowering(node, source, assign, name, cls, locals_).run()
        except Refused as why:  # left as it was: a constant object runs as before, one carrying
            _mark_unlowered(node, assign, name, cls, str(why))  # derivatives is refused, saying why


def unlowered_object(node):
    """Why the local object a statement or call ``node`` makes, calls a method of or passes on
    was not lowered, and what to do, for the refusal of its derivative (None for any other)."""
    return A.anno(node, _UNLOWERED) or (A.anno(node.value, _UNLOWERED) if isinstance(
        getattr(node, "value", None), gast.Call) else None)


def mark_unlowered(node, why):
    """The refusal of ``node`` (a store or call srcad may not lower) says ``why``."""
    A.set_anno(node, _UNLOWERED, why)


def keep_unlowered(call, new):
    """``new``, the call that replaces ``call``, keeps the reason ``unlowered_object`` gives."""
    if A.anno(call, _UNLOWERED):
        A.set_anno(new, _UNLOWERED, A.anno(call, _UNLOWERED))


def _mark_unlowered(node, assign, name, cls, reason):
    """Annotate the calls making, calling or given the object ``name`` with ``reason``."""
    text = (f"'{name}' is an object of your class {cls.__qualname__} made in this function (line "
            f"{getattr(assign, 'lineno', '?')}), whose attributes srcad keeps in local names only where it may: "
            f"here {reason}")
    for n in A.walk(node):
        if (isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load) and isinstance(n.value, gast.Name)
                and n.value.id == name):  # (for the refusal of a set attribute: ``normalize``)
            A.set_anno(n, _UNLOWERED, text)
        if isinstance(n, gast.Call) and any(isinstance(o, gast.Name) and o.id == name for o in (
                n.func, getattr(n.func, "value", None), *n.args, *(k.value for k in n.keywords))):
            A.set_anno(n, _UNLOWERED, text)
    A.set_anno(assign.value, _UNLOWERED, text)


class _Lowering:
    def __init__(self, node, source, assign, name, cls, locals_):
        self.node, self.source, self.assign, self.name, self.cls = node, source, assign, name, cls
        self.taken = A.all_names(node)
        self.locals_ = locals_
        # a method is keyed (class, name): the class whose own function it is (super() reaches past it)
        self.defs, self.mutators = {}, {}  # method -> (def name, FunctionDef); method -> sets attributes
        self.functions = {}  # method -> (its FunctionDef as written, its class or None, has the __class__ cell)
        self.init_attrs = {}  # an __init__ -> the attributes it sets at its top level
        self.returns_self = set()  # methods with a `return self` (their result may only be discarded)
        self.method_names = set()  # every name the methods read use

    def fresh(self, base):
        name = base
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def run(self):
        for hook in _HOOKS:
            if inspect.getattr_static(self.cls, hook, None) is not inspect.getattr_static(object, hook, None):
                raise Refused(f"its class defines {hook}, which may change what an attribute is: remove it")
        self.init_key = self.key("__init__")
        posted = dataclass_init(self.cls, self.method)
        if posted is not None:  # (no class body defines it: super() in it is refused)
            self.functions[self.init_key] = (posted, None, False)
        self.attrs = self.attributes(self.init_key)
        fields = init_fields(self.cls) or ()
        for attr in self.attrs:  # (a dataclass field's default is a class attribute its __init__ always hides)
            if attr not in fields and inspect.getattr_static(self.cls, attr, None) is not None:
                raise Refused(f"its class has an attribute '{attr}' too (a property or a default), which an instance's "
                               "may hide: rename one of them")
        self.attribute_names = {a: self.fresh(f"{self.name}__{a}") for a in self.attrs}
        self.displayed = (A.anno(self.source.node, "renamed_from") or {}).get(self.name, self.name)
        self.renamed({new: f"{self.displayed}.{a}" for a, new in self.attribute_names.items()})
        uses = self.uses()
        if self.init_key[0] is object:  # no __init__ of its own: object's, which takes no arguments
            if self.assign.value.args or self.assign.value.keywords:
                raise Refused(f"its class has no __init__, so {self.cls.__qualname__}(...) takes no arguments "
                               "(Python raises TypeError): define __init__ or pass none")
        else:
            self.defs[self.init_key] = self.lowered(self.init_key, initial=True)
        for method in dict.fromkeys(m for kind, m, _ in uses if kind in ("call", "property")):
            self.lower(self.key(method), ())
        clash = sorted({name for name, _ in self.defs.values()} & self.method_names)
        if clash:
            raise Refused(f"a method of its class uses the name '{clash[0]}', which srcad gives a method's function: "
                           "rename it")
        replaced = {}
        for kind, detail, (n, parent) in uses:
            replaced[id(n)] = self.replacement(kind, detail, n, parent)
        self.node.body[:0] = [fdef for _, fdef in self.defs.values()]
        Replace(replaced).visit(self.node)

    def renamed(self, names):
        """Messages speak of ``acc.total`` where srcad's code has ``acc__total`` (``user_text``)."""
        known = A.anno(self.source.node, "renamed_from") or {}
        A.set_anno(self.source.node, "renamed_from", {**known, **names})

    def key(self, name, after=None):
        """``(class, name)``: the class whose own attribute ``name`` Python finds on the object
        (``o.name``, ``self.name``), or on ``super(after, o)``: the first such class after
        ``after`` in the object's method resolution order (class None: none has it)."""
        order = self.cls.__mro__
        order = order[order.index(after) + 1:] if after is not None else order
        return next(((c, name) for c in order if name in vars(c)), (None, name))

    def method(self, name):
        """The ``FunctionDef`` of the method ``name`` Python finds on the object."""
        return self.function(self.key(name))[0]

    def function(self, key):
        """``(FunctionDef, class, has the __class__ cell)`` of the method ``key``, refused where
        it is no plain function of the module. The only closure allowed is the ``__class__``
        cell Python makes for ``super()``, holding the class whose body defines the function."""
        if key in self.functions:
            return self.functions[key]
        owner, name = key
        guard_method(self.assign.value, key, self.source)
        fn = vars(owner)[name] if owner is not None else None
        fn = fn.fget if isinstance(fn, property) else fn  # (read, not called: ``read_through_class``)
        if not isinstance(fn, types.FunctionType):
            raise Refused(f"its {name} is no plain function (a property without a getter, or none): make it a "
                           f"method, def {name}(self, ...)")
        code = fn.__code__
        has_cell = code.co_freevars == ("__class__",) and fn.__closure__[0].cell_contents is owner
        if (fn.__globals__ is not self.source.globals or (fn.__closure__ and not has_cell)
                or code.co_filename != self.source.filename
                or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR)
                or code.co_kwonlyargcount or code.co_posonlyargcount or code.co_argcount < 1):
            raise Refused(f"{fn.__qualname__} is not a plain function of this module: give it positional "
                           "parameters only (no *args, **kwargs or keyword-only ones), no decorator or closure")
        from ..source import capture

        try:
            self.functions[key] = (capture(fn).node, owner, has_cell)
        except SrcadError as exc:
            raise Refused(f"srcad cannot read {fn.__qualname__}: {exc}") from None
        return self.functions[key]

    def attributes(self, key):
        """The attributes the ``__init__`` ``key`` sets by statements of its body itself, in
        order, those set by a base's ``__init__`` that a ``super().__init__(...)`` statement
        there runs among them (none for ``object``'s)."""
        if key[0] is object:
            return []
        if key not in self.init_attrs:
            fdef, owner, has_cell = self.function(key)
            supers = {id(call): method for call, method in super_calls(fdef, owner, has_cell, self.source)[0]}
            found = []
            for s in fdef.body:
                if isinstance(s, gast.Expr) and supers.get(id(s.value)) == "__init__":
                    names = self.attributes(self.key("__init__", after=owner))
                else:
                    names = attributes_set(s, self.self_name(fdef))
                found += [a for a in names if a not in found]
            self.init_attrs[key] = found
        return self.init_attrs[key]

    def shown(self, key):
        """How messages name the method ``key``: ``energy``, or ``Base.energy`` where the
        object's own lookup finds another class's (``super()`` reaches it)."""
        return key[1] if self.key(key[1]) == key else f"{key[0].__qualname__}.{key[1]}"

    @staticmethod
    def self_name(fdef):
        return fdef.args.args[0].id

    def uses(self):
        """``(kind, detail, (node, parent))`` for each use of the object's name: "attribute"
        (``o.attr``, read or set), "call" (``o.method(...)``), "made" (its construction)."""
        parents = self.parents = {id(c): p for p in A.walk(self.node) for c in gast.iter_child_nodes(p)}
        nested = {id(n) for s in A.walk(self.node) if isinstance(s, SCOPES) and s is not self.node for n in A.walk(s)}
        found = []
        for n in A.walk(self.node):
            if not (isinstance(n, gast.Name) and n.id == self.name):
                continue
            parent = parents.get(id(n))
            if n is self.assign.targets[0]:
                found.append(("made", None, (self.assign, None)))
                continue
            if id(n) in nested:
                raise Refused(f"'{self.name}' is used in a nested function or comprehension: use it in a loop of "
                               "the function instead")
            if isinstance(parent, gast.Call) and parent.func is n:
                found.append(("call", "__call__", (parent, parents.get(id(parent)))))
            elif isinstance(parent, gast.Attribute) and parent.value is n:
                grand = parents.get(id(parent))
                through_class = parent.attr not in self.attrs and read_through_class(self.cls, parent, grand, self.name)
                if through_class:  # o.k of a class attribute, o.area of a property
                    found.append((through_class, parent.attr, (parent, grand)))
                elif isinstance(grand, gast.Call) and grand.func is parent:
                    found.append(("call", parent.attr, (grand, parents.get(id(grand)))))
                elif parent.attr in self.attrs:
                    found.append(("attribute", parent.attr, (parent, grand)))
                else:
                    raise Refused(f"'{self.name}.{parent.attr}' is no attribute its __init__ sets at its top level: "
                                   f"set it there (self.{parent.attr} = ...), outside any branch or loop")
            else:
                raise Refused(f"'{self.name}' is used otherwise than by its attributes and methods (line "
                               f"{getattr(n, 'lineno', '?')}: bound again, passed on, stored or returned): pass on "
                               f"or return its attributes ({self.name}.{(self.attrs or ['attr'])[0]}) instead; or, where "
                               f"its methods set no attribute, make {self.cls.__qualname__} a dataclass (srcad "
                               "differentiates its fields wherever they go)")
        return found

    def getter_call(self, node, parents, params, fresh, shown, callers, local=()):
        """What replaces ``shown.area`` (``node``) of a property: its getter's call, as a method's."""
        call = gast.copy_location(gast.Call(func=node, args=[], keywords=[]), node)
        return self.called(self.key(node.attr), call, {**parents, id(call): parents.get(id(node))}, params, fresh,
                           shown, callers, origin=node, local=local)

    def lower(self, key, callers):
        """Lower the method ``key`` once, the methods it calls first; ``callers``: the methods
        whose lowering called for it (a method among them is a recursion, refused). An
        ``__init__`` is lowered as one (``lowered``): reached from a base's ``super().__init__``."""
        if key in callers:
            chain = " -> ".join(self.shown(k) for k in (*callers[callers.index(key):], key))
            raise Refused(f"its methods call each other without end ({chain}); srcad lowers a method only "
                           "where the calls it makes end: write the recursion as a loop")
        if key not in self.defs:
            self.defs[key] = self.lowered(key, initial=key[1] == "__init__", callers=(*callers, key))

    def lowered(self, key, initial=False, callers=()):
        """``(name, FunctionDef)``: the method ``key`` as a function of the attributes (module
        doc); a ``self.other(...)`` or ``super().other(...)`` in it the call of ``other``'s
        function, lowered first. An ``__init__`` (``initial``) takes no attributes and returns
        those it sets (``attributes``); it reads and sets no others."""
        fdef, owner, has_cell = self.function(key)
        fdef = A.deepcopy(fdef)
        method = self.shown(key)
        attrs = self.attributes(key) if initial else self.attrs
        supers, super_selves = super_calls(fdef, owner, has_cell, self.source)
        me = self.self_name(fdef)
        own = local_names(fdef) | A.names_read(fdef)
        self.method_names |= A.all_names(fdef)
        params = {a: fresh_in(f"self_{a}", own) for a in attrs}
        own |= set(params.values())
        self.renamed({new: f"{me}.{a}" for a, new in params.items()})
        for n in A.walk(fdef):
            if isinstance(n, SCOPES) and n is not fdef and me in A.names_read(n) | A.all_names(n):
                raise Refused(f"{method} uses '{me}' in a nested function or comprehension: read the attributes "
                               "into local names before it")
            if isinstance(n, (gast.Global, gast.Nonlocal, gast.Yield, gast.YieldFrom)):
                raise Refused(f"{method} has a {type(n).__name__.lower()} statement: remove it")
        shadowed = sorted((A.names_read(fdef) - local_names(fdef)) & self.locals_)
        if shadowed:
            raise Refused(f"{method} reads the global '{shadowed[0]}', which this function binds as a local name: "
                           "rename the local name")
        if any(not isinstance(d, gast.Constant) for d in fdef.args.defaults):
            raise Refused(f"a default of {method} is not a literal: make it one (a number, None) or pass the value")

        def fresh(base):
            name = fresh_in(base, own)
            own.add(name)
            return name

        replaced, sets = {}, False
        parents = {id(c): p for p in A.walk(fdef) for c in gast.iter_child_nodes(p)}
        for n in A.walk(fdef):
            if not (isinstance(n, gast.Name) and n.id == me and n is not fdef.args.args[0]) or id(n) in super_selves:
                continue
            parent = parents.get(id(n))
            line = getattr(n, "lineno", "?")
            if isinstance(parent, gast.Attribute) and parent.value is n and parent.attr in attrs:
                sets = sets or not isinstance(parent.ctx, gast.Load)
                replaced[id(parent)] = gast.Name(id=params[parent.attr], ctx=parent.ctx, annotation=None,
                                                 type_comment=None)
                continue
            if isinstance(parent, gast.Return) and not initial:
                self.returns_self.add(key)  # allowed where the call's result is discarded (method_call)
                replaced[id(n)] = A.const(None)
                continue
            through_class = (isinstance(parent, gast.Attribute) and parent.value is n
                             and read_through_class(self.cls, parent, parents.get(id(parent)), me))
            if through_class == "class":  # self.k of a class attribute: Spring.k
                replaced[id(parent)] = class_read(self.assign, parent, local_names(fdef))
                continue
            if through_class == "property" and not initial:  # self.area: the getter's call
                replaced[id(parent)] = self.getter_call(parent, parents, params, fresh, me, callers, local=own)
                sets = sets or self.mutators[self.key(parent.attr)]
                continue
            based = None if initial else base_call(n, parent, local_names(fdef), self.cls, self.source)
            if based is not None:  # Base.method(self, ...): the method's function, given the rest
                key_called, call = based
                replaced[id(parent)] = self.called(key_called, call, {**parents, id(call): parents.get(id(parent))},
                                                   params, fresh, me, callers, origin=parent, local=own)
                sets = sets or self.mutators[key_called]
                continue
            called = called_method(n, parent, parents)
            if not initial and isinstance(parent, gast.Attribute) and not isinstance(parent.ctx, gast.Load):
                raise Refused(f"{method} sets {me}.{parent.attr}, which its __init__ does not set (line {line}): "
                              f"set each attribute in __init__, or {attribute_store_advice()}")
            if called is None or initial:
                raise Refused(f"{method} uses '{me}' otherwise than to read or set an attribute "
                               f"{'it sets (at its top level)' if initial else 'its __init__ sets, call a method or return it'}"
                               f" (line {line}): set each attribute in __init__, use the attributes (not the object) "
                               f"elsewhere{', and set the attributes in __init__ itself' if initial else ''}")
            callee, call = called
            replaced[id(call)] = self.called(self.key(callee), call, parents, params, fresh, me, callers, local=own)
            sets = sets or self.mutators[self.key(callee)]
        for call, callee in supers:
            key_called = self.key(callee, after=owner)
            if callee == "__init__":
                replaced[id(call)] = self.base_init(key_called, call, parents.get(id(call)), fdef, params, callers)
                continue
            if initial:
                raise Refused(f"{method} calls super().{callee}(...) (line {getattr(call, 'lineno', '?')}): call the "
                               "methods after the object is made, not in __init__")
            replaced[id(call)] = self.called(key_called, call, parents, params, fresh, "super()", callers, me=me,
                                             local=own)
            sets = sets or self.mutators[key_called]
        nested = {id(n) for s in A.walk(fdef) if isinstance(s, SCOPES) and s is not fdef for n in A.walk(s)}
        fdef = Replace(replaced).visit(fdef)
        fdef.args.args = fdef.args.args[1:]
        if not initial:  # (__init__'s attributes are made by it: they are its results only)
            fdef.args.args = [gast.Name(id=params[a], ctx=gast.Param(), annotation=None, type_comment=None)
                              for a in self.attrs] + fdef.args.args
        self.mutators[key] = sets and not initial
        if initial or sets:
            returns = [n for n in A.walk(fdef) if isinstance(n, gast.Return) and id(n) not in nested]
            if initial and returns:
                raise Refused("its __init__ has a return statement: remove it")
            state = [A.load(params[a]) for a in attrs]
            for n in returns:
                n.value = gast.Tuple(elts=[n.value or A.const(None)] + A.deepcopy(state), ctx=gast.Load())
            if not fdef.body or not isinstance(fdef.body[-1], gast.Return):
                results = state if initial else [A.const(None)] + A.deepcopy(state)
                fdef.body.append(gast.copy_location(
                    gast.Return(value=gast.Tuple(elts=results, ctx=gast.Load())), fdef.body[-1] if fdef.body else fdef))
        name = self.fresh(f"_{self.name}_{'_'.join(p.strip('_') or 'call' for p in method.split('.'))}")
        fdef.name = name
        fdef.decorator_list = []
        return name, fdef

    def called(self, key, call, parents, params, fresh, shown, callers, origin=None, me=None, local=()):
        """What replaces ``call`` (``origin``, where it stands for that node of the tree), of the
        method ``key`` in a method whose attributes are in the names ``params``, of the object
        named ``shown`` (or ``me``) there, whose local names are ``local``: the call of its function,
        lowered first (``method_call``)."""
        self.lower(key, callers)
        return self.method_call(key, call, parents.get(id(call)), list(params.values()), fresh, shown,
                                hoisting=(parents, origin or call, {me or shown, *local}))

    def base_init(self, key, call, statement, fdef, params, callers):
        """What replaces ``super().__init__(...)`` in the ``__init__`` ``fdef`` whose attributes
        are in the names ``params``: the statement running the base's ``__init__`` ``key``
        there, binding the attributes it sets (``object``'s, given no arguments, does nothing)."""
        line = getattr(call, "lineno", "?")
        if not any(s is statement for s in fdef.body):
            raise Refused(f"super().__init__(...) is called other than as a statement of __init__ itself (line {line}): "
                           "call it there, outside any branch or loop")
        if key[0] is object:
            if call.args or call.keywords:
                raise Refused(f"super().__init__(...) reaches object.__init__ with arguments (line {line}): remove them")
            return Statement(statement, gast.copy_location(gast.Pass(), statement))
        self.lower(key, callers)
        made = gast.Call(func=A.load(self.defs[key][0]), args=call.args, keywords=call.keywords)
        targets = [A.store(params[a]) for a in self.attributes(key)]
        new = (gast.Assign(targets=[gast.Tuple(elts=targets, ctx=gast.Store())], value=made, type_comment=None)
               if targets else gast.Expr(value=made))
        return Statement(statement, gast.copy_location(new, statement))

    def method_call(self, method, n, parent, state, fresh, shown, hoisting=None):
        """What replaces ``n``, a call of the method ``method`` (in ``parent``) on the object whose
        attributes are in the names ``state`` (``shown``: the object's name in the code): the call
        of the method's function, or a ``Statement`` binding the attributes it sets too, or, for
        a call inside an expression Python evaluates first (``hoisting``: ``(parents, the node
        of the tree, the local names there, the object's among them)``;
        ``object_edits.first_in_statement``), a ``Hoisted`` one before its statement."""
        line = getattr(n, "lineno", "?")
        if method[1] == "__init__":
            raise Refused(f"{shown}.__init__(...) is called again (line {line}): make a new object instead")
        call = gast.copy_location(gast.Call(func=A.load(self.defs[method][0]),
                                            args=[A.load(s) for s in state] + n.args, keywords=n.keywords), n)
        # what the user called, for advice (``memory_refusals.copy_hint``)
        A.set_anno(call, "lowered_method", f"{self.displayed if shown == self.name else shown}.{method[1]}")
        discarded = isinstance(parent, gast.Expr)
        if method in self.returns_self and not discarded:
            raise Refused(f"its {method[1]} returns the object itself, and line {line} uses what "
                           f"{shown}.{method[1]}(...) returns; call it as a statement of its own and use the object "
                           "after it")
        if not self.mutators[method]:
            return call
        if discarded:
            target = A.store(fresh("_unused"))
        elif isinstance(parent, gast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], gast.Name):
            target = parent.targets[0]
        else:
            statement = hoisting and first_in_statement(hoisting[1], hoisting[0], set(state), hoisting[2])
            if not statement:
                raise Refused(f"its {method[1]} sets attributes, and is called inside an expression after something "
                               f"else it may change or that may not run it (line {line}); call it as a statement of "
                               f"its own, or as 'r = {shown}.{method[1]}(...)'")
            result = fresh("_result")  # Python runs nothing before it there: the call first, into a name
            return Hoisted(statement, gast.copy_location(gast.Assign(
                targets=[gast.Tuple(elts=[A.store(result)] + [A.store(s) for s in state], ctx=gast.Store())],
                value=call, type_comment=None), statement), gast.copy_location(A.load(result), n))
        return Statement(parent, gast.copy_location(gast.Assign(
            targets=[gast.Tuple(elts=[target] + [A.store(s) for s in state], ctx=gast.Store())], value=call,
            type_comment=None), parent))

    def replacement(self, kind, detail, n, parent):
        """What replaces the use ``n`` (in ``parent``)."""
        state = [self.attribute_names[a] for a in self.attrs]
        if kind == "class":
            return class_read(self.assign, n, ())
        if kind == "property":
            call = gast.copy_location(gast.Call(func=n, args=[], keywords=[]), n)
            return self.method_call(self.key(detail), call, parent, state, self.fresh, self.name,
                                    hoisting=(self.parents, n, {self.name, *self.locals_}))
        if kind == "attribute":
            return gast.copy_location(gast.Name(id=self.attribute_names[detail], ctx=n.ctx, annotation=None,
                                                type_comment=None), n)
        if kind == "made" and self.init_key[0] is object:
            return gast.copy_location(gast.Pass(), n)
        if kind == "made":
            made = self.assign.value
            call = gast.copy_location(gast.Call(func=A.load(self.defs[self.init_key][0]), args=made.args,
                                                keywords=made.keywords), made)
            attributes = [A.store(self.attribute_names[a]) for a in self.attrs]
            return gast.copy_location(gast.Assign(targets=[gast.Tuple(elts=attributes, ctx=gast.Store())],
                                                  value=call, type_comment=None), n)
        return self.method_call(self.key(detail), n, parent, state, self.fresh, self.name,
                                hoisting=(self.parents, n, {self.name, *self.locals_}))
