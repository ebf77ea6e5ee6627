"""nftables through libnftables (the library `nft` itself is a thin front of), called in a
thread that entered the target namespace: one ruleset is one transaction, as `nft -f`, but
without forking `nsenter` and `nft` per namespace (at 100 guests the forks were a third of
a pass)."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

from stackling.dataplane import kernel

_lib: ctypes.CDLL | None = None
_lock = threading.Lock()


class NftError(RuntimeError):
    pass


def _library() -> ctypes.CDLL:
    global _lib
    with _lock:
        if _lib is None:
            lib = ctypes.CDLL(ctypes.util.find_library("nftables") or "libnftables.so.1")
            lib.nft_ctx_new.restype = ctypes.c_void_p
            lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
            lib.nft_ctx_free.argtypes = [ctypes.c_void_p]
            lib.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
            lib.nft_ctx_buffer_error.argtypes = [ctypes.c_void_p]
            lib.nft_ctx_get_output_buffer.restype = ctypes.c_char_p
            lib.nft_ctx_get_output_buffer.argtypes = [ctypes.c_void_p]
            lib.nft_ctx_get_error_buffer.restype = ctypes.c_char_p
            lib.nft_ctx_get_error_buffer.argtypes = [ctypes.c_void_p]
            lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.nft_ctx_free(lib.nft_ctx_new(0))  # its one-time global set-up, before threads
            _lib = lib
        return _lib


def available() -> bool:
    try:
        _library()
    except OSError:
        return False
    return True


def _run(commands: str) -> str:
    """Run in the calling thread's network namespace; the output (e.g. of a list)."""
    lib = _library()
    ctx = lib.nft_ctx_new(0)  # NFT_CTX_DEFAULT; a context per call: its socket is this ns's
    if not ctx:
        raise NftError("nft_ctx_new failed")
    try:
        lib.nft_ctx_buffer_output(ctx)
        lib.nft_ctx_buffer_error(ctx)
        if lib.nft_run_cmd_from_buffer(ctx, commands.encode()) != 0:
            error = (lib.nft_ctx_get_error_buffer(ctx) or b"").decode(errors="replace")
            raise NftError(error.strip() or "nft failed")
        return (lib.nft_ctx_get_output_buffer(ctx) or b"").decode(errors="replace")
    finally:
        lib.nft_ctx_free(ctx)


def apply(namespace: str, ruleset: str) -> str:
    """The commands in `ruleset` as one transaction inside `namespace`."""
    return kernel.in_namespace(namespace, lambda: _run(ruleset))
