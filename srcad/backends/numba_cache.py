"""Where numba's on-disk cache of compiled adjoints lives: ``$SRCAD_CACHE_DIR/numba``.

numba caches a function's machine code beside its source file, keyed by the file's path
and modification stamp, and freezes the globals the function reads into that code. So
each lowered generated module is written once to a file named by the digest of its text
and of every global it reads (``numba_backend._cache_digest``): a file is never rewritten,
and different code or different globals give a different file. The directory is the one
``srcad.cache_store`` checks (this user's, mode 0700, no symlink on its path, else nothing is
cached); the file is created without following symlinks, written to a temporary name and
renamed, and one found with other contents, or not this user's regular file, is not used.
"""
import os
import stat

from .. import cache_store

SUBDIRECTORY = "numba"


def directory():
    """The checked cache directory's path, or None when caching is off or refused."""
    return cache_store.directory()


def anchor_file(digest, text):
    """The path of the file holding ``text`` under ``digest`` (written if absent), or None."""
    path = cache_store.directory()
    fd = cache_store._open_directory(path) if path is not None else None
    if fd is None:
        return None
    flags = os.O_RDONLY | cache_store._DIRECTORY | cache_store._NOFOLLOW | cache_store._CLOEXEC
    try:
        sub = cache_store._open_child(SUBDIRECTORY, flags, fd)
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    name = f"srcad_{digest[:40]}.py"
    data = text.encode("utf-8")
    try:
        if not _holds(sub, name, data):
            temporary = f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
            out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | cache_store._NOFOLLOW | cache_store._CLOEXEC, 0o600,
                          dir_fd=sub)
            try:
                os.write(out, data)
                os.fsync(out)
            finally:
                os.close(out)
            try:
                os.link(temporary, name, src_dir_fd=sub, dst_dir_fd=sub, follow_symlinks=False)  # never replaces
            except FileExistsError:
                pass
            finally:
                os.unlink(temporary, dir_fd=sub)
            if not _holds(sub, name, data):
                return None
    except OSError:
        return None
    finally:
        os.close(sub)
    return os.path.join(path, SUBDIRECTORY, name)


def _holds(sub, name, data):
    """Is ``name`` in the directory ``sub`` this user's regular file with exactly ``data``?"""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | cache_store._NOFOLLOW | cache_store._CLOEXEC, dir_fd=sub)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return False
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(len(data) + 1) == data
    finally:
        os.close(fd)
