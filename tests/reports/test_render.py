"""The report rendered once to Markdown and HTML: a plugin's text never starts a heading, a
list or a link, and a traceback stays inside its fence."""

from __future__ import annotations


def test_a_traceback_holding_a_code_fence_stays_inside_report_mds_fence():
    from markdown_it import MarkdownIt

    from harness.claims.verdicts import Status, Verdict
    from harness.reports.render import Document, render

    attack = "```\n# Injected\n[click](javascript:alert(1))\n<img src=x onerror=alert(1)>\n````"
    verdict = Verdict(
        claim="broken-claim", task="toy", source="s", statement="s", hypothesis="> 0",
        unit="seed", status=Status.ERROR, reason=f"Traceback ...\nValueError: {attack}",
    )  # fmt: skip
    md, _ = render(Document(f"toy {attack}", "1 ok", "", verdicts=[verdict]))
    tokens = MarkdownIt("commonmark").parse(md)
    every = [t for block in tokens for t in [block, *(block.children or [])]]
    assert not [t for t in every if t.type in ("html_block", "html_inline", "link_open")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if h.startswith("Injected")], headings
    fences = [t for t in tokens if t.type == "fence"]
    assert attack in fences[0].content


def test_markdown_text_never_starts_a_heading_a_list_or_a_link():
    from harness.reports.render import fenced, markdown_cell, markdown_text

    assert markdown_text("# title") == "\\# title"
    assert markdown_text("1. first") == "1\\. first"
    assert markdown_text("- item\n[x](javascript:y)") == "\\- item \\[x\\](javascript:y)"
    assert markdown_cell("a|b <b>") == "a\\|b \\<b\\>"
    assert fenced("x ``` y ````z").startswith("`````text\n")
