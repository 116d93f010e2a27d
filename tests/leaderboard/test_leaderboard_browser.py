"""The leaderboard page in a real headless browser (Debian's Chromium): click a header, read the order back."""

import shutil
import tempfile
from pathlib import Path

import pytest

from negplugins.leaderboard import build
from negplugins.io.sidecars import write_metadata

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
