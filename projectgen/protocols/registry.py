"""A protocol by name: a bundled folder (`names.protocol_names`), or any importable module that defines
``PROTOCOL`` (a user's own, outside the package: ``my_pkg.my_protocol`` or ``my_pkg.my_protocol:NAME``)."""
from __future__ import annotations

import importlib
import importlib.util

from projectgen.errors import ProjectGenError
from projectgen.protocols.definition import Protocol
from projectgen.protocols.names import DEFINING_MODULE, PACKAGE, protocol_names

ATTRIBUTE = "PROTOCOL"


def load_protocol(name: str) -> Protocol:
    """The protocol called `name` (a bundled folder), or the one a module names (``module`` or ``module:ATTR``);
    anything else is one line naming the bundled ones."""
    if name in protocol_names():
        module_name, attribute = f"{PACKAGE}.{name}.{DEFINING_MODULE}", ATTRIBUTE
    elif "." in name or ":" in name:
        module_name, _, attribute = name.partition(":")
        attribute = attribute or ATTRIBUTE
    else:
        raise ProjectGenError(f"unknown protocol {name!r} (protocols: {', '.join(protocol_names())}; or a module "
                              "that defines PROTOCOL, as module or module:NAME)")
    try:
        found = importlib.util.find_spec(module_name)
    except ModuleNotFoundError:
        found = None
    if found is None:
        raise ProjectGenError(f"protocol {name!r}: no module {module_name!r} can be imported")
    protocol = getattr(importlib.import_module(module_name), attribute, None)
    if not isinstance(protocol, Protocol):
        raise ProjectGenError(f"protocol {name!r}: {module_name}.{attribute} is not a projectgen Protocol")
    return protocol
