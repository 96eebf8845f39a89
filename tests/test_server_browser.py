"""The web viewer in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven by selenium).

Locally the tests skip when the browser is missing; under ``CI=true`` a missing browser is a failure, since
``.ci/run`` installs it. Screenshots go to ``$DOCINTENT_ARTIFACTS`` (or the test's temporary folder).
"""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from needs import IN_CI, need_module

pytestmark = pytest.mark.browser

need_module("fastapi", "the service needs the serve extra: pip install 'docintent[serve]'")

from docintent.server import ServeConfig  # noqa: E402
from docintent.server.config import brain_factory  # noqa: E402
from server_helpers import ANSWER, damaged_page, live_server, make_benchmark_run, scripted_factory  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1440,1000",
]


def _require_browser() -> None:
    problem = None
    try:
        import selenium  # noqa: F401
    except ImportError:
        problem = "selenium is not installed (pip install 'docintent[browser]')"
    if not CHROMIUM or not DRIVER:
        problem = "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    if problem:
        if IN_CI:
            pytest.fail(f"browser tests cannot run in CI: {problem} (required when CI=true)", pytrace=False)
        pytest.skip(problem)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = (
        Path(os.environ["DOCINTENT_ARTIFACTS"])
        if os.environ.get("DOCINTENT_ARTIFACTS")
        else tmp_path_factory.mktemp("artifacts")
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    make_benchmark_run(root)
    config = ServeConfig(
        brains={"scripted": scripted_factory(delay=0.3), "offline": brain_factory("offline")},
        default_brain="scripted",
        runs_dir=root,
        workers=2,
    )
    with live_server(config) as url:
        yield url


@pytest.fixture(scope="module")
def damaged_file(tmp_path_factory) -> Path:
    from PIL import Image

    path = tmp_path_factory.mktemp("pages") / "invoice-photo.png"
    Image.fromarray(damaged_page()).save(path)
    return path


def _wait(driver, condition, timeout: float = 60.0, what: str = "condition"):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition, message=f"waiting for {what}")


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)


def _images_loaded(driver, css: str) -> bool:
    return bool(
        driver.execute_script(
            "const imgs = [...document.querySelectorAll(arguments[0])];"
            "return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0);",
            css,
        )
    )


def test_ask_a_damaged_page_and_see_every_step(browser, server, damaged_file, artifacts):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(server + "/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#strategy option"), what="the options")
    browser.find_element(By.ID, "file").send_keys(str(damaged_file))
    assert "invoice-photo.png" in browser.find_element(By.ID, "drop-text").text
    question = browser.find_element(By.ID, "question")
    question.send_keys("What is the total amount due?")
    question.send_keys(Keys.CONTROL, Keys.ENTER)  # the keyboard shortcut submits

    # Steps arrive while the run executes (each scripted decision takes 0.3 s).
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#steps li.step"), what="the first step")
    assert "done" not in browser.find_element(By.ID, "run-status").get_attribute("class")
    browser.save_screenshot(str(artifacts / "viewer-running.png"))
    _wait(browser, lambda d: "done" in d.find_element(By.ID, "run-status").get_attribute("class"), what="the answer")

    assert browser.find_element(By.ID, "answer-value").text == ANSWER
    assert "kept: deshadowing" in browser.find_element(By.ID, "answer-tools").text
    assert "rolled back: deblurring" in browser.find_element(By.ID, "answer-tools").text
    steps = browser.find_elements(By.CSS_SELECTOR, "#steps li.step")
    assert len(steps) == 7
    verdicts = {}
    for item in browser.find_elements(By.CSS_SELECTOR, "#steps li.step[data-phase=tool]"):
        verdicts[item.get_attribute("data-tool")] = item.find_element(By.CSS_SELECTOR, ".badge").text
    assert verdicts == {"deshadowing": "kept", "deblurring": "rolled back"}
    reviews = [
        (i.get_attribute("data-tool"), i.find_element(By.CSS_SELECTOR, ".badge").text)
        for i in browser.find_elements(By.CSS_SELECTOR, "#steps li.step[data-phase=B]")
    ]
    assert reviews == [("deshadowing", "kept"), ("deblurring", "rolled back")]
    assert "sharpening added ringing" in steps[5].text

    # The slider moves between the page before and after deshadowing, by keyboard.
    first = browser.find_element(By.CSS_SELECTOR, "#steps li.step[data-tool=deshadowing][data-phase=tool]")
    _wait(browser, lambda d: _images_loaded(d, "#steps .compare img"), what="the step images")
    compare = first.find_element(By.CSS_SELECTOR, ".compare")
    slider = first.find_element(By.CSS_SELECTOR, "input.slider")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", compare)
    slider.send_keys(Keys.HOME)
    all_after = _pixels(compare.screenshot_as_png)
    slider.send_keys(Keys.END)
    all_before = _pixels(compare.screenshot_as_png)
    assert slider.get_attribute("value") == "100"
    assert all_after.shape == all_before.shape
    # deshadowing brightened the shadowed right half: the shown image changed, and brightened
    right = slice(all_after.shape[1] // 2, None)
    assert all_after[:, right].mean() - all_before[:, right].mean() > 15
    slider.send_keys(Keys.ARROW_LEFT * 5)
    assert slider.get_attribute("value") == "95"
    # side by side shows both pages at once
    first.find_element(By.CSS_SELECTOR, ".side-toggle").click()
    _wait(browser, lambda d: _images_loaded(d, "#steps li.step[data-tool=deshadowing] .side img"), what="side by side")
    assert len(first.find_elements(By.CSS_SELECTOR, ".side img")) == 2 and not compare.is_displayed()
    browser.save_screenshot(str(artifacts / "viewer-steps.png"))

    # The answer's evidence box is drawn over the final page, around the total.
    box = _wait(
        browser,
        lambda d: (
            d.find_element(By.ID, "evidence-box") if d.find_element(By.ID, "evidence-box").is_displayed() else None
        ),
        what="the evidence box",
    )
    image = browser.find_element(By.ID, "final-image")
    b, i = box.rect, image.rect
    assert b["width"] > 20 and b["height"] > 5
    assert i["x"] <= b["x"] and b["x"] + b["width"] <= i["x"] + i["width"] + 1
    assert i["y"] + 0.5 * i["height"] < b["y"] and b["y"] + b["height"] <= i["y"] + i["height"] + 1
    assert ANSWER in browser.find_element(By.ID, "evidence-caption").text
    link = browser.find_element(By.ID, "trace-link")
    assert link.get_attribute("href").endswith("/trace.json")
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(artifacts / "viewer-answer.png"))


def test_a_run_posted_to_the_api_is_listed_in_the_viewer_and_opens(browser, server, damaged_file):
    from selenium.webdriver.common.by import By

    from docintent.client import ask

    question = "What is the total amount due on the posted invoice?"
    posted = ask(server, damaged_file, question, wait=60)  # through the API, as curl would
    browser.get(server + "/")
    link = _wait(
        browser,
        lambda d: [a for a in d.find_elements(By.CSS_SELECTOR, "#run-list li a") if a.text == question],
        what="the posted run in the list",
    )[0]
    item = link.find_element(By.XPATH, "..")
    assert item.get_attribute("data-id") == posted["id"] and ANSWER in item.text and "done" in item.text
    assert link.get_attribute("href").endswith(f"#/run/{posted['id']}")
    link.click()
    _wait(
        browser, lambda d: "done" in d.find_element(By.ID, "run-status").get_attribute("class"), what="the run to open"
    )
    assert browser.find_element(By.ID, "answer-value").text == ANSWER
    assert len(browser.find_elements(By.CSS_SELECTOR, "#steps li.step")) == 7
    assert browser.current_url.endswith(f"#/run/{posted['id']}")
    # the link itself opens the run in a fresh page, as one sent to someone else would
    browser.get(server + f"/#/run/{posted['id']}")
    _wait(browser, lambda d: d.find_element(By.ID, "answer-value").text == ANSWER, what="the run from its link")


def test_the_landing_page_explains_itself_and_offers_the_sample_page(browser, server, artifacts):
    from selenium.webdriver.common.by import By

    browser.get(server + "/")
    intro = browser.find_element(By.ID, "intro").text
    assert "damaged document" in intro and "rolls back" in intro
    assert not browser.find_element(By.ID, "token-button").is_displayed()  # this service wants no token
    _wait(browser, lambda d: d.find_element(By.ID, "sample-button").is_enabled(), what="the sample page")
    assert "Who is the letter from?" in browser.find_element(By.ID, "sample-text").text
    assert "upside down" in browser.find_element(By.ID, "sample-text").text
    _wait(browser, lambda d: _images_loaded(d, "#sample-image"), what="the sample's picture")
    browser.save_screenshot(str(artifacts / "viewer-landing.png"))
    browser.find_element(By.ID, "sample-button").click()  # fills the form with the sample and asks
    _wait(browser, lambda d: "done" in d.find_element(By.ID, "run-status").get_attribute("class"), what="the answer")
    assert browser.find_element(By.ID, "question").get_attribute("value") == "Who is the letter from?"
    assert "docintent-sample-" in browser.find_element(By.ID, "drop-text").text
    _wait(
        browser,
        lambda d: [
            a for a in d.find_elements(By.CSS_SELECTOR, "#run-list li a") if a.text == "Who is the letter from?"
        ],
        what="the sample's run in the list",
    )


def test_a_file_that_is_no_image_is_refused_in_the_page(browser, server, tmp_path):
    from selenium.webdriver.common.by import By

    fake = tmp_path / "scan.png"
    fake.write_text("these are not pixels\n" * 10)
    browser.get(server + "/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#strategy option"), what="the options")
    browser.find_element(By.ID, "file").send_keys(str(fake))
    browser.find_element(By.ID, "question").send_keys("What is the total?")
    browser.find_element(By.ID, "ask-button").click()
    error = _wait(
        browser,
        lambda d: d.find_element(By.ID, "form-error") if d.find_element(By.ID, "form-error").is_displayed() else None,
        what="the error",
    )
    assert error.text.startswith("scan.png: not an image or PDF")


def test_the_runs_browser_shows_table_1_and_readable_plots(browser, server, artifacts):
    from selenium.webdriver.common.by import By

    browser.get(server + "/#/runs")
    link = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#bench-list a"), what="the run list")[0]
    assert link.text.startswith("offline-synth · 16 rows")
    link.click()
    table = _wait(browser, lambda d: d.find_elements(By.ID, "table1"), what="Table 1")[0]
    rows = [r.find_elements(By.TAG_NAME, "td")[0].text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert rows == ["none", "pipeline-fixed", "docintent"]
    headers = [h.text for h in table.find_elements(By.TAG_NAME, "th")]
    assert headers[0] == "strategy" and "Avg. Tools" in headers
    ablations = browser.find_element(By.ID, "table2")
    assert [
        r.find_elements(By.TAG_NAME, "td")[0].text for r in ablations.find_elements(By.CSS_SELECTOR, "tbody tr")
    ] == ["agres", "docintent"]
    _wait(browser, lambda d: _images_loaded(d, "img.plot"), what="the plots")
    for plot in browser.find_elements(By.CSS_SELECTOR, "img.plot"):
        assert plot.size["height"] >= 250, plot.get_attribute("alt")
    assert browser.find_elements(By.CSS_SELECTOR, ".failure figure img")
    browser.save_screenshot(str(artifacts / "runs-browser.png"))


def test_client_ask_against_the_live_service(server, damaged_file):
    from docintent.client import ServiceError, ask

    run = ask(server, damaged_file, "What is the total amount due?", strategy="docintent", wait=60)
    assert run["status"] == "done" and run["answer"] == ANSWER
    assert run["tools_kept"] == ["deshadowing"] and run["tools_rolled_back"] == ["deblurring"]
    with pytest.raises(ServiceError, match="HTTP 415: notes.txt: not an image or PDF"):
        ask(server, b"plain text", "q?", file_name="notes.txt")
    started = time.perf_counter()
    with pytest.raises(ServiceError, match="cannot reach the service"):
        ask("http://127.0.0.1:9", damaged_file, "q?")
    assert time.perf_counter() - started < 10


def test_with_a_token_the_page_asks_for_it_and_then_works(browser, damaged_file, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    config = ServeConfig(brains={"scripted": scripted_factory()}, default_brain="scripted", token="viewer-token-42")
    with live_server(config) as url:
        browser.get(url + "/")
        browser.execute_script("sessionStorage.clear()")
        browser.refresh()
        field = _wait(
            browser,
            lambda d: (
                d.find_element(By.ID, "token-input") if d.find_element(By.ID, "token-input").is_displayed() else None
            ),
            what="the token dialog",
        )
        assert browser.find_element(By.ID, "token-button").is_displayed()  # this service wants one
        field.send_keys("viewer-token-42", Keys.ENTER)
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#strategy option"), what="the options")
        browser.find_element(By.ID, "file").send_keys(str(damaged_file))
        browser.find_element(By.ID, "question").send_keys("What is the total amount due?", Keys.CONTROL, Keys.ENTER)
        _wait(
            browser, lambda d: "done" in d.find_element(By.ID, "run-status").get_attribute("class"), what="the answer"
        )
        assert browser.find_element(By.ID, "answer-value").text == ANSWER
        # images came through authorised requests (blob URLs), since <img> cannot send the header itself
        _wait(browser, lambda d: _images_loaded(d, "#steps .compare img"), what="the step images")
        sources = [i.get_attribute("src") for i in browser.find_elements(By.CSS_SELECTOR, "#steps .compare img")]
        assert sources and all(s.startswith("blob:") for s in sources)
        _wait(browser, lambda d: d.find_element(By.ID, "evidence-box").is_displayed(), what="the evidence box")
        browser.execute_script("sessionStorage.clear()")


@pytest.fixture(scope="module")
def two_page_pdf(tmp_path_factory) -> Path:
    """A letter on page 1 and the invoice total on page 2 (a PDF with a text layer)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    path = tmp_path_factory.mktemp("pdf") / "letter-and-invoice.pdf"
    with PdfPages(path) as pdf:
        for lines in (
            ["Dear customer,", "thank you for your order of garden chairs."],
            ["Invoice number: INV-2041", "Date: 12 March 2024", "Total amount due: $1,250.00"],
        ):
            fig = plt.figure(figsize=(6, 4))
            for i, line in enumerate(lines):
                fig.text(0.1, 0.8 - 0.25 * i, line, fontsize=16)
            pdf.savefig(fig)
            plt.close(fig)
    return path


class _Requests:
    """The paths the service was asked for, from its access log."""

    def __init__(self) -> None:
        import logging

        self.paths: list[str] = []
        self.handler = logging.Handler()
        self.handler.emit = lambda record: self.paths.append(str(record.args[2]) if record.args else "")
        self.logger = logging.getLogger("docintent.access")

    def __enter__(self) -> _Requests:
        self.level = self.logger.level
        self.logger.setLevel("INFO")
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.level)


def test_a_finished_run_shows_the_answers_box_at_once_on_the_right_page_of_a_two_page_pdf(
    browser, server, two_page_pdf, artifacts
):
    import json
    import urllib.request

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server + "/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#brain option"), what="the options")
    browser.find_element(By.ID, "file").send_keys(str(two_page_pdf))
    browser.find_element(By.CSS_SELECTOR, "#ask-form details summary").click()  # the options
    Select(browser.find_element(By.ID, "brain")).select_by_value("offline")
    browser.find_element(By.ID, "question").send_keys("What is the total amount due?")
    with _Requests() as requests:
        browser.find_element(By.ID, "ask-button").click()
        _wait(
            browser,
            lambda d: "done" in d.find_element(By.ID, "run-status").get_attribute("class"),
            timeout=120,
            what="the answer",
        )
        done = time.perf_counter()
        box = _wait(
            browser,
            lambda d: (
                d.find_element(By.ID, "evidence-box") if d.find_element(By.ID, "evidence-box").is_displayed() else None
            ),
            timeout=10,
            what="the answer's box",
        )
        shown_after = time.perf_counter() - done
        _wait(browser, lambda d: _images_loaded(d, "#final-image"), what="the answer's page")
    assert browser.find_element(By.ID, "answer-value").text == ANSWER
    # drawn from the finished run itself: no request looked for the answer on the page afterwards
    assert not [p for p in requests.paths if p.endswith("/evidence")], requests.paths
    assert shown_after < 3.0
    # on page 2, the page the answer came from, as the run says
    run_id = next(p.split("/")[3] for p in requests.paths if p.startswith("/v1/runs/") and p.endswith("/events"))
    with urllib.request.urlopen(f"{server}/v1/runs/{run_id}") as response:
        run = json.loads(response.read())
    assert run["page"] == 2 and browser.find_element(By.ID, "final-frame").get_attribute("data-page") == "2"
    page_two = next(s["before"] for s in run["trace"] if s["phase"] == "locate" and s["data"]["page"] == 2)
    image = browser.find_element(By.ID, "final-image")
    assert image.get_attribute("src").endswith(f"/pages/{page_two}.jpg") and run["answer_page"] == page_two
    assert "page 2" in browser.find_element(By.ID, "answer-evidence").text
    assert "Total amount due: $1,250.00" in browser.find_element(By.ID, "evidence-caption").text
    # the box lies over the total's line: the last of three lines, in the page's lower half
    b, i = box.rect, image.rect
    assert b["width"] > 20 and b["height"] > 5
    assert i["x"] <= b["x"] and b["x"] + b["width"] <= i["x"] + i["width"] + 1
    centre = (b["y"] + b["height"] / 2 - i["y"]) / i["height"]
    assert 0.5 < centre < 0.8, centre
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
    browser.save_screenshot(str(artifacts / "viewer-two-page-pdf.png"))
