"""Rules for reading a field of a named tuple or a dataclass by attribute (``params.w``):
the reverse and forward passes route an attribute with no rule of its own here, and the
helpers check at run time that the object has that field (anything else is refused).
Building one (``State(x, v)``, ``passes.records``) is ``new_record``: its derivative is that
of the tuple of its fields, laid out as the record's adjoint (a dict by field for a
dataclass, a list like its items for a named tuple)."""
from ..registry import register_jvp, register_vjp
from ..pytrees import field_grad, field_names, field_tangent, is_dataclass_instance


def field(obj, name):
    """``obj.name``: what a field read computes (the passes call its rules directly)."""
    return getattr(obj, name)


@register_vjp(field)
def field_vjp(y, obj, name):
    d[obj] += field_grad(d[y], obj, name)


@register_jvp(field)
def field_jvp(y, obj, name):
    t[y] += field_tangent(t[obj], obj, name)


# the helpers are linear in their first argument: rules for derivatives of derivatives
@register_vjp(field_grad)
def field_grad_vjp(y, g, obj, name):
    d[g] += field_tangent(d[y], obj, name)


@register_jvp(field_grad)
def field_grad_jvp(y, g, obj, name):
    t[y] += field_grad(t[g], obj, name)


@register_vjp(field_tangent)
def field_tangent_vjp(y, tangent, obj, name):
    d[tangent] += field_grad(d[y], obj, name)


@register_jvp(field_tangent)
def field_tangent_jvp(y, tangent, obj, name):
    t[y] += field_tangent(t[tangent], obj, name)


def new_record(cls, fields):
    """``cls`` built from ``fields``, its field values in order (``State(x, v)``)."""
    if issubclass(cls, tuple):
        return cls(*fields)
    return cls(**dict(zip(field_names(cls), fields)))


def _fields_of(record):
    if isinstance(record, tuple):
        return record._fields, record
    names = field_names(record)
    return names, [getattr(record, n) for n in names]


def record_grad(g, record):
    """The adjoint of the fields ``record`` was built from (a list, field by field) from the
    record's adjoint ``g`` (None is zero, and so is a field it lacks)."""
    from ..runtime_adjoints import zeros_like

    names, values = _fields_of(record)
    out = []
    for k, (name, value) in enumerate(zip(names, values)):
        if g is None:
            item = None
        elif isinstance(g, dict):
            item = g.get(name)
        elif is_dataclass_instance(g):
            item = getattr(g, name)
        else:
            item = g[k]
        out.append(zeros_like(value) if item is None else item)
    return out


def record_tangent(tangents, record):
    """The tangent of ``record`` from the tangents of its fields, in order: a dict by field
    for a dataclass, a list like its items for a named tuple."""
    names, _ = _fields_of(record)
    if isinstance(record, tuple):
        return list(tangents)
    return dict(zip(names, tangents))


@register_vjp(new_record, zero="cls")
def new_record_vjp(y, cls, fields):
    d[fields] += record_grad(d[y], y)


@register_jvp(new_record, zero="cls")
def new_record_jvp(y, cls, fields):
    t[y] += record_tangent(t[fields], y)


@register_vjp(record_grad, zero="record")
def record_grad_vjp(y, g, record):
    d[g] += record_tangent(d[y], record)


@register_jvp(record_grad, zero="record")
def record_grad_jvp(y, g, record):
    t[y] += record_grad(t[g], record)


@register_vjp(record_tangent, zero="record")
def record_tangent_vjp(y, tangents, record):
    d[tangents] += record_grad(d[y], record)


@register_jvp(record_tangent, zero="record")
def record_tangent_jvp(y, tangents, record):
    t[y] += record_tangent(t[tangents], record)
