"""Every document the code, the tests, the README and the docs cite is in the repository (docs/*.md, README.md, ...)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "negplugins").rglob("*.py")), *sorted((ROOT / "ir_datasets_ext").rglob("*.py")),
           *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "benchmarks").rglob("*.py")),
           ROOT / "_negplugins_autoload.py", ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
           ROOT / "mkdocs.yml"]
SOURCES.remove(Path(__file__).resolve())  # its examples below cite missing files on purpose
# a cited document: docs/<name>.md, or a file name in capitals such as README.md or METRICS.md
CITED = re.compile(r"(?<![\w./-])(/?(?:\.\.?/|[\w-]+/)*(?:docs/[\w-]+|[A-Z][A-Z_]+)\.md)\b")
#: The suite's reference material (papers, data and their provenance), beside the checkout where tests and CI read it.
SHARED = "../shared/"
MARKDOWN_LINK = re.compile(r"\]\(((?!https?:|#)[^)#\s]+)")


def _citations():
    for path in SOURCES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in CITED.finditer(line):
                yield path, number, match.group(1)
            if path.suffix == ".md":
                for match in MARKDOWN_LINK.finditer(line):
                    yield path, number, str((path.parent / match.group(1)).resolve().relative_to(ROOT))


def _in_repository(path: Path) -> bool:
    path = path.resolve()
    return path.is_relative_to(ROOT) and path.exists()


def _exists(cited: str, source: Path) -> bool:
    """A path is looked up from the root and from the citing file's folder, a bare name anywhere one level down."""
    if cited.startswith("/"):
        return False  # a machine's absolute path is not in the repository
    if cited.startswith(SHARED):
        return (ROOT / cited).resolve().is_file()  # the reference material beside the checkout, as tests and CI read it
    if "/" in cited:
        return _in_repository(ROOT / cited) or _in_repository(source.parent / cited)
    return _in_repository(ROOT / cited) or any(ROOT.glob(f"*/{cited}"))


def test_the_checker_sees_the_citations():
    cited = {c for _, _, c in _citations()}
    assert {"docs/measures.md", "docs/formats.md", "docs/toolchain.md", "README.md"} <= cited
    assert CITED.findall("see ../shared/METRICS.md, /work/shared/FORMATS.md, not measures.md") == [
        "../shared/METRICS.md", "/work/shared/FORMATS.md"]
    assert not _exists("../shared/NO_SUCH.md", ROOT / "tests" / "x.py") and _exists("runs/README.md", ROOT / "x.py")
    assert _exists("../shared/METRICS.md", ROOT / "tests" / "x.py") == (ROOT.parent / "shared" / "METRICS.md").is_file()


def test_every_cited_document_is_in_the_repository():
    missing = [f"{path.relative_to(ROOT)}:{number}: {cited}" for path, number, cited in _citations()
               if not _exists(cited, path)]
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)
