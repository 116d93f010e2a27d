"""The documentation site: its generated pages say what the specs and the parser say, and stay current.

``docs/benchmarks/<family>.md`` and ``docs/cli.md`` are rendered by :mod:`negplugins.docs_pages` and committed; these
tests fail when one is stale (``python -m negplugins.docs_pages --write`` refreshes them), when a page leaves out a
fact of its spec or an option of the command line, or when a page is missing from the site's navigation. CI builds
the site itself with ``mkdocs build --strict`` (``.ci/run``), which fails on a broken link or anchor.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from ir_datasets_ext.spec import benchmarks
from negplugins import docs_pages
from negplugins.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _sections(text: str) -> dict[str, str]:
    """``{heading: body}`` of a page's ``#``-headings."""
    parts = re.split(r"^#+ (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_committed_pages_are_current():
    stale = docs_pages.stale_pages(ROOT)
    assert stale == [], f"run 'python -m negplugins.docs_pages --write': stale {stale}"


def test_stale_and_write_pages_on_a_copy(tmp_path, capsys):
    for name in ("README.md", "docs/evaluation.md", "docs/report-card.md", "docs/mteb.md", "mkdocs.yml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "docs" / "benchmarks").mkdir()
    (tmp_path / "docs" / "benchmarks" / "gone.md").write_text("# a page no spec renders\n", encoding="utf-8")
    expected = sorted([*docs_pages.generated_pages(), "docs/benchmarks/gone.md"])
    assert sorted(docs_pages.stale_pages(tmp_path)) == expected
    assert docs_pages.main(["--root", str(tmp_path)]) == 1 and "docs/cli.md" in capsys.readouterr().err
    assert sorted(docs_pages.write_pages(tmp_path)) == sorted(docs_pages.generated_pages())
    assert docs_pages.stale_pages(tmp_path) == ["docs/benchmarks/gone.md"]  # never removed: a file of yours
    (tmp_path / "docs" / "benchmarks" / "gone.md").unlink()
    assert docs_pages.main(["--root", str(tmp_path)]) == 0 and docs_pages.write_pages(tmp_path) == []
    assert (tmp_path / "README.md").read_bytes() == (ROOT / "README.md").read_bytes()


def test_the_sites_benchmark_entries_are_rendered_from_the_specs():
    site = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert docs_pages.site_nav(site) == site
    assert docs_pages.site_nav(site.replace("      - NevIR: benchmarks/nevir.md\n", "")) == site
    with pytest.raises(ValueError, match="benchmark pages"):
        docs_pages.site_nav(site.replace("# /benchmark pages", ""))


def _commands(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] == name:
                    yield from _commands(sub)


def test_the_cli_reference_lists_every_command_and_option():
    sections = _sections((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    commands = list(_commands(build_parser()))
    assert len(commands) >= 20  # topics ... benchmark, the search runners, leaderboard and BEIR subcommands
    for parser in commands:
        assert parser.prog in sections, f"no section for {parser.prog}"
        body = sections[parser.prog]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or \
                    action.help == argparse.SUPPRESS:  # hidden from --help too (search dense's old --encoder)
                continue
            for option in action.option_strings or [action.dest]:
                assert f"`{option}`" in body, f"{parser.prog}: {option} is not documented"
            if action.help and "%" not in action.help:
                assert docs_pages._cell(action.help) in body, f"{parser.prog}: help of {action.dest}"


def _reported_cells(section: str) -> dict:
    """``{(dataset, measure, subset, system): value}`` read back from a page's tables of the paper's numbers."""
    cells, caption, header = {}, None, None
    for line in section.splitlines():
        if line.startswith("`") and line.endswith(":"):
            caption, header = re.findall(r"`([^`]+)`", line), None
        elif line.startswith("| system |"):
            header = [cell.strip().strip("`") for cell in line.strip("|").split("|")][1:]
        elif line.startswith("| ") and header is not None:
            system, *values = [cell.strip() for cell in line.strip("|").split("|")]
            for column, value in zip(header, values, strict=True):
                if value == "–":
                    continue
                if len(caption) == 1:  # a column per measure
                    key = (caption[0], column, None, system)
                else:  # a column per subset of one measure
                    key = (caption[0], caption[1], None if column == "all" else column, system)
                assert key not in cells, key
                cells[key] = value
    return cells


def test_a_benchmark_page_says_what_its_spec_says():
    for spec in benchmarks():
        text = (ROOT / "docs" / "benchmarks" / f"{spec.name}.md").read_text(encoding="utf-8")
        sections = _sections(text)
        assert text.startswith(f"# {spec.title}\n")
        for measure in spec.measures.names:
            assert f"`{measure}`" in sections["Measures and protocol"], (spec.name, measure)
        for subset in spec.breakdown.subsets:
            assert f"`{subset}`" in sections["Measures and protocol"]
        cells = _reported_cells(sections["Numbers reported in the paper"])
        assert len(cells) == len(spec.paper.reported), spec.name  # one cell per number, none left out or repeated
        for number in spec.paper.reported:
            key = (number.dataset, number.measure, number.subset, docs_pages._cell(number.system))
            assert cells[key] == number.printed, (spec.name, key)
        if spec.data.url:
            assert spec.data.url in sections["Data sources"]
        for system, note in spec.paper.reproduction_notes.items():
            assert docs_pages._cell(note) in sections["Known differences from the authors"], (spec.name, system)
        citation = spec.citation()
        assert (citation in text) if citation else "## Citation" not in text


def test_the_comlq_page_counts_and_fields():
    """ComLQ's page, checked against the release's counts (docs/formats.md, the dataset tests) and its records."""
    sections = _sections((ROOT / "docs" / "benchmarks" / "comlq.md").read_text(encoding="utf-8"))
    assert "| `comlq` | docs: 11251, queries: 2909, qrels: 4601 |" in sections["Dataset ids"]
    assert "| `comlq/pni` | docs: 11251, queries: 122," in sections["Dataset ids"]
    fields = sections["Fields"]
    assert "`origin` (str)" in fields and "`has_negation` (bool)" in fields and "`structure` (str)" in fields
    assert "| 2 | Evidence passage that alone holds all the evidence" in fields
    assert "BM25 (Pyserini defaults: Lucene, k1 0.9, b 0.4); " in sections["Measures and protocol"]  # a baseline
    assert "**BM25: not reproduced here.**" in sections["Known differences from the authors"]


def test_every_page_is_in_the_navigation():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav):
        for entry in nav:
            for value in entry.values():
                yield from pages(value) if isinstance(value, list) else [value]

    listed = list(pages(config["nav"]))
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)


def test_the_readme_fits_on_a_screen_and_links_into_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    linked = set(re.findall(r"\]\(docs/([\w/-]+\.md)\)", text))
    top_level = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert top_level <= linked, f"pages the README does not link: {sorted(top_level - linked)}"


@pytest.fixture
def read_only_folder():
    """``make(folder, files)``: ``folder`` as a read-only tmpfs holding ``files`` (``EROFS`` for root as for anyone),
    unmounted after the test; skips where mounting is not allowed."""
    import subprocess

    mounted = []

    def make(folder: Path, files: dict[str, bytes]) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(folder)
        for name, data in files.items():
            (folder / name).write_bytes(data)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        return folder

    yield make
    for folder in mounted:
        subprocess.run(["umount", str(folder)], check=True)

def test_an_unwritable_pages_folder_is_one_line(tmp_path, capsys, read_only_folder):
    for name in ("README.md", "docs/evaluation.md", "docs/report-card.md", "docs/mteb.md", "mkdocs.yml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    read_only_folder(tmp_path / "docs" / "benchmarks", {})
    assert docs_pages.main(["--write", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m negplugins.docs_pages: error: {tmp_path}/docs/benchmarks/")
    assert "read-only file system" in err and err.count("\n") == 1


def test_an_unwritable_block_file_is_one_line(tmp_path, capsys, read_only_folder):
    from negplugins import doc_blocks

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stale = readme.replace("<!-- /benchmarks -->", "a stale line\n<!-- /benchmarks -->", 1)
    folder = read_only_folder(tmp_path / "ro", {"README.md": stale.encode("utf-8")})
    assert doc_blocks.main(["--write", str(folder / "README.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m negplugins.doc_blocks: error: {folder / 'README.md'}: ")
    assert "read-only file system" in err and err.count("\n") == 1
