"""Pickles of numpy arrays that numpy 1.x and 2.x both load.

numpy 2 pickles an array through ``numpy._core.multiarray._reconstruct``; numpy 1.x has no
``numpy._core`` and fails with ModuleNotFoundError (GMR environments often pin numpy 1.x).
numpy 2 still resolves the 1.x name ``numpy.core.multiarray._reconstruct`` for old pickles,
silently, so writing that name serves both. Protocol 3 keeps every global a ``GLOBAL`` opcode
with a newline-terminated text argument and no frame lengths, so the rename is a splice of
those opcodes found by :mod:`pickletools`, never a search through the array bytes.
"""

from __future__ import annotations

import pickle
import pickletools
from typing import Any

_NEW_PREFIX = "numpy._core"
_OLD_PREFIX = "numpy.core"


def dumps_numpy1_compatible(obj: Any) -> bytes:
    """Pickle bytes of `obj` whose globals name no ``numpy._core`` module."""
    raw = pickle.dumps(obj, protocol=3)
    pieces: list[bytes] = []
    last = 0
    for opcode, arg, pos in pickletools.genops(raw):
        if opcode.name != "GLOBAL" or not str(arg).startswith(_NEW_PREFIX) or pos is None:
            continue
        module, name = str(arg).split(" ", 1)
        length = 1 + len(module) + 1 + len(name) + 1  # 'c' module '\n' name '\n'
        old = _OLD_PREFIX + module[len(_NEW_PREFIX) :]
        pieces += [raw[last:pos], b"c" + old.encode() + b"\n" + name.encode() + b"\n"]
        last = pos + length
    pieces.append(raw[last:])
    return b"".join(pieces)


def pickle_globals(data: bytes) -> set[str]:
    """'module name' of every global a plain pickle stream refers to."""
    found = set()
    for opcode, arg, _ in pickletools.genops(data):
        if opcode.name == "GLOBAL":
            found.add(str(arg))
        elif opcode.name == "STACK_GLOBAL":
            found.add("(stack global)")  # protocol 4+: names pushed as strings; not written here
    return found
