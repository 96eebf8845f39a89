"""Regenerate docs/viewer.png: the viewer after a real run of the offline reader on a damaged page.

    PYTHONPATH=src:tests python docs/make_screenshot.py     # needs chromium, chromedriver and selenium

The page is rendered here (a sideways, shadowed, slightly blurred invoice), so the picture shows what the
service really does with it: the steps, the verdicts, the before/after pages and the evidence box.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from conftest import render_text_page  # noqa: E402
from server_helpers import live_server  # noqa: E402

from docintent.server import ServeConfig  # noqa: E402

LINES = [
    "ACME Supplies Ltd.",
    "Invoice number: INV-2041",
    "Date: 12 March 2024",
    "Subtotal: $1,150.00",
    "Tax: $100.00",
    "Total amount due: $1,250.00",
]


def damaged() -> np.ndarray:
    clean = render_text_page(LINES, size=26, width=760)
    h, w = clean.shape[:2]
    xx = np.mgrid[0:h, 0:w][1]
    shade = np.clip(1.0 - 0.7 * np.clip((xx / w - 0.35) * 1.8, 0, 1), 0.3, 1)[..., None]
    page = cv2.GaussianBlur((clean * shade).astype(np.uint8), (0, 0), 1.5)
    return np.ascontiguousarray(np.rot90(page, 1))


def main() -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    work = Path(tempfile.mkdtemp(prefix="docintent-shot-"))
    image = work / "invoice-photo.png"
    cv2.imwrite(str(image), damaged()[..., ::-1])
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1500",
        "--hide-scrollbars",
        f"--user-data-dir={work / 'profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        with live_server(ServeConfig()) as url:
            driver.get(url + "/")
            WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#strategy option"))
            driver.find_element(By.ID, "file").send_keys(str(image))
            driver.find_element(By.ID, "question").send_keys("What is the total amount due?")
            driver.find_element(By.ID, "ask-button").click()
            WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "evidence-box").is_displayed())
            time.sleep(0.5)
            driver.save_screenshot(str(HERE / "viewer.png"))
    finally:
        driver.quit()
    print(f"wrote {HERE / 'viewer.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
