"""The ``companion`` command line: a thin shell over the engine, vision, referee
and scoreboard.  See ../shared/CONTRACT.md for the commands outside checks run.

Exit codes: 0 success; 2 bad usage or unreadable input; 3 mat not found.  Errors
are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import re
import sqlite3
import sys

from companion.commands.images import MAX_IMAGE_PIXELS
from companion.errors import BadInput, CompanionError

# OpenCV reads its limit on a picture's size once, when it loads (2^30 pixels
# by default: a 400 KB PNG claiming 20000 x 20000 px took 9 GB and 35 s before
# the mat was not found); the commands read nothing larger than
# MAX_IMAGE_PIXELS.  Set before anything imports cv2; a limit already in the
# environment stands.
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_IMAGE_PIXELS))

# Modules under companion.commands that register sub-commands (see
# companion/commands/__init__.py).  Keep one per line.
COMMAND_MODULES = [
    "companion.commands.engine",
    "companion.commands.recognize",
    "companion.commands.vision_setup",
    "companion.commands.enroll",
    "companion.commands.game",
    "companion.commands.referee",
    "companion.commands.demo",
    "companion.commands.serve",
    "companion.commands.tiles_art",
]


#: a negative number, or a slot with negative coordinates (``-17,-10,0``):
#: argparse takes these as values, not as options (layout files keep their own
#: coordinates, which may be negative: ../shared/CONTRACT.md, "Layout")
_NEGATIVE_VALUE = re.compile(r"^-\d+$|^-\d*\.\d+$|^-\d+(,-?\d+)+$")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line and exit 2, and which
    reads a slot with negative coordinates as a value."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # argparse's own test for "a negative number, not an option"
        # (Lib/argparse.py, ArgumentParser._negative_number_matcher), widened to slots
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message: str) -> None:  # type: ignore[override]
        _say(f"{self.prog}: error: {curbed(message)}")
        raise SystemExit(2)

    def _print_message(self, message: str, file=None) -> None:
        """``--help`` and ``--version`` on stdout: argparse drops a write
        that fails (``> /dev/full``) and exits 0; here it is one line and
        exit 2, as every command's output (a break-test, session 56)."""
        if not message:
            return
        file = file or sys.stderr
        try:
            file.write(message)
            file.flush()
        except OSError as exc:
            if file is sys.stderr:
                return
            _stdout_to_devnull()
            _say(f"{self.prog}: cannot write to standard output: {exc.strerror or exc}")
            raise SystemExit(2) from None


def _version() -> str:
    """The installed package's version (``pyproject.toml``), or "unknown" in a
    checkout that was never installed."""
    from importlib import metadata
    try:
        return metadata.version("companion-referee")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="companion", description="A referee, score ledger and scoreboard for "
                     "Mahjong-solitaire-family games played on a real table.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)sub-command ``args`` were parsed for
    (``companion layouts list``), or ``parser`` itself."""
    for action in parser._actions:             # argparse keeps sub-parsers only there
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _command_parser(chosen, args)
    return parser


def _intermixed(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> list[str]:
    """Files given after an option, where the command takes several
    (``solve a.json --json b.json``, ``classify a.png --profile P b.png``):
    argparse fills a ``nargs="+"`` positional from one run of words only and
    leaves the later ones over; they are added to it, in order, as a shell's
    usual options-anywhere reading gives them.  Returns what is still left
    over (everything, when a word looks like an option or the command has no
    such positional)."""
    lists = [a for a in parser._actions
             if not a.option_strings and a.nargs in ("+", "*") and isinstance(getattr(args, a.dest, None), list)]
    if len(lists) != 1 or any(w.startswith("-") and len(w) > 1 and not _NEGATIVE_VALUE.match(w) for w in extra):
        return extra
    action = lists[0]
    try:
        values = [action.type(w) if callable(action.type) else w for w in extra]
    except (TypeError, ValueError, argparse.ArgumentTypeError):
        return extra
    getattr(args, action.dest).extend(values)
    return []


def word_arg(text: str) -> str:
    """An option's word (a variant, a mode, a format ...) as the parser
    compares it with its choices: NFKC-folded (a full-width ``ＬＯＶＥ``),
    without spaces at its ends (``--variant ' love'`` was refused where
    ``--layout 'turtle '`` was taken), and without case."""
    import unicodedata
    return unicodedata.normalize("NFKC", text).strip().casefold()


def seed_value(text: str) -> int:
    """``--seed``: a whole number, 0 or more.  Python's ``random.Random``
    seeds with the absolute value of an integer, so ``-N`` would silently
    give the same deal as ``N``; refusing it keeps one seed, one deal.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or negative.
    """
    import argparse

    if not re.fullmatch(r"-?[0-9]+", text):      # (int() would also take " 5", "1_000" and other scripts' digits)
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}")
    try:
        value = int(text)
    except ValueError:         # over Python's limit on digits (sys.get_int_max_str_digits(), 4300)
        raise argparse.ArgumentTypeError(f"expected a whole number of at most {sys.get_int_max_str_digits()} "
                                         f"digits, not one of {len(text.lstrip('-'))}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number 0 or more, not {value} "
                                         "(a negative seed would deal the same tiles as the same number "
                                         "without its minus)")
    return value


def print_json(obj) -> None:
    """Write one JSON document (one line of strict JSON, ASCII only) to
    stdout: file names whose bytes are not UTF-8 with those bytes as
    ``\\xNN`` (:func:`companion.jsontext.dumps`).

    Raises:
        BadInput: ``obj`` holds a NaN or infinite number, which JSON cannot
            hold (nothing is written).
    """
    from companion.errors import BadInput
    from companion.jsontext import dumps

    try:
        text = dumps(obj)
    except ValueError as exc:
        raise BadInput(f"cannot write the JSON output: {exc}") from None
    check_stdout_open("the JSON")
    sys.stdout.write(text + "\n")


def check_stdout_open(what: str) -> None:
    """Refuse a command's output (``what``: "the JSON", "the export") before
    it is written to a closed stdout (``companion ... >&-``, where it would
    be lost with exit 0).

    Raises:
        BadInput: stdout is closed.
    """
    from companion.errors import BadInput
    if isinstance(sys.stdout, _ClosedStdout):
        raise BadInput(f"standard output is closed, so {what} has nowhere to go: run the command with stdout "
                       "open, or redirected to a file")


#: the name an error writing to stdout carries (:class:`_NamedStdout`)
STDOUT_NAME = "<standard output>"


class _NamedStdout:
    """Stdout, whose write errors name it: an ``OSError`` from a write or a
    flush without a file name gets :data:`STDOUT_NAME`, so that ``companion
    ... > /dev/full`` says "cannot write to standard output: No space left
    on device", not the reason alone (a break-test, session 56).  Anything
    else is the stream's own."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _named(self, call, *a):
        try:
            return call(*a)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.filename is None:
                exc.filename = STDOUT_NAME
            raise

    def write(self, text: str) -> int:
        return self._named(self._stream.write, text)

    def flush(self) -> None:
        return self._named(self._stream.flush)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _ClosedStdout(io.StringIO):
    """Stands in for a closed stdout (``companion ... >&-``): what a command
    prints goes nowhere, and :func:`print_json` refuses (a break-test,
    session 56: ``recognize --json >&-`` exited 0 with its JSON gone).
    Plain lines are lost quietly: a command's files are its output there."""

    #: what is written here is lost (:func:`companion.web.serve.print_announcement`
    #: writes the referee's PIN to stderr instead)
    lost = True

    def write(self, text: str) -> int:
        return len(text)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns (and exits with) the exit code.
    Called with ``argv`` (in-process), it leaves ``sys.stdout`` as it found it."""
    if argv is None:
        return _main(argv)
    before = sys.stdout
    try:
        return _main(argv)
    finally:
        sys.stdout = before


def _main(argv: list[str] | None) -> int:
    import os
    if sys.stderr is None:      # a closed stream (`companion ... 2>&-`): nowhere to write, no traceback
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stdout is sys.__stdout__ and getattr(sys.stdout, "errors", None) == "strict":
        # (a UTF-8 locale other than C's): a file name that is not UTF-8,
        # printed in plain text, would raise UnicodeEncodeError; write such
        # characters as backslash escapes instead
        try:
            sys.stdout.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    if not isinstance(sys.stdout, (_NamedStdout, _ClosedStdout)):
        sys.stdout = _NamedStdout(sys.stdout)
    try:
        parser = build_parser()          # (imports every command's module: a Ctrl+C lands here first)
        args, extra = parser.parse_known_args(argv)
    except KeyboardInterrupt:
        _say("companion: interrupted")
        return _exit(130, argv)
    if extra:
        extra = _intermixed(_command_parser(parser, args), args, extra)
    if extra:
        # as parse_args would refuse them, but in the sub-command's name
        # ("companion recognize: error: ..."), as its other usage errors are
        _command_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        empty = _empty_path(_command_parser(parser, args), args, sys.argv[1:] if argv is None else argv)
        if empty:
            raise BadInput(empty)
        code = args.func(args)
        sys.stdout.flush()              # what the command printed, written now: a failure is named here
    except CompanionError as exc:
        _say(f"companion {args.command}: {_one_line(exc)}")
        code = exc.exit_code
    except sqlite3.DatabaseError as exc:
        # a ledger damaged past what opening it finds (a bad page, a cut
        # copy): every game action gave a traceback (a break-test, session
        # 57), where serve refuses such a file in one line
        ledger = getattr(args, "ledger", None)
        what = f"ledger {ledger}" if ledger else "the ledger"
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(exc, sqlite3.OperationalError) and code not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            _say(f"companion {args.command}: cannot use {what}: {_one_line(exc)}")
        else:
            _say(f"companion {args.command}: cannot use {what}: SQLite finds it damaged ({_one_line(exc)}); use a "
                 "copy made before the damage (sqlite3's .recover command saves what is left)")
        code = 2
    except BrokenPipeError:
        # the reader of stdout went away (``companion ... | head``): it has
        # what it wanted, so stop quietly; stdout goes to /dev/null so the
        # interpreter's last flush cannot fail again (the recipe of Python's
        # ``signal`` docs, "Note on SIGPIPE")
        _stdout_to_devnull()
        code = 0
    except OSError as exc:
        if exc.filename == STDOUT_NAME:
            _stdout_to_devnull()        # (the interpreter's last flush must not fail again)
        _say(f"companion {args.command}: {_one_line(os_error_text(exc))}")
        code = 2
    except ImportError as exc:
        # a package missing or broken (or its loading cut by Ctrl+C, which
        # onnxruntime reports as "initialization failed")
        _say(f"companion {args.command}: cannot load {exc.name or 'a library'}: {_one_line(exc)} "
             "(reinstall: pip install -e .)")
        code = 2
    except KeyboardInterrupt:
        _say(f"companion {args.command}: interrupted")
        code = 130
    return _exit(code, argv)


#: options and arguments that name a file or folder: an empty one is refused
#: by name, before the command runs (a break-test, session 49: ``--ledger ""``
#: was read as the current folder, "it is a folder", and the referee's
#: ``--ledger ""`` as no ledger at all, the game's ledger silently not kept)
PATH_OPTIONS = frozenset({"--ledger", "--out", "--camera", "--mat", "--tiles", "--model", "--evidence",
                          "--events-out", "--deal", "--crops", "--labels", "--profile", "--cache", "--annotate",
                          "--draw", "--sheet"})
PATH_ARGUMENTS = frozenset({"image", "images", "SOURCE", "deals"})
#: other options an empty value would silently drop (``undo --player ""``
#: took back the last move as the referee, ``--game ""`` chose the newest
#: game): refused the same way, naming what they take
NAMED_OPTIONS = {"--player": "a player's name", "--game": "a game id"}


def _empty_path(parser: argparse.ArgumentParser, args: argparse.Namespace, argv) -> str | None:
    """The refusal of an empty file or folder name given to a path option of
    :data:`PATH_OPTIONS` (``--ledger ""``, ``--out=``, ``--led ""`` as
    argparse takes a unique prefix, a list option's every value) or as a
    path argument of :data:`PATH_ARGUMENTS` (a script's unset ``$IMAGE``),
    else None.  ``parser`` is the (sub-)command's; a folder is an option
    whose metavar says ``DIR``."""
    argv = [str(a) for a in argv]
    acts = parser._option_string_actions
    for k, tok in enumerate(argv):
        if tok == "--":             # (what follows is arguments only)
            break
        if not tok.startswith("--"):
            continue
        flag, eq, value = tok.partition("=")
        action = acts.get(flag)
        if action is None and parser.allow_abbrev:     # as argparse reads --led: the one option it begins
            found = {id(a): a for o, a in acts.items() if o.startswith(flag)}
            action = next(iter(found.values())) if len(found) == 1 else None
        if action is None or action.nargs == 0:
            continue
        name = max(action.option_strings, key=len)
        if name not in PATH_OPTIONS and name not in NAMED_OPTIONS:
            continue
        if eq:
            values = [value]
        elif action.nargs in ("+", "*"):
            values = []
            for v in argv[k + 1:]:
                if v.startswith("-") and len(v) > 1:
                    break
                values.append(v)
        else:
            values = argv[k + 1:k + 2]
        if any(not v.strip() for v in values):
            if name in NAMED_OPTIONS:
                return f"{name} needs {NAMED_OPTIONS[name]}, not an empty one"
            folder = str(action.metavar or "").upper() == "DIR" or name in ("--crops", "--evidence", "--cache")
            return f"{name} needs a {'folder' if folder else 'file'} name, not an empty one"
    for action in parser._actions:
        v = getattr(args, action.dest, None) if action.dest in PATH_ARGUMENTS else None
        if any(isinstance(x, str) and not x.strip() for x in (v if isinstance(v, list) else [v])):
            return f"{action.metavar or action.dest.upper()} needs a file name, not an empty one"
    return None


def _exit(code: int | None, argv) -> int:
    """``code`` returned (a call with ``argv``) or exited with (the console script)."""
    if argv is None:
        raise SystemExit(code or 0)
    return code or 0


def _say(line: str) -> None:
    """One line on stderr; where stderr cannot take it (``2>/dev/full``,
    closed) it is lost, and the exit code still tells."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def os_error_text(exc: OSError) -> str:
    """An ``OSError`` in words: ``"cannot read or write FILE: No such file or
    directory"``, without Python's ``[Errno 2]`` and quotes (the last resort
    for an OSError a command did not turn into its own message)."""
    reason = exc.strerror or "the operating system refused it"
    if exc.filename == STDOUT_NAME:
        return f"cannot write to standard output: {reason}"
    if exc.filename is not None:
        name = os.fsdecode(exc.filename) if isinstance(exc.filename, bytes) else str(exc.filename)
        return f"cannot read or write {name}: {reason}"
    return reason


def _stdout_to_devnull() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # stdout replaced (tests): nothing to redirect
        pass


def _one_line(exc: BaseException) -> str:
    """The error's message on one line.  Bytes of a file name that are not
    UTF-8 (held by Python as surrogates) are shown as ``\\xNN`` escapes, as
    JSON output shows them, so writing the line never fails, whatever
    stderr's encoding; see :func:`curbed` for control characters and
    over-long values."""
    return curbed(str(exc) or exc.__class__.__name__)


#: the longest run of characters without a space that an error line shows
#: whole (a path, a JSON value: a deep path stays whole); a longer one is
#: shown by its ends
LONG_WORD = 240

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: format characters that reorder or hide what follows (right-to-left
#: overrides and isolates, marks, the byte order mark), shown escaped
_FORMAT = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_LONG = re.compile(r"\S{%d,}" % (LONG_WORD + 1))
#: a byte of a file name that is not UTF-8, as Python decodes it (PEP 383:
#: U+DC80-U+DCFF), and any other lone surrogate
_SURROGATE = re.compile("[\ud800-\udfff]")


def curbed(text: str) -> str:
    """``text`` fit for one line of a terminal: white space runs (newlines,
    tabs) one space, any other control character (the ESC of an escape
    sequence a file name or a layout name may hold, a bell) as a ``\\xNN``
    escape, a character that reorders or hides the text after it (a
    right-to-left override, U+202E) as a ``\\uXXXX`` escape, a byte of a
    file name that is not UTF-8 (PEP 383's U+DC80-U+DCFF) as ``\\xNN``, as
    JSON output shows it, another lone surrogate as ``\\uXXXX``, and a value
    over :data:`LONG_WORD` characters without a space (a 400-digit seed, a
    10 000-letter word) cut to its first 160 and last 60 characters around
    ``...(N characters)...`` (N counts the value as shown, its quotes and a
    colon after it left out), so the line still names the value without
    flooding the terminal."""
    text = " ".join(text.split())
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    text = _FORMAT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    # a name's byte that is not UTF-8 as the four characters \xNN, as JSON
    # output shows it (README, "Commands"); another lone surrogate as \uXXXX
    text = _SURROGATE.sub(lambda m: (f"\\x{ord(m.group()) - 0xDC00:02x}" if 0xDC80 <= ord(m.group()) <= 0xDCFF
                                     else f"\\u{ord(m.group()):04x}"), text)
    def cut(m) -> str:
        word = m.group()
        n = len(word.strip("'\"").rstrip(":;,.)").strip("'\""))     # the value itself: no quotes, no ": ..."
        return f"{word[:160]}...({n} characters)...{word[-60:]}"

    return _LONG.sub(cut, text)


if __name__ == "__main__":  # pragma: no cover
    main()
