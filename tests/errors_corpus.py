"""Functions srcad must refuse, each with a clear error at the right line."""
import numpy as np
import scipy.special


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f") as fh:
        fh.read()
    return x


def uses_generator(x):
    yield x


def uses_class(x):
    class Box:
        pass
    return x


def uses_global(x):
    global COUNTER
    COUNTER = 1
    return x


def uses_nonlocal_writer(x):
    total = x

    def add():
        nonlocal total
        total = total + 1

    add()
    return total


def no_rule(x):
    y = x * 2
    return scipy.special.kolmogorov(y).sum()


def no_method_rule(x):
    return x.byteswap().sum()


def calls_unknown(x):
    return undefined_function(x)  # noqa: F821


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2, n - 1)


def mutual_a(x, n):
    return mutual_b(x, n) if n > 0 else x


def mutual_b(x, n):
    return mutual_a(x * 2, n - 1)


def view_then_update(x):
    A = np.zeros((2, 2))
    r = A[0]
    r[1] = x
    return A.sum()


def updates_argument_view(x):
    head = x[:2]
    head[0] = 5.0
    return x.sum()


def in_place_sort(x):
    y = x * 2
    y.sort()
    return y.sum()


def local_function_value(x, f):
    return f(x)


async def coroutine(x):
    return x


def updates_argument(x):
    x[0] = 3.0
    return (x * x).sum()


def fills_in_helper(x):
    out = np.zeros(3)
    np.put(out, [0, 1, 2], x)
    return out.sum()


def sums_into_out(x):
    y = np.zeros(3)
    z = np.add(x, 1.0, out=y)
    return y.sum() + z.sum()
