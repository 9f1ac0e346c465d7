"""Drives Herald's console in headless Chromium (Debian's `chromium` and `chromedriver`; Selenium from PyPI), as a
person would: logs in, sends, watches the delivery log, validates a token, reads every page. Nothing is downloaded.

Environment (set by ConsoleBrowserTests):
  CONSOLE_URL     the console, e.g. http://127.0.0.1:40123
  OPERATOR_TOKEN  a valid operator token
  DEVICE_TOKEN    an app's token on a device that is offline when the script starts
  TOPIC           the app's bundle ID
  SCREENSHOTS     where to keep a PNG of each page
  SIGNALS         a folder: the test writes a file `<name>` there once it did what the script asked for with
                  a line `need: <name>` on standard output

Prints `ok: <step>` after each step; exits non-zero with the reason on standard error at the first that fails.
"""
import os
import pathlib
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import (NoAlertPresentException, NoSuchElementException,
                                        StaleElementReferenceException, TimeoutException, WebDriverException)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["CONSOLE_URL"].rstrip("/")
OPERATOR_TOKEN = os.environ["OPERATOR_TOKEN"]
DEVICE_TOKEN = os.environ["DEVICE_TOKEN"]
TOPIC = os.environ["TOPIC"]
SHOTS = pathlib.Path(os.environ["SCREENSHOTS"])
SIGNALS = pathlib.Path(os.environ["SIGNALS"])
WEBPUSH_SUBSCRIPTION = os.environ["WEBPUSH_SUBSCRIPTION"]
# A loaded two-core machine runs a debug build of the gateway and a browser: waits are generous, never timings.
WAIT = 90


def step(name):
    print("ok:", name, flush=True)


def fail(message):
    print("FAILED:", message, file=sys.stderr, flush=True)
    raise SystemExit(1)


def need(name):
    """Asks the test for something (a device online, a token revoked) and waits for it to say it is done."""
    print("need:", name, flush=True)
    deadline = time.monotonic() + WAIT
    while not (SIGNALS / name).exists():
        if time.monotonic() > deadline:
            fail(f"the test never did {name}")
        time.sleep(0.1)


def shot(driver, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def text(driver):
    # The page may be replaced while it is read (a form's answer arriving): read the new one. Chromium reports the
    # body replaced between finding it and reading it either as a stale element or, from its inspector, as a node that
    # "does not belong to the document".
    for _ in range(100):
        try:
            return driver.find_element(By.TAG_NAME, "body").text
        except (StaleElementReferenceException, NoSuchElementException):
            time.sleep(0.05)
        except WebDriverException as error:
            if "does not belong to the document" not in str(error):
                raise
            time.sleep(0.05)
    return ""


def wait_for_text(driver, expected, why):
    try:
        WebDriverWait(driver, WAIT).until(lambda d: expected in text(d))
    except TimeoutException:
        fail(f"{why}: never saw {expected!r}; the page says:\n{text(driver)}")


def no_alert(driver, where):
    try:
        alert = driver.switch_to.alert
        fail(f"{where}: a script ran (alert {alert.text!r})")
    except NoAlertPresentException:
        pass


def send(driver, payload, push_type="alert"):
    driver.get(BASE + "/send")
    form = driver.find_element(By.ID, "send")
    recipient = form.find_element(By.NAME, "recipient")
    recipient.clear()
    recipient.send_keys(DEVICE_TOKEN)
    topic = form.find_element(By.NAME, "topic")
    topic.clear()
    topic.send_keys(TOPIC)
    Select(form.find_element(By.NAME, "pushType")).select_by_visible_text(push_type)
    area = form.find_element(By.NAME, "payload")
    area.clear()
    area.send_keys(payload)
    form.find_element(By.CSS_SELECTOR, "button[value=send]").click()
    WebDriverWait(driver, WAIT).until(lambda d: "Status" in text(d) or "Not sent" in text(d))


def main():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        run(driver)
    finally:
        driver.quit()


def run(driver):
    # Log in: a wrong token is refused and says so; the right one gets in.
    driver.get(BASE + "/send")
    if not driver.current_url.endswith("/login"):
        fail(f"a page without a session did not send the browser to log in: {driver.current_url}")
    shot(driver, "login")
    driver.find_element(By.NAME, "token").send_keys("not-a-token")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    wait_for_text(driver, "That is not a valid operator token", "a wrong operator token")
    driver.find_element(By.NAME, "token").send_keys(OPERATOR_TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    wait_for_text(driver, "Delivery log", "logging in")
    step("log in")

    # The payload's size is counted as it is typed, against the push type's limit.
    driver.get(BASE + "/send")
    area = driver.find_element(By.ID, "payload")
    area.clear()
    # Typed as a person would, in one paste.
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
        area, '{"aps":{"alert":"' + "x" * 4100 + '"}}')
    size = driver.find_element(By.ID, "size")
    if "4120 / 4096" not in size.text or "error" not in size.get_attribute("class"):
        fail(f"the size counter says {size.text!r} ({size.get_attribute('class')}) for 4,120 bytes of an alert")
    Select(driver.find_element(By.NAME, "pushType")).select_by_visible_text("voip")
    if "4120 / 5120" not in size.text:
        fail(f"the size counter says {size.text!r} for a voip push")
    step("payload size counted live")

    # A web push through the form: a subscription pasted in, the Declarative Web Push message the form offers, sent;
    # 201 with its delivery log linked.
    driver.get(BASE + "/send#webpush")
    subscription = driver.find_element(By.ID, "webPushSubscription")
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", subscription,
        WEBPUSH_SUBSCRIPTION)
    if '"web_push":8030' not in driver.find_element(By.ID, "webPushMessage").get_attribute("value"):
        fail("the web push form does not offer a Declarative Web Push message")
    driver.find_element(By.CSS_SELECTOR, "#sendWebPush button[value=send]").click()
    wait_for_text(driver, "201", "sending a web push")
    result = driver.find_element(By.ID, "webPushResult")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", result)
    if not result.find_elements(By.CSS_SELECTOR, "a[href^='/log?id=']"):
        fail(f"the web push's answer links no delivery log: {result.text!r}")
    shot(driver, "send-webpush")
    step("a web push sent through the form")

    # The composer writes the payload for the chosen push type as the person types.
    marker = "<script>alert(1)</script>"
    driver.get(BASE + "/send")
    Select(driver.find_element(By.NAME, "pushType")).select_by_visible_text("alert")
    driver.find_element(By.CSS_SELECTOR, "#composer [data-key=title]").send_keys("Hello")
    driver.find_element(By.CSS_SELECTOR, "#composer [data-key=body]").send_keys(marker)
    driver.find_element(By.CSS_SELECTOR, "#composer [data-key=badge]").send_keys("3")
    written = driver.find_element(By.ID, "payload").get_attribute("value")
    if written != '{"aps":{"alert":{"title":"Hello","body":"' + marker + '"},"badge":3}}':
        fail(f"the composer wrote {written!r}")
    Select(driver.find_element(By.NAME, "pushType")).select_by_visible_text("liveactivity")
    if not driver.find_element(By.CSS_SELECTOR, "#composer [data-key=event]").is_displayed() \
            or driver.find_element(By.CSS_SELECTOR, "#composer [data-key=title]").is_displayed():
        fail("the composer did not change with the push type")
    step("the composer")

    # Send to the offline device: 200, stored; its delivery log turns to delivered when the device connects.
    send(driver, '{"aps":{"alert":{"title":"Hello","body":"' + marker + '"},"badge":3}}')
    wait_for_text(driver, "200", "sending to an offline token")
    shot(driver, "send")
    link = driver.find_element(By.CSS_SELECTOR, "a[href^='/log?id=']")
    link.click()
    wait_for_text(driver, "Stored - Device Offline", "the delivery log of a push to an offline device")
    step("send to an offline token")
    need("device-online")
    wait_for_text(driver, "Delivered to Device (From Storage)", "the live delivery log once the device connects")
    rows = driver.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")
    states = [row.find_elements(By.TAG_NAME, "td")[1].text for row in rows]
    if states != ["Received by APNs", "Stored - Device Offline", "Delivered to Device (From Storage)"]:
        fail(f"the timeline reads {states}")
    shot(driver, "log")
    step("the log turns to delivered")

    # A payload with <script> is text wherever it shows: the form keeps it, nothing runs.
    send(driver, '{"aps":{"alert":"' + marker + '"}}')
    no_alert(driver, "the send page")
    if marker not in driver.find_element(By.ID, "payload").get_attribute("value"):
        fail("the payload did not come back as text in the form")
    if driver.find_elements(By.XPATH, "//script[contains(., 'alert')]"):
        fail("a <script> element made of the payload is in the page")
    step("<script> shown as text")

    # The devices page: the device, connected now, with its token.
    driver.get(BASE + "/devices")
    wait_for_text(driver, "1 connected to this gateway node now", "the devices page")
    row = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#devices tbody tr") if DEVICE_TOKEN in r.text]
    if not row or "offline" in row[0] or "channel(s)" not in row[0]:
        fail(f"the devices page does not show the device connected: {row}")
    shot(driver, "devices")
    step("devices")

    # The delivery log searched by the token lists what was sent to it; the history lists what the console sent.
    driver.get(BASE + "/log?id=" + DEVICE_TOKEN)
    if len(driver.find_elements(By.CSS_SELECTOR, "#matches tbody tr")) != 2:
        fail(f"a search by token lists {text(driver)}")
    driver.get(BASE + "/history")
    sends = driver.find_elements(By.CSS_SELECTOR, "#history tbody tr")
    # Newest first: the two sends to the device, then the web push (201, to a web push subscription).
    if len(sends) != 3 or "200" not in sends[0].text or "web push subscription" not in sends[2].text \
            or "201" not in sends[2].text:
        fail(f"the history reads {[r.text for r in sends]}")
    shot(driver, "history")
    sends[1].find_element(By.LINK_TEXT, "Modify").click()
    wait_for_text(driver, "From the history", "modifying a send from the history")
    if marker not in driver.find_element(By.ID, "payload").get_attribute("value"):
        fail("Modify did not bring the payload back into the form")
    no_alert(driver, "the history's send in the form")
    step("history and search")

    # Metrics: a chart per category, drawn as SVG.
    driver.get(BASE + "/metrics")
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.chart")
    names = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "section.chart h2")]
    if not charts or not any(name.startswith("Received by APNs") for name in names):
        fail(f"the metrics page shows {names}")
    if not driver.find_elements(By.CSS_SELECTOR, "svg.chart rect"):
        fail("the charts have no bars")
    shot(driver, "metrics")
    step("metrics")

    # The JWT generator's token passes every check of the validator.
    driver.get(BASE + "/tools")
    driver.find_element(By.CSS_SELECTOR, "form[action='/tools/generate'] button").click()
    generated = WebDriverWait(driver, WAIT).until(lambda d: d.find_element(By.ID, "generated")).text
    driver.find_element(By.NAME, "jwt").send_keys(generated)
    driver.find_element(By.CSS_SELECTOR, "form[action='/tools/jwt'] button").click()
    wait_for_text(driver, "passed", "validating the generated JWT")
    if driver.find_elements(By.CSS_SELECTOR, "tr.discarded"):
        fail("the generated JWT failed a check")
    step("a generated JWT passes")

    # The JWT validator names the check that fails, and why.
    driver.get(BASE + "/tools")
    jwt = driver.find_element(By.NAME, "jwt")
    jwt.clear()
    jwt.send_keys("eyJhbGciOiJIUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.eyJpc3MiOiJERUYxMjM0NTY3IiwiaWF0IjoxfQ.c2ln")
    driver.find_element(By.CSS_SELECTOR, "form[action='/tools/jwt'] button").click()
    wait_for_text(driver, "failed", "validating a broken JWT")
    failed = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tr.discarded")]
    if not any("alg" in row and "ES256" in row for row in failed):
        fail(f"the validator did not say the alg is wrong: {failed}")
    shot(driver, "tools")
    step("a broken JWT and why")

    # The token revoked (the app unregistered): the next send is answered 410.
    need("revoked")
    send(driver, '{"aps":{"alert":"after the revocation"}}')
    wait_for_text(driver, "410 Unregistered", "sending to a revoked token")
    step("revoked: 410")

    driver.get(BASE + "/channels?app=" + TOPIC)
    driver.find_element(By.CSS_SELECTOR, "form[method=post][action='/channels'] input[value='1']").click()
    driver.find_element(By.CSS_SELECTOR, "form[method=post][action='/channels'] button").click()
    wait_for_text(driver, "Most Recent Message Stored", "making a channel")
    shot(driver, "channels")
    step("channels")

    no_alert(driver, "the last page")


if __name__ == "__main__":
    main()
