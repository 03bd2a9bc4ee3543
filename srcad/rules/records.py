"""Rules for reading a field of a named tuple or a dataclass by attribute (``params.w``):
the reverse and forward passes route an attribute with no rule of its own here, and the
helpers check at run time that the object has that field (anything else is refused)."""
from ..registry import register_jvp, register_vjp
from ..runtime import field_grad, field_tangent


def field(obj, name):
    """``obj.name``: what a field read computes (the passes call its rules directly)."""
    return getattr(obj, name)


@register_vjp(field)
def field_vjp(y, obj, name):
    d[obj] += field_grad(d[y], obj, name)


@register_jvp(field)
def field_jvp(y, obj, name):
    t[y] += field_tangent(t[obj], obj, name)
