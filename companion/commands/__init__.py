"""Sub-commands of the ``companion`` CLI, one module per area.

Each module defines ``register(sub)`` that adds its parsers to the argparse
sub-parser action and sets ``func`` to a handler ``handler(args) -> int``.
Handlers raise :class:`companion.errors.CompanionError` for bad input; the CLI
turns those into exit codes and one line on stderr.
"""
