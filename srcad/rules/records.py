"""Rules for reading a field of a named tuple or a dataclass by attribute (``params.w``):
the reverse and forward passes route an attribute with no rule of its own here, and the
helpers check at run time that the object has that field (anything else is refused)."""
from ..registry import register_jvp, register_vjp
from ..pytrees import field_grad, field_tangent


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
