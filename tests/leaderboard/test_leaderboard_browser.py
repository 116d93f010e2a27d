"""The leaderboard page in a real headless browser (Debian's Chromium): click a header, read the order back."""

import shutil
import tempfile
from pathlib import Path

import pytest

from negplugins.io.sidecars import write_metadata
from negplugins.leaderboard import build

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

RANKINGS = {  # three systems with distinct nDCG@10 and RR@10 orders
    "alpha": {"q01": ["d01", "d02"], "q02": ["d03"], "q03": ["d06"], "q04": ["d07"]},
    "beta": {"q01": ["d02", "d01"], "q02": ["d04", "d03"]},
    "gamma": {"q01": ["d01"], "q02": ["d04", "d03"], "q03": ["d05", "d06"]},
}


@pytest.fixture(scope="module")
def driver():
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.skip(f"Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}); apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="negplugins-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_click_header_sorts(driver, tmp_path, trec):
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    for name, ranking in RANKINGS.items():
        path = trec(runs / "negplugins-demo" / f"{name}.trec", ranking)
        write_metadata(path, dataset="negplugins-demo", runner="external", system=f"<b>{name}</b>", tag="t",
                       parameters={})
    build(runs, tmp_path / "out")
    driver.get((tmp_path / "out" / "negplugins-demo.html").as_uri())
    table = driver.find_element(By.ID, "leaderboard")

    def order():
        return [row.get_attribute("data-run") for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]

    def column(title):
        headers = table.find_elements(By.CSS_SELECTOR, "thead th")
        return next(h for h in headers if h.text.strip().startswith(title))

    import json

    record = json.loads((tmp_path / "out" / "negplugins-demo.json").read_text())
    ndcg = {r["name"]: r["overall"]["nDCG@10"] for r in record["runs"]}
    rr = {r["name"]: r["overall"]["RR@10"] for r in record["runs"]}
    assert order() == sorted(ndcg, key=lambda n: (-ndcg[n], n))  # built sorted by the primary measure
    column("Run").click()
    assert order() == ["alpha", "beta", "gamma"]
    assert column("Run").get_attribute("aria-sort") == "ascending"
    column("Run").click()
    assert order() == ["gamma", "beta", "alpha"]
    column("RR@10").click()  # numbers: highest first
    assert [rr[n] for n in order()] == sorted(rr.values(), reverse=True)
    column("RR@10").click()
    assert [rr[n] for n in order()] == sorted(rr.values())
    # the system name was escaped: shown as text, not markup
    assert "<b>alpha</b>" in table.text


def test_reported_rows_stay_apart_when_sorting(driver, tmp_path, trec):
    """The paper's numbers: a tbody of their own, no rank, never moved among the runs by a click."""
    from paper_specs import demo_paper, replaced_specs
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    with replaced_specs(demo_paper()):
        for name, ranking in RANKINGS.items():
            path = trec(runs / "negplugins-demo" / f"{name}.trec", ranking)
            write_metadata(path, dataset="negplugins-demo", runner="external", system=name, tag="t", parameters={},
                           reproduces="Paper BM25" if name == "alpha" else None)
        build(runs, tmp_path / "out")
    driver.get((tmp_path / "out" / "negplugins-demo.html").as_uri())
    table = driver.find_element(By.ID, "leaderboard")

    def bodies():
        return [(body.get_attribute("class") or "", [row.get_attribute("data-run") or row.get_attribute("data-system")
                                                     for row in body.find_elements(By.CSS_SELECTOR, "tr[data-run], "
                                                                                   "tr[data-system]")])
                for body in table.find_elements(By.TAG_NAME, "tbody")]

    def column(title):
        return next(h for h in table.find_elements(By.CSS_SELECTOR, "thead th") if h.text.strip().startswith(title))

    reported = ("reported", ["Paper BM25", "<b>Dense</b>"])
    assert bodies()[1] == reported
    for title in ("#", "nDCG@10", "nDCG@10", "System", "P@5"):
        column(title).click()
        (runs_class, order), after = bodies()
        assert runs_class == "" and sorted(order) == ["alpha", "beta", "gamma"]  # only the runs were sorted
        assert after == reported  # the paper's rows kept their place, after the runs
    row = table.find_element(By.CSS_SELECTOR, "tbody.reported tr.reported")
    cells = row.find_elements(By.TAG_NAME, "td")
    assert cells[0].text == "" and "reported in the paper" in cells[2].text  # no rank, labelled
    assert cells[1].value_of_css_property("font-style") == "italic"
    assert cells[4].get_attribute("title") == "Table 2, row BM25 (rounded)" and cells[4].text == "0.5"
    link = row.find_element(By.CSS_SELECTOR, "a[href^='https://']")
    assert link.get_attribute("href") == "https://example.org/papers/demo"


def test_reproduction_page(driver, tmp_path, trec):
    """The reproduction page: the paper's number, the run reproducing it and the gap, linked from the index."""
    import json

    from paper_specs import demo_paper, replaced_specs
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    with replaced_specs(demo_paper()):
        path = trec(runs / "negplugins-demo" / "alpha.trec", RANKINGS["alpha"])
        write_metadata(path, dataset="negplugins-demo", runner="external", system="alpha", tag="t", parameters={},
                       reproduces="Paper BM25")
        build(runs, tmp_path / "out")
    driver.get((tmp_path / "out" / "index.html").as_uri())
    driver.find_element(By.CSS_SELECTOR, "a[href='reproduction.html']").click()
    assert driver.title == "Reproducing the papers"
    table = driver.find_element(By.ID, "reproduction-negplugins-demo")
    row = next(r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
               if r.get_attribute("data-system") == "Paper BM25" and "nDCG@10" in r.text and " all " in f" {r.text} ")
    cells = row.find_elements(By.TAG_NAME, "td")
    paper = next(c for c in cells if set((c.get_attribute("class") or "").split()) == {"num", "reported"})
    assert paper.text == "0.5" and paper.value_of_css_property("font-style") == "italic"  # the reported number
    value = json.loads((tmp_path / "out" / "negplugins-demo.json").read_text())["runs"][0]["overall"]["nDCG@10"]
    assert f"alpha {value:.4f} ({value - 0.5:+.4f})" in row.text  # the run beside it, with the gap
    assert "The paper's BM25 uses k1 1.2" in driver.find_element(By.ID, "explanations-negplugins-demo").text
    excluir = driver.find_element(By.ID, "reproduction-excluir")
    assert "BM25" in excluir.text and "0.125" in excluir.text


def test_benchmark_report(driver, tmp_path, monkeypatch):
    """``negplugins benchmark``'s report: the table across benchmarks, the paper's rows apart, and the figure."""
    from paper_specs import demo_paper, replaced_specs
    from selenium.webdriver.common.by import By

    from negplugins.reportcard import run_benchmark

    monkeypatch.chdir(tmp_path)
    with replaced_specs(demo_paper()):
        result = run_benchmark(None, benchmarks="negplugins-demo,excluir", output=tmp_path / "out",
                               indexes=tmp_path / "indexes", progress=False)
    value = result.done[0].evaluation["overall"]["nDCG@10"]
    driver.get((tmp_path / "out" / "report.html").as_uri())
    assert driver.title == "Negation report card: all-MiniLM-L6-v2"
    table = driver.find_element(By.ID, "report-card")
    model_row = table.find_element(By.CSS_SELECTOR, "tbody[data-dataset='negplugins-demo'] tr.model")
    cells = model_row.find_elements(By.TAG_NAME, "td")
    assert cells[2].text.startswith("all-MiniLM-L6-v2") and cells[3].text == "nDCG@10"
    number, half_width = cells[4].text.split(" ± ")  # the score and its 95% interval (tests/reportcard check the width)
    assert number == f"{value:.4f}" and float(half_width) > 0 and cells[4].value_of_css_property("font-weight") == "600"
    reported = table.find_elements(By.CSS_SELECTOR, "tbody[data-dataset='negplugins-demo'] tr.reported")
    assert [r.get_attribute("data-system") for r in reported] == ["Paper BM25", "<b>Dense</b>"]  # the spec's order
    assert "<b>Dense</b>" in reported[1].text  # escaped: shown as text
    assert all(r.find_element(By.TAG_NAME, "td").value_of_css_property("font-style") == "italic" for r in reported)
    assert "reported in the paper" in reported[0].text and "Table 2, row BM25" in reported[0].text
    skipped = table.find_element(By.CSS_SELECTOR, "tbody[data-dataset='excluir/test'] tr.skipped")
    assert "skipped" in skipped.text and "data not available" in skipped.text
    figure = driver.find_element(By.ID, "standing")
    assert figure.size["width"] > 600 and figure.size["height"] > 100  # drawn, not collapsed
    row = figure.find_element(By.CSS_SELECTOR, "g.row[data-dataset='negplugins-demo']")
    dots = row.find_elements(By.CSS_SELECTOR, "circle.reported")
    marker = row.find_element(By.CSS_SELECTOR, "path.model")
    assert len(dots) == 2

    def centre(element):
        box = driver.execute_script("const b = arguments[0].getBoundingClientRect(); return [b.left, b.width];",
                                    element)
        return box[0] + box[1] / 2

    positions = sorted((centre(dot), dot.find_element(By.TAG_NAME, "title").get_attribute("textContent"))
                       for dot in dots)
    assert [title.split(":")[0] for _, title in positions] == ["Paper BM25", "<b>Dense</b>"]  # 0.5 left of 0.62
    model_x = centre(marker)
    # the model's value on the same axis: left of a dot with a larger value, right of one with a smaller value
    for (x, _), paper in zip(positions, (0.5, 0.62)):
        assert (model_x > x) == (value > paper)
    subsets = driver.find_element(By.CSS_SELECTOR, "table.subsets[data-dataset='negplugins-demo']")
    assert "Paper BM25" in subsets.find_element(By.TAG_NAME, "thead").text
    exclusion = subsets.find_element(By.XPATH, ".//tr[td[1]='exclusion']")
    assert exclusion.find_elements(By.TAG_NAME, "td")[-1].text == "0.4"  # the paper's per-kind number


def test_axis_labels_dates_and_run_links_as_laid_out(driver, tmp_path, trec):
    """As the browser lays the page out: the chart's axis labels do not overlap (the demo's kinds, turned 45
    degrees under three runs), a date stays on one line, and the run and sidecar links open the files."""
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    for name, ranking in RANKINGS.items():
        path = trec(runs / "negplugins-demo" / f"{name}.trec", ranking)
        write_metadata(path, dataset="negplugins-demo", runner="external", system=f"a long system name {name} " * 4,
                       tag="t", parameters={})
    build(runs, tmp_path / "out")
    driver.set_window_size(700, 1200)  # a narrow window: the table's text columns wrap, the date must not
    driver.get((tmp_path / "out" / "negplugins-demo.html").as_uri())
    chart = driver.find_element(By.CSS_SELECTOR, "svg.chart")
    axis = 10 + 160 + 4  # the chart's top margin, its plot height, and the 0.00 tick label's offset below it
    labels = [t for t in chart.find_elements(By.TAG_NAME, "text") if float(t.get_attribute("y")) > axis]
    assert [t.text for t in labels] == ["exclusion", "negation-pair", "and", "or", "not"]
    # each label's box in its own (turned) frame, mapped to the page: four corners
    corners = [driver.execute_script(
        "const t = arguments[0], b = t.getBBox(), m = t.getScreenCTM();"
        "return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]"
        ".map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);", t) for t in labels]
    for first, second in zip(corners, corners[1:]):
        assert not _overlap(first, second), (first, second)
    bottom = driver.execute_script("return arguments[0].getBoundingClientRect().bottom;", chart)
    assert max(y for quad in corners for _, y in quad) <= bottom + 1  # the longest label is not cut off
    date = driver.find_element(By.CSS_SELECTOR, "#leaderboard td.date")
    assert date.value_of_css_property("white-space") == "nowrap"
    lines = driver.execute_script("const r = document.createRange(); r.selectNodeContents(arguments[0]);"
                                  "return r.getClientRects().length;", date)
    assert lines == 1 and date.text.count("-") == 2  # 2026-11-24 on one line, though its row wraps its system
    system = driver.find_element(By.CSS_SELECTOR, "#leaderboard tbody tr td:nth-child(2)")
    assert driver.execute_script("const r = document.createRange(); r.selectNodeContents(arguments[0]);"
                                 "return r.getClientRects().length;", system) > 1  # the window is narrow indeed
    link = driver.find_element(By.CSS_SELECTOR, "ul.runs a[href$='.meta.json']")
    driver.get(link.get_attribute("href"))
    assert '"dataset": "negplugins-demo"' in driver.page_source


def _overlap(a, b) -> bool:
    """Whether two convex quadrilaterals (lists of 4 corners) overlap by more than a pixel (separating axes)."""
    for quad in (a, b):
        for i in range(4):
            (x1, y1), (x2, y2) = quad[i], quad[(i + 1) % 4]
            normal = (y2 - y1, x1 - x2)
            length = (normal[0] ** 2 + normal[1] ** 2) ** 0.5 or 1.0
            pa = [(x * normal[0] + y * normal[1]) / length for x, y in a]
            pb = [(x * normal[0] + y * normal[1]) / length for x, y in b]
            if max(pa) <= min(pb) + 1 or max(pb) <= min(pa) + 1:
                return False
    return True
