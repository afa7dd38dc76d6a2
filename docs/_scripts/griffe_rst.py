"""A griffe extension: the package's docstrings as mkdocstrings renders them best.

- reST roles (``:func:`name```, ``:class:``, ``:mod:``, ``:meth:``, ``:data:``, ``:attr:``)
  become cross-references when the name resolves to a public object of the package, inline code
  otherwise (mkdocstrings renders docstrings as Markdown, where a role would show as text);
- ``#:`` comments above a module or class attribute (Sphinx's convention, used by the package)
  become that attribute's docstring;
- a parameter written ``name : description`` on one line (the short form several selectors
  use) is read as a description, not as a type; a free sentence inside a Parameters section
  joins the item above it;
- reST literal-block markers (a paragraph ending in ``::``, ``.. code-block::``) are dropped:
  the indented block that follows is a code block in Markdown as it is.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|obj|exc):`(~?)([^`]+)`")
SECTIONS = ("Parameters", "Other Parameters", "Attributes")
ITEM = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*:\s*(.*)$")
NAMES_ONLY = re.compile(r"^\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*$")
#: reST's literal-block marker at the end of a paragraph ("Eq. (3)::" -> "Eq. (3):").
LITERAL = re.compile(r"[ \t]*::$", re.M)
#: A reST code-block directive line (its indented body stays, as a Markdown code block).
CODE_BLOCK = re.compile(r"^[ \t]*\.\. code-block::.*\n", re.M)
#: A parenthesis a type may hold: a shape such as (n, d) or an interval after "in".
TYPE_PAREN = re.compile(r"(?:shape|in)\s*[(\[][^)\]]*[)\]]|\((?:[A-Za-z_]\w*\s*,?\s*)+\)")


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def _lookup(scope: griffe.Object, name: str) -> griffe.Object:
    if name.startswith("ufsbench"):
        return scope.modules_collection[name]
    first, *rest = name.split(".")
    target = scope.get_member(first) if first in scope.all_members else None
    if target is None:
        raise KeyError(name)
    for part in rest:
        target = target.get_member(part)
    return target


def _resolve(obj: griffe.Object, name: str) -> str | None:
    """The canonical path of ``name`` seen from ``obj``'s scopes, if it is a public object."""
    name = name.strip().removesuffix("()")
    scope: griffe.Object | None = obj
    while scope is not None:
        try:
            path = _lookup(scope, name).canonical_path
        except (KeyError, AttributeError, ValueError, griffe.AliasResolutionError,
                griffe.CyclicAliasError):
            scope = scope.parent
            continue
        return path if _public(path) else None
    return None


def _role(obj: griffe.Object, match: re.Match) -> str:
    short, name = match.group(1), match.group(2)
    shown = name.split(".")[-1] if short else name
    path = _resolve(obj, name)
    return f"[`{shown}`][{path}]" if path else f"`{shown}`"


def _is_prose(text: str) -> bool:
    """Whether the text after ``name :`` is a description rather than a type."""
    text = text.strip()
    if not text:
        return False
    return (text.endswith((".", ":", ",", " or")) or "; " in text or bool(re.search(r"\bthe\b", text))
            or "(" in TYPE_PAREN.sub("", text))


def _section_items(lines: list[str]) -> list[str]:
    """Rewrite the items of numpydoc Parameters-like sections (see the module docstring)."""
    out: list[str] = []
    in_section = False
    for i, line in enumerate(lines):
        header = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        if header or set(line.strip()) == {"-"}:
            in_section = line.strip() in SECTIONS if header else in_section
            out.append(line)
            continue
        if not in_section or not line.strip() or line.startswith((" ", "\t")):
            out.append(line)
            continue
        item = ITEM.match(line)
        if item and NAMES_ONLY.match(item.group(1)) and _is_prose(item.group(2)):
            out += [item.group(1), f"    {item.group(2)}"]
        elif item or NAMES_ONLY.match(line.strip()):
            out.append(line)
        else:                                   # a sentence: part of the item above it
            out.append(f"    {line}")
    return out


def _attribute_comment(attr: griffe.Attribute) -> str | None:
    """The ``#:`` comment lines right above an attribute's assignment, joined."""
    try:
        lines = attr.lines_collection[attr.filepath]
    except (KeyError, TypeError, AttributeError):
        return None
    if not attr.lineno or attr.lineno > len(lines):
        return None
    comment = []
    row = attr.lineno - 2
    while row >= 0 and lines[row].lstrip().startswith("#:"):
        comment.insert(0, lines[row].lstrip()[2:].strip())
        row -= 1
    return " ".join(comment) or None


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        for obj in _walk(pkg):
            if obj.is_attribute and obj.docstring is None:
                text = _attribute_comment(obj)
                if text:
                    obj.docstring = griffe.Docstring(text, lineno=obj.lineno, parent=obj)
            if obj.docstring is None:
                continue
            value = ROLE.sub(lambda m, o=obj: _role(o, m), obj.docstring.value)
            value = CODE_BLOCK.sub("", LITERAL.sub(":", value))
            obj.docstring.value = "\n".join(_section_items(value.split("\n")))


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)
