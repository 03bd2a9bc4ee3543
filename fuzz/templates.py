"""The expression templates the generator draws from, by shape. ``NP.`` and ``MATH.`` stand for
the program's numpy and math aliases; ``{0}``, ``{1}`` for operands; ``{i3}``/``{i4}`` for indices."""

SHAPES = ((), (3,), (4,), (3, 4), (4, 3), (12,))
OPERAND_SHAPES = {(): [()], (3,): [(), (3,)], (4,): [(), (4,)], (12,): [(), (12,)],
                  (3, 4): [(), (4,), (3, 4), (3, 1), (1, 4)], (4, 3): [(), (3,), (4, 3), (4, 1), (1, 3)],
                  (3, 1): [(), (3, 1)], (1, 4): [(), (4,), (1, 4)], (4, 1): [(), (4, 1)], (1, 3): [(), (3,), (1, 3)]}

# shape conversions: (from, to) -> [(template, feature, is_view)]; {0} is the operand
CONVERT = {
    ((), (3,)): [("{0} * NP.ones(3)", None, False), ("NP.full(3, {0})", "shapes", False)],
    ((), (4,)): [("{0} * NP.ones(4)", None, False), ("NP.linspace(0.5, 1.0, 4) * {0}", None, False)],
    ((), (12,)): [("{0} * NP.ones(12)", None, False)],
    ((), (3, 4)): [("{0} * NP.ones((3, 4))", None, False)],
    ((), (4, 3)): [("{0} * NP.ones((4, 3))", None, False)],
    ((4,), ()): [("{0}.sum()", "reductions", False), ("NP.mean({0})", "reductions", False),
                 ("NP.sum({0} ** 2)", "reductions", False), ("{0}[{i4}]", "slices", False),
                 ("NP.prod(0.5 + 0.2 * {0})", "reductions", False), ("{0}.max()", "kinks", False),
                 ("{0}[1:3].sum()", "slices", False), ("{0}[[0, 2, 2]].sum()", "fancy", False),
                 ("NP.linalg.norm({0})", "reductions", False), ("sum({0})", "builtin:sum", False)],
    ((3,), ()): [("{0}.sum()", "reductions", False), ("NP.mean({0}, axis=0)", "reductions", False),
                 ("{0}[{i3}]", "slices", False), ("{0}[-1]", "slices", False),
                 ("NP.min({0})", "kinks", False), ("{0}[::2].sum()", "slices", False)],
    ((12,), ()): [("{0}.sum()", "reductions", False), ("{0}[{i4} * 3]", "slices", False)],
    ((3, 4), ()): [("{0}.sum()", "reductions", False), ("{0}[{i3}, {i4}]", "slices", False),
                   ("NP.sum({0}, axis=(0, 1))", "reductions", False), ("{0}.mean()", "reductions", False),
                   ("NP.trace({0})", "reductions", False), ("{0}[1:, ::2].sum()", "slices", False)],
    ((4, 3), ()): [("{0}.sum()", "reductions", False), ("{0}[{i4}, {i3}]", "slices", False)],
    ((4,), (3,)): [("{0}[:3]", "slices", True), ("{0}[1:]", "slices", True), ("{0}[[3, 1, 1]]", "fancy", False)],
    ((3,), (4,)): [("NP.concatenate([{0}, {0}[:1]])", "shapes", False), ("{0}[[0, 1, 2, 0]]", "fancy", False)],
    ((4,), (12,)): [("NP.tile({0}, 3)", "shapes", False), ("NP.repeat({0}, 3)", "shapes", False),
                    ("NP.concatenate([{0}, -{0}, {0} * 2.0])", "shapes", False)],
    ((12,), (4,)): [("{0}[:4]", "slices", True), ("{0}[::3]", "slices", True), ("{0}[8:]", "slices", True)],
    ((3, 4), (4,)): [("{0}[{i3}]", "slices", True), ("{0}.sum(axis=0)", "reductions", False),
                     ("NP.mean({0}, axis=0)", "reductions", False), ("{0}.max(axis=0)", "kinks", False),
                     ("{0}[-1, :]", "slices", True), ("{0}[[0, 2, 0]].sum(axis=0)", "fancy", False)],
    ((3, 4), (3,)): [("{0}[:, {i4}]", "slices", True), ("{0}.sum(axis=1)", "reductions", False),
                     ("NP.prod(0.9 + 0.1 * {0}, axis=1)", "reductions", False), ("{0}[..., {i4}]", "slices", True),
                     ("{0}.min(axis=-1)", "kinks", False)],
    ((3, 4), (4, 3)): [("{0}.T", "shapes", True), ("NP.transpose({0})", "shapes", True),
                       ("{0}.reshape(4, 3)", "shapes", True), ("NP.swapaxes({0}, 0, 1)", "shapes", True)],
    ((4, 3), (3, 4)): [("{0}.T", "shapes", True), ("NP.reshape({0}, (3, 4))", "shapes", True)],
    ((3, 4), (12,)): [("{0}.reshape(-1)", "shapes", True), ("{0}.ravel()", "shapes", True),
                      ("NP.ravel({0})", "shapes", True), ("{0}.flatten()", "shapes", False)],
    ((12,), (3, 4)): [("{0}.reshape(3, 4)", "shapes", True), ("NP.reshape({0}, (3, 4))", "shapes", True)],
    ((12,), (4, 3)): [("{0}.reshape((4, 3))", "shapes", True)],
    ((4, 3), (12,)): [("{0}.reshape(12)", "shapes", True)],
    ((4,), (3, 4)): [("{0} * NP.ones((3, 1))", "broadcast", False), ("NP.tile({0}, (3, 1))", "shapes", False),
                     ("NP.stack([{0}, {0} * 0.5, -{0}])", "shapes", False), ("NP.broadcast_to({0}, (3, 4))", "shapes", "read-only")],
    ((3,), (3, 4)): [("{0}[:, None] * NP.ones(4)", "broadcast", False),
                     ("NP.stack([{0}, {0}, {0}, {0}], axis=1)", "shapes", False)],
    ((3, 4), (3, 1)): [("{0}.sum(axis=1, keepdims=True)", "reductions", False),
                       ("NP.max({0}, axis=1, keepdims=True)", "kinks", False), ("{0}[:, 1:2]", "slices", True)],
    ((3, 4), (1, 4)): [("NP.mean({0}, axis=0, keepdims=True)", "reductions", False), ("{0}[:1]", "slices", True)],
    ((3,), (3, 1)): [("{0}[:, None]", "broadcast", True), ("NP.expand_dims({0}, 1)", "shapes", True),
                     ("{0}.reshape(3, 1)", "shapes", True)],
    ((4,), (1, 4)): [("{0}[None]", "broadcast", True), ("{0}[None, :]", "broadcast", True)],
    ((4, 3), (4, 1)): [("{0}.sum(axis=1, keepdims=True)", "reductions", False)],
    ((4, 3), (1, 3)): [("{0}.sum(axis=0, keepdims=True)", "reductions", False)],
    ((4,), (4,)): [("{0}[::-1]", "views", True), ("NP.flip({0})", "views", True), ("NP.roll({0}, 1)", "shapes", False),
                   ("NP.cumsum({0})", "reductions", False), ("{0}[[1, 0, 3, 3]]", "fancy", False),
                   ("NP.sort({0})", "kinks", False)],
    ((3, 4), (3, 4)): [("NP.flip({0}, axis=0)", "views", True), ("{0}[:, ::-1]", "views", True),
                       ("{0} - {0}.mean(axis=1, keepdims=True)", "reductions", False)],
}

UNARY = [  # (template, feature, shapes it applies to: None = all)
    ("NP.sin({0})", "elementwise"), ("NP.cos({0})", "elementwise"), ("NP.tanh({0})", "elementwise"),
    ("NP.exp(-({0}) ** 2)", "elementwise"), ("NP.sqrt(({0}) ** 2 + 1.0)", "elementwise"),
    ("NP.log1p(({0}) ** 2)", "elementwise"), ("({0}) ** 2", None), ("-({0})", None), ("NP.arctan({0})", "elementwise"),
    ("1.0 / (1.0 + ({0}) ** 2)", None), ("NP.square({0})", "elementwise"), ("0.5 * {0}", None),
    ("NP.abs({0})", "kinks"), ("NP.clip({0}, -0.5, 0.5)", "kinks"), ("NP.log(NP.cosh({0}))", "elementwise"),
    ("2.5 / (1.0 + NP.exp(-({0})))", "elementwise"),  # a number over an array, and minus signs that cancel
]
SCALAR_UNARY = [("MATH.sin({0})", "elementwise"), ("MATH.exp(-({0}) ** 2)", "elementwise"),
                ("MATH.tanh({0})", "elementwise"), ("abs({0})", "kinks"), ("float({0})", None),
                ("MATH.sqrt(({0}) ** 2 + 0.5)", "elementwise")]
BINARY = [("({0} + {1})", None), ("({0} - {1})", None), ("({0} * {1})", None),
          ("({0} / (1.5 + ({1}) ** 2))", None), ("NP.maximum({0}, {1})", "kinks"), ("NP.minimum({1}, {0})", "kinks"),
          ("NP.hypot({0}, {1} + 2.0)", "elementwise"), ("NP.arctan2({0}, 2.0 + ({1}) ** 2)", "elementwise")]
SCALAR_BINARY = [("max({0}, {1})", "kinks"), ("min({0}, {1})", "kinks"), ("min({0}, {1}, {1})", "kinks"),
                 ("max({1}, {0}, {1})", "kinks")]
PRODUCTS = {  # target shape -> [(template, shape of {0}, shape of {1})]
    (): [("{0} @ {1}", (4,), (4,)), ("NP.dot({0}, {1})", (3,), (3,)), ("NP.einsum('i,i->', {0}, {1})", (4,), (4,)),
         ("NP.vdot({0}, {1})", (12,), (12,)), ("NP.inner({0}, {1})", (3,), (3,))],
    (3,): [("{0} @ {1}", (3, 4), (4,)), ("NP.dot({0}, {1})", (3, 4), (4,)), ("NP.einsum('ij,j->i', {0}, {1})", (3, 4), (4,)),
           ("{1} @ {0}", (4, 3), (4,))],
    (4,): [("{0} @ {1}", (3,), (3, 4)), ("{0}.dot({1})", (4, 3), (3,)), ("NP.matmul({0}, {1})", (4, 3), (3,))],
    (3, 4): [("NP.outer({0}, {1})", (3,), (4,)), ("NP.einsum('i,j->ij', {0}, {1})", (3,), (4,)),
             ("{0}.T @ NP.diag({1})", (4, 3), (4,))],
    (4, 3): [("{0}.T @ ({0} @ {1})", (3, 4), (4, 3))],
}


def indent(lines, by="    "):
    return [by + line for line in lines]
