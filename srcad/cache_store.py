"""The persistent cache's store: text entries in a private directory (``SRCAD_CACHE_DIR``),
each under the sha256 of its key material. What goes into an entry and its key, and when an
entry may be used, is ``srcad.cache``'s; this module guarantees that what ``load`` returns is
exactly what this user's ``store`` wrote under the same key material, or None:

- The directory must belong to the user and allow nobody else in (mode 0700; srcad
  creates it so). If its path contains a symlink, or it is someone else's, or group/world
  accessible, srcad warns once (``CacheWarning``) and caches nothing.
- Everything is done relative to a descriptor of that checked directory, and no path
  component inside it is followed if it is a symlink (``O_NOFOLLOW``).
- Entries are written to a fresh temporary file in the same directory, fsynced, then
  renamed over the entry (``os.replace``), so a reader sees a whole entry or none.
- An entry's name is the sha256 of its key material. The file repeats that hash and a hash
  of its contents; both are checked before the payload is returned, as are its owner, its
  size and that it is a regular file.
- An entry is opened without following symlinks and without blocking (a FIFO is refused).

A missing, unreadable or mismatching entry reads as None (a miss).

>>> import os, tempfile
>>> private = tempfile.TemporaryDirectory()  # mode 0700
>>> os.environ[ENV_VAR] = os.path.realpath(private.name)  # (no symlink on its path)
>>> store("key material", "payload"), load("key material"), load("other key material")
(True, 'payload', None)
>>> del os.environ[ENV_VAR]
>>> store("key material", "payload"), load("key material")  # caching is off
(False, None)
>>> private.cleanup()
"""
import hashlib
import os
import stat
import warnings

ENV_VAR = "SRCAD_CACHE_DIR"
FORMAT = "srcad-cache 1"
MAX_ENTRY_BYTES = 16 * 1024 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SUPPORTED = bool(_NOFOLLOW and _DIRECTORY and hasattr(os, "getuid")
                  and {os.open, os.rename, os.unlink} <= os.supports_dir_fd)
_warned = set()


class CacheWarning(UserWarning):
    """The persistent cache is not used (unsafe directory) or could not write an entry."""


def _warn_once(what, message):
    if what not in _warned:
        _warned.add(what)
        warnings.warn(message, CacheWarning, stacklevel=4)


# ---- the directory and the files

def directory():
    """The cache directory's path from the environment, or None when caching is off."""
    path = os.environ.get(ENV_VAR)
    return os.path.abspath(os.path.expanduser(path)) if path else None


def _open_directory(path):
    """A descriptor of ``path`` if it is a private directory of this user, else None (warned).

    The path is walked from the root one component at a time, each opened relative to its
    parent without following symlinks: a symlink anywhere on the way is refused.
    """
    if not _SUPPORTED:
        _warn_once(("platform",), f"{ENV_VAR} is set but this platform lacks O_NOFOLLOW/dir_fd; srcad caches nothing")
        return None
    try:
        fd = _walk(path)
    except OSError as exc:
        _warn_once(path, f"{ENV_VAR}={path!r} cannot be used ({exc.strerror or exc}); srcad caches "
                         "nothing")
        return None
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "it is not a directory"
    elif info.st_uid != os.getuid():
        problem = f"it belongs to uid {info.st_uid}, not to this user"
    elif info.st_mode & 0o077:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):o}; it must be 700 (chmod 700 it)"
    if problem:
        os.close(fd)
        _warn_once(path, f"{ENV_VAR}={path!r} is refused: {problem}; srcad caches nothing")
        return None
    return fd


def _walk(path):
    """Open the absolute directory ``path`` component by component (creating missing ones,
    mode 0700), never following a symlink."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    fd = os.open(os.sep, flags)
    try:
        for part in [p for p in path.split(os.sep) if p]:
            try:
                child = _open_child(part, flags, fd)
            except OSError:
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(f"{part!r} in it is a symlink, and a symlink is refused") from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(part, flags, fd):
    try:
        return os.open(part, flags, dir_fd=fd)
    except FileNotFoundError:
        try:
            os.mkdir(part, 0o700, dir_fd=fd)
        except FileExistsError:  # made meanwhile by another process
            pass
        return os.open(part, flags, dir_fd=fd)


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry_place(key_material):
    """``(directory path, its open descriptor, entry name)`` for ``key_material``, or None when
    there is no usable cache directory."""
    path = directory()
    if path is None:
        return None
    fd = _open_directory(path)
    if fd is None:
        return None
    return path, fd, _digest(key_material)


def load(key_material):
    """The text stored under ``key_material``, or None (no cache, no entry, or a bad one)."""
    opened = _entry_place(key_material)
    if opened is None:
        return None
    _, fd, key = opened
    try:
        # non-blocking: opening a FIFO planted under the entry's name must not wait for a writer
        entry = os.open(key, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
    except OSError:  # absent, or a symlink
        os.close(fd)
        return None
    try:
        info = os.fstat(entry)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022 \
                or info.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(entry, "rb", closefd=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
    finally:
        os.close(entry)
        os.close(fd)
    return _verified(data, key)


def _verified(data, key):
    """The payload of an entry if its header names ``key`` and its contents hash right."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    header, _, payload = text.partition("\n\n")
    lines = header.split("\n")
    if len(lines) != 3 or lines[0] != FORMAT or lines[1] != f"key {key}" or lines[2] != f"sha256 {_digest(payload)}":
        return None
    return payload


def store(key_material, payload):
    """Write ``payload`` under ``key_material`` atomically; True if it was written."""
    opened = _entry_place(key_material)
    if opened is None:
        return False
    path, fd, key = opened
    data = f"{FORMAT}\nkey {key}\nsha256 {_digest(payload)}\n\n{payload}".encode("utf-8")
    temporary = f".{key}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
            os.fsync(out)
        finally:
            os.close(out)
        os.replace(temporary, key, src_dir_fd=fd, dst_dir_fd=fd)
        return True
    except OSError as exc:
        try:
            os.unlink(temporary, dir_fd=fd)
        except OSError:
            pass
        _warn_once(("write", path), f"srcad could not write to its cache {path!r}: {exc}")
        return False
    finally:
        os.close(fd)
