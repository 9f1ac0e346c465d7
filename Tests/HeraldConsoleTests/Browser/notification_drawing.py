"""Looks at the console's drawing of a delivered notification in headless Chromium (Debian's `chromium` and
`chromedriver`; Selenium from PyPI), as a person would see it, and measures what it cut: the title and subtitle to one
line with an ellipsis, the body to four lines on the lock screen and the banner, nothing when expanded; the image's
thumbnail loaded; the category's actions shown, the destructive one in red. Keeps a screenshot of the drawing.

Environment (set by ConsoleBrowserTests):
  CONSOLE_URL     the console, e.g. http://127.0.0.1:40123
  OPERATOR_TOKEN  a valid operator token
  SCREENSHOTS     where to keep notification.png

Prints `ok: <step>` after each step; exits non-zero with the reason on standard error at the first that fails.
"""
import os
import pathlib
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE = os.environ["CONSOLE_URL"].rstrip("/")
OPERATOR_TOKEN = os.environ["OPERATOR_TOKEN"]
SHOTS = pathlib.Path(os.environ["SCREENSHOTS"])
WAIT = 90
LINE = 20  # the cards' line height, in CSS pixels (docs/console.md)


def step(name):
    print("ok:", name, flush=True)


def fail(message):
    print("FAILED:", message, file=sys.stderr, flush=True)
    raise SystemExit(1)


def box(driver, element):
    return driver.execute_script(
        "const e = arguments[0], s = getComputedStyle(e);"
        "return {client: e.clientHeight, scroll: e.scrollHeight, width: e.clientWidth, scrollWidth: e.scrollWidth,"
        " overflow: s.textOverflow, color: s.color};", element)


def main():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,2000", "--no-first-run", "--disable-extensions", "--hide-scrollbars"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        run(driver)
    finally:
        driver.quit()


def run(driver):
    driver.get(BASE + "/login")
    driver.find_element(By.NAME, "token").send_keys(OPERATOR_TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    WebDriverWait(driver, WAIT).until(lambda d: not d.current_url.endswith("/login"))
    driver.get(BASE + "/devices")
    drawing = driver.find_element(By.CSS_SELECTOR, ".notification")
    step("devices page")

    for name in ("lock", "home"):
        card = drawing.find_element(By.CSS_SELECTOR, f".screen.{name} .card")
        for part in ("title", "subtitle"):
            measured = box(driver, card.find_element(By.CLASS_NAME, part))
            if measured["client"] != LINE or measured["scrollWidth"] <= measured["width"] or measured["overflow"] != "ellipsis":
                fail(f"{name}: the {part} is not one line cut with an ellipsis: {measured}")
        body = box(driver, card.find_element(By.CLASS_NAME, "body"))
        if body["client"] != 4 * LINE or body["scroll"] <= body["client"]:
            fail(f"{name}: the body is not cut to four lines: {body}")
        thumbnail = card.find_element(By.CLASS_NAME, "thumbnail")
        if not driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth === 2", thumbnail):
            fail(f"{name}: the thumbnail did not load")
    step("lock screen and banner cut as iOS cuts them")

    full = drawing.find_element(By.CSS_SELECTOR, ".screen.expanded .card")
    body = box(driver, full.find_element(By.CLASS_NAME, "body"))
    if body["client"] <= 4 * LINE or body["scroll"] > body["client"]:
        fail(f"expanded: the body is not shown whole: {body}")
    title = box(driver, full.find_element(By.CLASS_NAME, "title"))
    if title["client"] <= LINE:
        fail(f"expanded: the title is not shown whole: {title}")
    if not driver.execute_script("return arguments[0].naturalWidth === 2", full.find_element(By.CLASS_NAME, "attachment")):
        fail("expanded: the attachment did not load")
    step("expanded shows everything")

    actions = [a.text for a in drawing.find_elements(By.CSS_SELECTOR, ".actions .action:not(.text-input)")]
    if actions != ["Accept", "Reply", "Decline"]:
        fail(f"the actions are {actions}")
    field = drawing.find_element(By.CSS_SELECTOR, ".action.text-input input")
    if field.get_attribute("placeholder") != "Say something <nice>":
        fail(f"the text input's placeholder is {field.get_attribute('placeholder')!r}")
    red = box(driver, drawing.find_element(By.CSS_SELECTOR, ".action.destructive"))["color"]
    if red != "rgb(215, 0, 21)":
        fail(f"the destructive action is {red}, not red")
    step("actions")

    SHOTS.mkdir(parents=True, exist_ok=True)
    drawing.screenshot(str(SHOTS / "notification.png"))
    step("screenshot")


if __name__ == "__main__":
    main()
