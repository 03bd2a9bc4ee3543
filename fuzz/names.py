"""The pool of variable names the generator draws from: names that collide with srcad's own
vocabulary (rule template parameters and temporaries, runtime helpers, generated-name
patterns), Python builtins, NumPy-like module names, and a few ordinary ones."""
import builtins
import functools
import keyword

# builtins the generated programs call; a function that uses one as a variable never calls it
CALLED_BUILTINS = ("range", "len", "min", "max", "reversed", "slice", "list", "zip", "enumerate", "sum", "abs",
                   "float", "tuple", "map", "filter", "any", "all", "sorted")
NUMPY_LIKE = ("np", "numpy", "onp", "jnp", "xp", "anp", "math")
GENERATED = ("_t1", "_t2", "_t3", "dx", "dy", "dz", "x_dot", "y_dot", "_x_stack", "_y_stack", "_x_1", "_s_1",
             "_range1", "_seq1", "_n1", "_skip1", "_stop1", "d", "t", "v", "g", "dv", "v_dot", "_d", "d_t1",
             "_t1_stack", "f_x", "h_u", "pullback", "adjoint", "vjp", "grad", "fn", "args", "_tmp", "_taken1",
             "_tail")
ORDINARY = ("x", "y", "z", "w", "s", "u", "acc", "buf", "out", "tmp", "k", "i", "j", "n", "r", "a", "b", "c", "e",
            "h", "p", "q", "total", "row", "col", "val", "item", "mask", "idx")


def srcad_names():
    """Parameter, result, local and global names of every registered rule, and the runtime's names."""
    import srcad  # noqa: F401  (fills the tables)
    from srcad import optional_rules, registry, runtime

    try:  # SciPy's rules register once SciPy is imported: load them, so the pool does not
        import scipy.special  # noqa: F401  depend on what ran before
    except ImportError:
        pass
    optional_rules.load_optional_rules()

    found = set()
    for table in (registry.VJP, registry.JVP):
        for rule in table.values():
            if not (getattr(rule.fn, "__module__", "") or "").startswith("srcad."):
                continue  # a rule a test (or a user) registered: the pool must not depend on what ran before
            found.add(rule.result)
            found.update(p.name for p in rule.params)
            try:
                found.update(rule.locals)
                found.update(rule.globals)
            except Exception:  # a rule whose template cannot be parsed here is not our concern
                pass
    found.update(n for n in vars(runtime) if not n.startswith("__"))
    return found


@functools.lru_cache(maxsize=None)
def name_pool():
    """Sorted, deterministic: every usable identifier from all the sources above."""
    pool = set(CALLED_BUILTINS) | set(NUMPY_LIKE) | set(GENERATED) | set(ORDINARY) | srcad_names()
    usable = {n for n in pool if n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("__")
              and n not in ("self", "cls", "True", "False", "None", "print", "isinstance", "type",
                            "super", "object", "__builtins__")}
    # builtins other than the ones we call are fine to shadow; keep them, they are adversarial too
    return tuple(sorted(usable | {n for n in ("sorted", "map", "iter", "next", "any", "all", "round", "int", "tuple",
                                        "dict", "set", "pow", "divmod") if hasattr(builtins, n)}))
