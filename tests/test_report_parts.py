"""A compare row's mitigation is decided once, as parts (fanin.report.view.mitigation_parts), and both renderers
say the same words: Markdown and HTML differ only in how they mark a link and a legend term."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from report_helpers import info, obs, result_set, write

from fanin.model import matrix
from fanin.model.mitigations import Entry, Proof
from fanin.report import build, html_compare, markdown
from fanin.report.legend import NO_PROVEN_MITIGATION
from fanin.report.view import CompareGroup, Report, Step, mitigation_parts

ENTRY = Entry("copy | the state first", "https://example.org/how", "adk/t/a-mitigated")
PROOFS = {
    "none": None,
    "proven": Proof("adk/t/a", "1.1", ENTRY, obs("safe", "kept")),
    "not proven": Proof("adk/t/a", "1.1", ENTRY, obs("silent", "lost")),
    "no entry": Proof("adk/t/a", "1.1", None),
}


@pytest.fixture(scope="module")
def rep(tmp_path_factory: pytest.TempPathFactory) -> Report:
    results = tmp_path_factory.mktemp("results")
    write(results, result_set("adk-1.1", {"adk/t/a": obs("safe", "kept")}, [info("adk/t/a")]))
    return build.build(results, matrix.load(), reference=True)


def _words_md(text: str) -> str:
    return re.sub(r"\[`([^\]`]*)`\]\([^)]*\)", r"\1", text).replace("\\|", "|")


def _words_html(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


@pytest.mark.parametrize("name", PROOFS)
def test_both_renderers_say_the_parts_words(name: str, rep: Report) -> None:
    proof = PROOFS[name]
    group = CompareGroup("adk/t/a", ("adk/t/a",), Step("adk/t/a", None, None, None, None, "regression", True, (), ()))
    group = dataclasses.replace(group, proof=proof)
    words = "".join(p.text for p in mitigation_parts(proof))
    assert _words_md(markdown.mitigation_text(rep, group, "compare/x.md")) == " ".join(words.split())
    assert _words_html(html_compare.mitigation_cell(rep, group, "compare/x.html")) == words


def test_an_unproven_mitigation_marks_the_legend_term_and_links_the_probe_that_would_prove_it() -> None:
    parts = mitigation_parts(PROOFS["not proven"])
    assert parts[0].text == NO_PROVEN_MITIGATION and parts[0].kind == "term"
    assert [p.text for p in parts if p.kind == "probe"] == ["adk/t/a-mitigated"]
    assert parts[-1].text == ENTRY.text  # suggested
