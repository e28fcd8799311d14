"""The command-line reference: sphinx-argparse's ``.. argparse::`` with ``.. option::`` entries.

sphinx-argparse renders a parser, its subcommands and their argument groups from the live
argparse parser (``docs/cli.md`` points it at ``sparsenet.cli.main.build_parser``), but writes
each argument as a plain docutils option list: no anchor, no index entry, nothing the search
finds. This extension registers a subclass of its directive under the same name that replaces
each of those lists by standard ``.. option::`` entries under ``.. program:: sparsenet <command>``,
so every option has an anchor (``#cmdoption-sparsenet-train-features``), an index and search
entry, and can be cross-referenced (``:option:`sparsenet train --features```).

An entry's signature is the option as ``--help`` shows it (``-n N, --nproc N``,
``--index-base {0,1,auto}``); its text is the argument's help, exactly as ``--help`` prints it
(plain text: the help is written for the terminal), then the choices, when argparse has them.

The descriptions and epilogs (``examples:`` blocks) are terminal text too: sphinx-argparse
parses them as reStructuredText, with a bare docutils parser whose complaints go to stderr
outside Sphinx's warning control, so this extension gives them :func:`terminal_text` instead:
paragraphs as written and indented lines (the examples) as literal blocks, as ``--help``
shows them. The directive is used from reStructuredText (``{eval-rst}`` in ``docs/cli.md``):
its option entries are parsed as reStructuredText.
"""
import argparse
import importlib
import re
import textwrap

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util.parsing import nested_parse_to_nodes
import sphinxarg.ext
from sphinxarg.ext import ArgParseDirective
from sphinxarg.utils import command_pos_args


def option_signature(parser, action):
    """Return the ``.. option::`` signature of ``action``, as ``--help`` spells it.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser that holds the action (its formatter names the metavars).
    action : argparse.Action
        The argument.

    Returns
    -------
    str
        ``"-n N, --nproc N"``, ``"--verbose"``, or the positional's metavar (``"DATA"``).
    """
    formatter = parser._get_formatter()
    if not action.option_strings:
        default = formatter._get_default_metavar_for_positional(action)
        return formatter._metavar_formatter(action, default)(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    args = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(f"{option} {args}" for option in action.option_strings)


def parser_actions(parser, prog):
    """Map each command's full name to its actions by their first name in sphinx-argparse's data.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The top-level parser.
    prog : str
        Its program name (``"sparsenet"``).

    Returns
    -------
    dict
        ``{"sparsenet train": {"--features": (subparser, action), ...}, ...}``.
    """
    table = {}
    todo = [(prog, parser)]
    while todo:
        name, current = todo.pop()
        entries = table.setdefault(name, {})
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", subparser)
                         for sub, subparser in action.choices.items()]
            key = (action.option_strings or [action.metavar or action.dest])[0]
            entries[key] = (current, action)
    return table


def _plain(text):
    """A paragraph of ``text`` as the terminal shows it: no ``--`` to dash, no curly quotes."""
    paragraph = nodes.paragraph(text, text)
    paragraph["support_smartquotes"] = False
    return paragraph


def _paragraphs(text):
    return [_plain(block) for block in (part.strip() for part in text.split("\n\n")) if block]


def terminal_text(text):
    """Return the nodes of a description or epilog written for the terminal.

    Parameters
    ----------
    text : str
        argparse text (``RawDescriptionHelpFormatter``): paragraphs separated by blank lines,
        indented lines for examples.

    Returns
    -------
    list of docutils.nodes.Node
        A paragraph per paragraph, a literal block per run of indented lines.
    """
    result = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.splitlines()
        first_indented = next((i for i, line in enumerate(lines) if line[:1].isspace()), None)
        prose = lines if first_indented is None else lines[:first_indented]
        if prose:
            joined = "\n".join(line.strip() for line in prose)
            result.append(_plain(joined))
        if first_indented is not None:
            code = textwrap.dedent("\n".join(lines[first_indented:]))
            block_node = nodes.literal_block(code, code)
            block_node["language"] = "text"
            result.append(block_node)
    return result


def _render_list(items, markdown_help, settings=None):
    """sphinx-argparse's ``render_list``, for terminal text (see the module docstring)."""
    result = []
    for item in items:
        result += terminal_text(item) if isinstance(item, str) else list(item)
    return result


class ArgParseOptionsDirective(ArgParseDirective):
    """sphinx-argparse's ``argparse`` directive whose arguments are ``.. option::`` entries."""

    def run(self):
        module = importlib.import_module(self.options["module"])
        parser = getattr(module, self.options["func"])()
        prog = self.options.get("prog", parser.prog)
        self._actions = parser_actions(parser, prog)
        return super().run()

    def _nested_parse_paragraph(self, text):
        container = nodes.container()
        container += terminal_text(text)
        return container

    def _print_action_groups(self, data, nested_content, markdown_help=False, settings=None,
                             id_prefix=""):
        sections = super()._print_action_groups(data, nested_content, markdown_help,
                                                settings=settings, id_prefix=id_prefix)
        program = command_pos_args(data).strip()
        groups = data.get("action_groups", [])
        for section, group in zip(sections, groups):
            for option_list in list(section.findall(nodes.option_list)):
                option_list.replace_self(self._options(program, group["options"]))
        return sections

    def _options(self, program, entries):
        """The ``.. option::`` entries of one argument group of ``program``."""
        actions = self._actions[program]
        lines = [f".. program:: {program}", ""]
        for entry in entries:
            parser, action = actions[entry["name"][0]]
            lines += [f".. option:: {option_signature(parser, action)}", ""]
        parsed = nested_parse_to_nodes(self.state, StringList(lines, source=f"<{program}>"))
        descs = [node for node in parsed if isinstance(node, addnodes.desc)]
        for entry, desc in zip(entries, descs):
            content = next(desc.findall(addnodes.desc_content))
            content += _paragraphs(entry.get("help", ""))
            if "choices" in entry:
                choices = ", ".join(str(choice) for choice in entry["choices"])
                content += _plain(f"Possible choices: {choices}")
        return parsed


def setup(app):
    sphinxarg.ext.render_list = _render_list  # descriptions and epilogs: terminal_text
    app.setup_extension("sphinxarg.ext")
    app.add_directive("argparse", ArgParseOptionsDirective, override=True)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
