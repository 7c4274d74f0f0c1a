"""The README and docs carry tables rendered from data (they must be current), and the
Quickstart the README promises."""
from conftest import ROOT

from codemods.tf2.optimizer_table import render_markdown


def test_migrate_tf2_doc_optimizer_table_is_rendered_from_the_table():
    doc = (ROOT / "docs" / "migrate-tf2.md").read_text()
    assert render_markdown() in doc


def test_readme_quickstart_has_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = quickstart.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1].split("&&")[-1].strip().replace(".venv/bin/python", "").strip() in ci
