"""The entry point of an exported module (``srcad.export``): the text of its public
``<name>_adjoint``, and the argument checks it calls (``check_layout``, ``split_call``),
which every export copies from here with their source.
"""
from .arguments import where
from .errors import ArgumentError, ExportError
from .export_text import Unwritable, literal


def check_layout(where_, names, values, containers):
    """Refuse an argument the exported code was not made for: a list, tuple or dict where it
    expects an array or number, or the other way round (srcad would compile other code)."""
    for name, value in zip(names, values):
        given = isinstance(value, (list, tuple, dict))
        if given != (name in containers):
            raise ArgumentError(
                f"{where_}: argument {name!r} is {'a' if given else 'not a'} list, tuple or dict, but this "
                f"module was exported for {'an array or number' if given else 'a list, tuple or dict'} there: "
                f"export it again with --containers naming exactly the container arguments")


def split_call(where_, names, defaults, args, keywords):
    """``(arguments, v)`` of a call ``f_adjoint(*args, **keywords)``, split as
    ``srcad.differentiable(f).adjoint`` splits them: the cotangent is the keyword ``v=`` when
    ``f`` has no parameter ``v``, else the last positional argument beyond those the call
    must give; parameters not given take their defaults."""
    keywords = dict(keywords)
    v = None
    if "v" not in names and "v" in keywords:
        v = keywords.pop("v")
    else:
        needed = sum(1 for name in names[: len(names) - len(defaults)] if name not in keywords)
        if len(args) > needed:
            *args, v = args
    if len(args) > len(names):
        raise ArgumentError(f"{where_}: takes {len(names)} arguments and a cotangent, but was given {len(args) + 1}")
    values = list(args)
    for name in keywords:
        if name not in names or names.index(name) < len(values):
            raise ArgumentError(f"{where_}: unexpected or repeated argument {name!r}")
    first_default = len(names) - len(defaults)
    for i in range(len(values), len(names)):
        if names[i] in keywords:
            values.append(keywords[names[i]])
        elif i >= first_default:
            values.append(defaults[i - first_default])
        else:
            raise ArgumentError(f"{where_}: missing argument {names[i]!r}")
    return values, v


def public_function(public, joint, origin, label, params, names, containers, one_tuple, cotangent):
    """The text of the checked entry point, with ``srcad.differentiable(origin).adjoint``'s
    contract; it passes the cotangent to the generated ``joint`` as its keyword ``cotangent``."""
    at = repr(_short_where(origin))
    defaults = origin.__defaults__ or ()
    listed = literal(tuple(params), None)
    values = f"({params[0]},)" if len(params) == 1 else f"({', '.join(params)})"
    if defaults or "v" in params:  # the cotangent may follow fewer arguments than parameters: split as srcad does
        cot, args, keywords = (_fresh(n, params) for n in ("v", "args", "keywords"))
        shown = shown_parameters(origin, params)
        lines = [f"def {public}(*{args}, **{keywords}):",
                 f'    """{public}({", ".join(shown)}, v=None): the cotangent v is the keyword v= or, as for '
                 'srcad\'s adjoint, the last positional argument beyond the required ones."""',
                 f"    {values}, {cot} = split_call({at}, {listed}, {default_literal(tuple(defaults), at)}, "
                 f"{args}, {keywords})"]
    else:
        cot = "v"
        lines = [f"def {public}({', '.join(params)}, v=None):",
                 f'    """vᵀJ of {label} with respect to {", ".join(names)}: the gradient when v is None '
                 'and the output a scalar."""']
    call = f"{joint}({', '.join(params + [f'{cotangent}={cot}'])})"
    lines += [f"    check_arguments({at}, {listed}, {values}, {tuple(names)!r})",
              f"    check_layout({at}, {listed}, {values}, {tuple(containers)!r})",
              f"    {cot} = checked_cotangent({cot}, {at})",
              "    try:",
              f"        return {f'({call},)' if one_tuple else call}",
              "    except CotangentError as exc:",
              f"        raise CotangentError({at} + ': ' + str(exc)) from None"]
    return "\n".join(lines) + "\n"


def shown_parameters(fn, params):
    """``fn``'s parameters as its signature shows them (defaults as literals)."""
    defaults = fn.__defaults__ or ()
    first = len(params) - len(defaults)
    return params[:first] + [f"{p}={default_literal(d, where(fn))}" for p, d in zip(params[first:], defaults)]


def _fresh(name, taken):
    while name in taken:
        name += "_"
    return name


def file_line(fn):
    code = fn.__code__
    return f"{code.co_filename.replace(chr(92), '/').rsplit('/', 1)[-1]}:{code.co_firstlineno}"


def _short_where(fn):
    """``file.py:line: name`` for messages (the file's base name: the export is shipped elsewhere)."""
    return f"{file_line(fn)}: {fn.__qualname__}"


def default_literal(value, context):
    try:
        return literal(value, None)
    except Unwritable as exc:
        raise ExportError(f"{context}: cannot export a default value that is {exc}; make it a number, string "
                          "or None") from None
