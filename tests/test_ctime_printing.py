"""The fast gast -> ast conversion behind printing and rule tests makes exactly gast's tree.

(No timings here: benchmarks/compile_time.py measures them.)
"""
import ast
import inspect

import gast

import corpus
from srcad import astutil as A
from srcad import pipeline, template
from srcad.passes import memory

SHAPES = '''
async def coroutine(a: int, /, b, *rest: float, key=1, **options) -> None:
    async with lock as held:
        async for item in stream:
            await item
    try:
        value = f"{a!r:>{b}} {{}}"
    except (KeyError, ValueError) as error:
        raise RuntimeError() from error
    except Exception:
        pass
    else:
        del value
    finally:
        return lambda x, *y, z=2, **w: x


class Thing(Base, metaclass=Meta):
    field: int = 3

    @decorator
    def method(self, *, only):
        global total
        nonlocal_ = [i for i in range(3) if i] + [*{1, 2}] + list({k: v for k, v in {}.items()})
        total += (yield from other) if only else (x := 1)
        return self[1:2, ::3, ...], not only, -only, only @ only ** 2
'''


def _same(tree):
    assert ast.dump(A.to_ast(tree), include_attributes=True) == \
        ast.dump(gast.gast_to_ast(tree), include_attributes=True)


def test_every_node_kind_converts_as_gast_converts_it():
    _same(gast.parse(SHAPES))


def test_whole_modules_convert_as_gast_converts_them():
    for module in (corpus, memory, template, pipeline, inspect):
        _same(gast.parse(inspect.getsource(module)))


def test_trees_made_by_hand_without_positions():
    fn = gast.FunctionDef(
        name="f", args=gast.arguments(args=[gast.Name(id="x", ctx=gast.Param(), annotation=None, type_comment=None)],
                                      posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                      defaults=[]),
        body=[A.assign("y", A.load("x")), A.comment("a comment"), gast.Return(value=A.load("y"))],
        decorator_list=[], returns=None, type_comment=None, type_params=[])
    _same(fn)
    assert A.to_source(fn) == "def f(x):\n    y = x\n    # a comment\n    return y\n"
    compiled = compile(ast.fix_missing_locations(A.to_ast(gast.Module(body=[fn], type_ignores=[]))), "<t>", "exec")
    scope = {}
    exec(compiled, scope)
    assert scope["f"](3) == 3


def test_the_conversion_leaves_the_gast_tree_as_it_was():
    tree = gast.parse(SHAPES)
    before = gast.dump(tree)
    A.to_ast(tree)
    assert gast.dump(tree) == before
    assert all(isinstance(n, gast.AST) for n in A.walk(tree))


def _transformed(base):
    class Edits(base):
        def visit_Name(self, node):  # rename
            node.id = node.id.upper()
            return node

        def visit_Pass(self, node):  # delete
            return None

        def visit_Expr(self, node):  # one statement into two
            return [node, gast.Pass()] if isinstance(node.value, gast.Call) else self.generic_visit(node)

        def visit_Return(self, node):  # a field emptied
            return gast.Return(value=None) if isinstance(node.value, gast.Constant) else self.generic_visit(node)

    tree = gast.parse(SHAPES + "\ndef g(a):\n    pass\n    print(a)\n    a\n    return 1\n")
    return gast.dump(Edits().visit(tree))


def test_the_fast_transformer_transforms_as_gasts_does():
    assert _transformed(A.Transformer) == _transformed(gast.NodeTransformer)
