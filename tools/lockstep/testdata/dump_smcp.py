"""Print what the Python reference SDK (a2c_smcp.smcp) defines, as JSON.

events: every module-level string constant whose value is an event name
("client:...", "server:...", "notify:..."), by value, with the constant's name.
types: every TypedDict class defined in a2c_smcp.smcp, with each key's
required flag (total=False and NotRequired make a key optional) and whether
its annotation admits None.
"""

import json
import sys
import types as pytypes
import typing

import typing_extensions

# Later SDKs' logger writes to stdout when it starts: keep stdout for the answer.
answer_to = sys.stdout
sys.stdout = sys.stderr

from a2c_smcp import smcp  # noqa: E402

NONE = type(None)


def unwrap(tp):
    # NotRequired[...] / Required[...] wrap the real annotation.
    while typing.get_origin(tp) in (typing.NotRequired, typing.Required,
                                    typing_extensions.NotRequired, typing_extensions.Required):
        tp = typing.get_args(tp)[0]
    return tp


def nullable(tp):
    tp = unwrap(tp)
    if tp is None or tp is NONE:
        return True
    if typing.get_origin(tp) in (typing.Union, pytypes.UnionType):
        return any(nullable(a) for a in typing.get_args(tp))
    return False


def is_typeddict(obj):
    return isinstance(obj, type) and (typing_extensions.is_typeddict(obj) or typing.is_typeddict(obj))


out = {"events": {}, "types": {}, "namespace": getattr(smcp, "SMCP_NAMESPACE", None)}
for name, value in vars(smcp).items():
    if isinstance(value, str) and value.split(":", 1)[0] in ("client", "server", "notify") and ":" in value:
        out["events"][value] = name
for name, cls in vars(smcp).items():
    if not is_typeddict(cls) or cls.__module__ != smcp.__name__:
        continue
    hints = typing.get_type_hints(cls, include_extras=True)
    keys = {}
    for key, tp in hints.items():
        keys[key] = {"required": key in cls.__required_keys__, "nullable": nullable(tp)}
    out["types"][name] = keys
json.dump(out, answer_to, indent=1, sort_keys=True)
