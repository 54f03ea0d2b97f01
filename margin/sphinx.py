"""Margin in Sphinx and Jupyter Book 1: the published book shows the computed values, and a wrong number fails the build.

Add ``margin.sphinx`` to ``extensions`` (Jupyter Book 1:
``sphinx: extra_extensions: [margin.sphinx]`` in ``_config.yml``), with
myst-parser reading the Markdown.  Each Markdown page is analysed by Margin
as it is read, and then:

* a ``{calc}`t -> days``` role becomes its value (``22.5 days``, in the unit
  the author asked for); a role without a value is a warning at its line and
  shows its expression as code, never an empty gap;
* calc blocks (```` ```calc ````, ```` ```{calc} ````, ``:::{calc}``) show each
  statement's value and each check's verdict as trailing comments, as the
  editor's inlay hints do (the ``{calc}`` directive is registered here);
* problems get a badge: passed, failed (with its count) or untested;
* every error Margin finds (a failing check, an unknown name, …) is a Sphinx
  warning at ``file:line`` of type ``margin.<code>`` (``-W`` fails the build;
  ``suppress_warnings = ["margin.C001"]`` silences a code); with
  ``margin_fail_on = "error"`` they are errors and the build exits 1 even
  without ``-W`` (unchanged pages' errors still count); ``"none"`` only logs them.

The ``calc`` Pygments lexer (:mod:`margin.pygments_calc`) is registered too.
Settings come from the nearest ``margin.toml`` or ``[tool.margin]`` above the
source folder, as for ``margin check``.  docs/publishing.md has the set-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.config import Config as SphinxConfig
from sphinx.errors import SphinxError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from scaling_core import DocumentAnalysis, ImportContext, ProblemResult, Severity, __version__, analyze_document
from scaling_core.publish import CalcBlock, InlineRole, roles_and_blocks
from server.workspace import find_project, make_loader

logger = logging.getLogger(__name__)

FAIL_ON = ("warning", "error", "none")
_STATIC = Path(__file__).parent / "static"
_BADGE = {"pass": "✓ passed", "fail": "✗ failed", "untested": "untested"}
#: The Markdown suffixes Margin reads (notebooks and reStructuredText are left alone).
_MARKDOWN = (".md", ".markdown")


class MarginSettingError(SphinxError):
    """A Margin setting in ``conf.py`` has a value it does not take."""

    category = "Margin"


@dataclass
class Page:
    """One Markdown page's analysis, and which of its roles and blocks the parser has met so far."""

    analysis: DocumentAnalysis
    roles: list[InlineRole]
    blocks: list[CalcBlock]
    used_roles: set[int] = field(default_factory=set)
    used_blocks: set[int] = field(default_factory=set)

    def take_role(self, expr: str, line: int) -> InlineRole | None:
        """The next role written ``{calc}`expr``` at or after ``line`` (the parser gives its paragraph's line)."""
        candidates = [i for i, r in enumerate(self.roles) if i not in self.used_roles and r.expr == expr]
        after = [i for i in candidates if self.analysis.line(self.roles[i].span.start) >= line]
        if not (after or candidates):
            return None
        chosen = (after or candidates)[0]
        self.used_roles.add(chosen)
        return self.roles[chosen]

    def take_block(self, source: str) -> CalcBlock | None:
        """The next visible calc block whose content is ``source``."""
        for i, block in enumerate(self.blocks):
            if i not in self.used_blocks and not block.hidden and block.source.strip() == source.strip():
                self.used_blocks.add(i)
                return block
        return None


def _page(env: Any) -> Page | None:
    page = env.temp_data.get("margin_page")
    return page if isinstance(page, Page) else None


def _report(app: Sphinx, docname: str, analysis: DocumentAnalysis, skip: list[InlineRole]) -> None:
    """Log the page's errors at file:line as ``margin_fail_on`` says (role errors are logged by the role)."""
    fail_on = app.config.margin_fail_on
    failures = 0
    for diagnostic in analysis.diagnostics:
        if diagnostic.severity is not Severity.ERROR:
            continue
        if any(r.value is None and r.span.start <= diagnostic.span.start < r.span.end for r in skip):
            continue
        failures += 1
        line = analysis.line(diagnostic.span.start)
        message = diagnostic.message  # Sphinx adds the type: [margin.C001]
        if fail_on == "none":
            logger.info(f"{app.env.doc2path(docname)}:{line}: margin {diagnostic.code}: {message}")
        else:
            log = logger.error if fail_on == "error" else logger.warning
            log(message, location=(docname, line), type="margin", subtype=diagnostic.code)
    _errors(app.env)[docname] = failures


def _errors(env: Any) -> dict[str, int]:
    """Each page's count of Margin errors, kept in the environment (so unchanged pages still count)."""
    if not isinstance(getattr(env, "margin_errors", None), dict):
        env.margin_errors = {}
    errors: dict[str, int] = env.margin_errors
    return errors


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    _errors(env).pop(docname, None)


def _merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    """``env-merge-info``: a parallel reader's counts."""
    _errors(env).update({name: count for name, count in _errors(other).items() if name in docnames})


def _finish(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: with ``margin_fail_on = "error"``, a page with an error fails the build (exit 1)."""
    total = sum(_errors(app.env).values())
    if exception is None and total and app.config.margin_fail_on == "error":
        logger.error(f"margin: {total} error{'s' * (total != 1)} in the book (margin_fail_on = 'error')")
        app.statuscode = 1


def read_source(app: Sphinx, docname: str, source: list[str]) -> None:
    """``source-read``: analyse a Markdown page before it is parsed (its roles and blocks look their values up)."""
    path = Path(app.env.doc2path(docname))
    if path.suffix.lower() not in _MARKDOWN:
        return
    project = find_project(path, None)
    context = ImportContext(make_loader(project))
    analysis = analyze_document(source[0], path.as_posix(), project.config, context=context)
    roles, blocks = roles_and_blocks(analysis)
    app.env.temp_data["margin_page"] = Page(analysis, roles, blocks)
    _report(app, docname, analysis, roles)


def calc_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{calc}`expr```: the value Margin computed, in the unit the author asked for."""
    env = inliner.document.settings.env
    page = _page(env)
    expr = text.strip()
    role = page.take_role(expr, lineno) if page is not None else None
    if role is not None and role.value is not None:
        return [nodes.inline(rawtext, role.value.display, classes=["margin-value"])], []
    if page is None:
        reason, line = "Margin reads Markdown pages only (myst-parser)", lineno
    elif role is None:
        reason, line = "Margin did not find this role in the page's source", lineno
    else:
        reason, line = role.reason or "no value", page.analysis.line(role.span.start)
    message = f"{{calc}}`{expr}` has no value: {reason}"
    _errors(env)[env.docname] = _errors(env).get(env.docname, 0) + 1
    fail_on = env.app.config.margin_fail_on
    if fail_on == "none":
        logger.info(f"{env.doc2path(env.docname)}:{line}: margin: {message}")
    else:
        log = logger.error if fail_on == "error" else logger.warning
        log(message, location=(env.docname, line), type="margin", subtype="role")
    return [nodes.literal(rawtext, expr, classes=["margin-value", "margin-unevaluated"])], []


class CalcDirective(SphinxDirective):
    """```` ```{calc} ```` and ``:::{calc}``: a calc block, shown with its values (see :func:`annotate`)."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {
        "label": directives.unchanged,
        "name": directives.unchanged,
        "class": directives.class_option,
    }

    def run(self) -> list[nodes.Node]:
        """A ``calc`` literal block; ``doctree-read`` adds the values."""
        source = "\n".join(self.content)
        node = nodes.literal_block(
            source, source, language="calc", classes=["margin-calc", *self.options.get("class", [])]
        )
        self.set_source_info(node)
        self.add_name(node)
        return [node]


def annotate(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: calc blocks get their values as trailing comments, problems their badges."""
    page = _page(app.env)
    if page is None:
        return
    for block_node in list(doctree.findall(nodes.literal_block)):
        if block_node.get("language") not in ("calc", "margin"):
            continue
        block = page.take_block(block_node.astext())
        if block is None:
            continue
        rendered = block.rendered if app.config.margin_block_values else block.source
        block_node.children = []
        block_node += nodes.Text(rendered)
        block_node.rawsource = rendered
        block_node["classes"] = [*block_node["classes"], "margin-calc"]
    for problem in page.analysis.problems:
        _badge(page.analysis, problem, doctree)


def _badge(analysis: DocumentAnalysis, problem: ProblemResult, doctree: nodes.document) -> None:
    """Put the problem's status at the start of its title paragraph (or of its directive's first paragraph)."""
    title_line = analysis.line(problem.title_span.start)
    text = _BADGE[problem.status]
    if problem.status == "fail":
        text += f": {problem.failed} of {problem.total} checks" if problem.failed else ""
    badge = nodes.inline("", text, classes=["margin-badge", f"margin-{problem.status}"])
    badge["title"] = problem.title
    for node in doctree.findall(nodes.Element):
        if node.line is None or node.line < title_line or isinstance(node, (nodes.document, nodes.section)):
            continue
        if node.line > title_line + 4:
            return  # nothing at the title: no badge rather than a badge in the wrong place
        if isinstance(node, nodes.paragraph) and node.line == title_line:  # a lead-in: **Question 1:** …
            node.insert(0, nodes.Text(" "))
            node.insert(0, badge)
            return
        if isinstance(node, (nodes.Admonition, nodes.container, nodes.topic)) or node.tagname.endswith("_node"):
            first = next(iter(node.findall(nodes.paragraph)), None)  # a directive: its first paragraph
            if first is not None:
                first.insert(0, nodes.Text(" "))
                first.insert(0, badge)
            return


def _static_path(app: Sphinx, config: SphinxConfig) -> None:
    """``config-inited``: the badges' and values' style sheet."""
    config.html_static_path.append(str(_STATIC))


def _check_setting(app: Sphinx, config: SphinxConfig) -> None:
    if config.margin_fail_on not in FAIL_ON:
        raise MarginSettingError(f"margin_fail_on = {config.margin_fail_on!r}: use one of {', '.join(FAIL_ON)}")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the ``calc`` role, directive and lexer, the reading hooks and the settings."""
    from margin.pygments_calc import CalcLexer

    app.add_config_value("margin_fail_on", "warning", "env", [str])
    app.add_config_value("margin_block_values", True, "env", [bool])
    app.add_role("calc", calc_role)
    app.add_directive("calc", CalcDirective)
    app.add_lexer("calc", CalcLexer)
    app.connect("config-inited", _check_setting)
    app.connect("config-inited", _static_path)
    app.connect("source-read", read_source)
    app.connect("doctree-read", annotate)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _finish)
    app.add_css_file("margin.css")
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
