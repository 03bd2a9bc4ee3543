"""``try`` statements in compiled code: the body alone, the handlers left to the NumPy code.

numba catches only ``except Exception`` (it cannot tell one exception class from another, nor
hold the exception or re-raise it), and an exception numba raises where NumPy does not (its
``NotImplementedError`` for a reshape it cannot do, srcad's ``IntegerOverflowError``) would be
caught by a handler the user wrote for something else. So the compiled code runs a generated
``try`` (an ``except`` region, whose handlers set ``_tryN = False``, or a ``finally`` region,
whose handler cleans up and re-raises) as its body alone, and the backend runs the NumPy code
in its place wherever the compiled code raises (``backends.numba_try``): the compiled result is
used only where the body finished, where Python's handlers do not run either. Guarantee:
afterwards ``fn`` holds no ``try``, and ``holds_try`` tells the backend which code had one.
A ``with`` region (its handler calls the manager's ``__exit__``) is left as it is: numba
compiles no context manager, and refuses it.
"""
import ast

import gast

from .. import astutil as A


def drop_handlers(fn):
    """Each ``try`` of the generated function ``fn`` (not a ``with`` region's) as its body, at any depth."""
    for block in A.blocks(fn.body):
        block[:] = [new for s in block for new in (_body_alone(s) or [s])]
    return fn


def _body_alone(s):
    if not isinstance(s, gast.Try) or _exits_manager(s):
        return None
    return [new for part in (s.body, s.orelse, s.finalbody) for stmt in part for new in (_body_alone(stmt) or [stmt])]


def _exits_manager(s):
    """Is ``s`` a ``with`` region's ``try`` (its handler calls ``__exit__``)?"""
    return any(isinstance(n, gast.Attribute) and n.attr == "__exit__" for h in s.handlers for n in A.walk(h))


def holds_try(source):
    """Does the generated module text ``source`` hold a ``try`` that ``drop_handlers`` drops?"""
    return any(isinstance(n, ast.Try) and not any(isinstance(m, ast.Attribute) and m.attr == "__exit__"
                                                  for h in n.handlers for m in ast.walk(h))
               for n in ast.walk(ast.parse(source)))
