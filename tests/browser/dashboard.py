#!/usr/bin/python3
"""The dashboard in a real browser: headless Chromium driven by Selenium
(Debian's chromium, chromium-driver and python3-selenium), against the
server of tests/integration/dashboard.sh.

usage: dashboard.py BASE CRAWL_JOB STANDARD_JOB PROCESSING_JOB ARTIFACTS
                    TOKEN_BASE TOKEN

TOKEN_BASE is a second server, bound to a non-loopback address, that
needs TOKEN: the page loads, asks for the token, then shows the jobs.

Prints TAP-like "ok - ..." / "FAIL - ..." lines; exits 1 on a failure, 77
when Chromium cannot start here.  Screenshots of each page go to
ARTIFACTS (kept by the test)."""
import json
import os
import re
import sys
import time

try:
    from selenium import webdriver
    from selenium.common.exceptions import (StaleElementReferenceException,
                                            TimeoutException, WebDriverException)
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as e:  # the wrapper checks first; this is a safety net
    print(f"SKIP: python3-selenium is missing: {e}")
    sys.exit(77)

BASE, CRAWL, STANDARD, PROCESSING, ARTIFACTS, TOKEN_BASE, TOKEN = sys.argv[1:8]
FAILS = 0


def ok(cond, what, detail=""):
    global FAILS
    if cond:
        print(f"ok - {what}")
    else:
        FAILS += 1
        print(f"FAIL - {what}{': ' + detail if detail else ''}")
    sys.stdout.flush()


def shot(driver, name):
    path = os.path.join(ARTIFACTS, name + ".png")
    driver.save_screenshot(path)
    print(f"# screenshot {path}")


def start_browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1280,900",
              "--no-first-run", "--disable-extensions",
              "--disable-background-networking", "--disable-sync",
              "--disable-component-update", "--disable-default-apps",
              "--metrics-recording-only", "--no-default-browser-check"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path="/usr/bin/chromedriver")
    return webdriver.Chrome(options=opts, service=service)


def text(driver, css):
    """The text of the first element matching css, read in one script (the
    page redraws its tables every second)."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return e ? e.innerText : '';", css)


def wait(driver, cond, timeout=30):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,)).until(cond)
    except TimeoutException:
        return None


def row(driver, job):
    """The text of the jobs table's row of job, or None."""
    return driver.execute_script(
        "for (const tr of document.querySelectorAll('#jobs-table tbody tr')) {"
        "  const a = tr.querySelector('td a');"
        "  if (a && a.textContent === arguments[0]) return tr.innerText;"
        "} return null;", job)


def button(driver, label):
    b = driver.find_elements(By.CSS_SELECTOR, f'button[aria-label="{label}"]')
    return b[0] if b else None


def press(driver, label, keyboard=False):
    """Click the button labelled label (or focus it and press Enter),
    again if the page redrew it meanwhile.  True when it was there."""
    for _ in range(20):
        b = button(driver, label)
        if b is None:
            time.sleep(0.1)
            continue
        try:
            if keyboard:
                b.send_keys(Keys.ENTER)
            else:
                b.click()
            return True
        except StaleElementReferenceException:
            continue
    return False


def main():
    try:
        driver = start_browser()
    except WebDriverException as e:
        print(f"SKIP: Chromium cannot start here: {e.msg.splitlines()[0] if e.msg else e}")
        return 77
    try:
        run(driver)
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        ok(not errors, "no JavaScript error and no failed request in the console",
           json.dumps(errors)[:600])
        run_token(driver)
        # the 401s before the token are the server's answers, logged by
        # the browser as failed loads ("network"); nothing else may fail
        errors = [e for e in driver.get_log("browser")
                  if e.get("level") == "SEVERE" and
                  not (e.get("source") == "network" and "401" in e.get("message", ""))]
        ok(not errors, "no JavaScript error with the token server either",
           json.dumps(errors)[:600])
    finally:
        driver.quit()
    return 1 if FAILS else 0


def run_token(driver):
    driver.set_window_size(1280, 900)
    driver.get(TOKEN_BASE + "/")
    ok(wait(driver, lambda d: d.find_element(By.ID, "token-form").is_displayed(), 20) is not None,
       "a server that needs the token: the page loads and asks for it")
    shot(driver, "7-token")
    field = driver.find_element(By.ID, "token-input")
    field.send_keys(TOKEN)
    field.send_keys(Keys.ENTER)
    ok(wait(driver, lambda d: row(d, "indexUpdate") is not None, 20) is not None,
       "with the token the jobs are listed")
    ok(not driver.find_element(By.ID, "token-form").is_displayed(), "and the token form is gone")


def run(driver):
    driver.get(BASE + "/")
    ok(wait(driver, lambda d: row(d, CRAWL) is not None) is not None,
       "the dashboard lists the jobs")
    ok("connected" in text(driver, "#conn"), "it says it is connected")
    shot(driver, "1-jobs")

    # start the crawl from its button (keyboard: focus and Enter)
    ok(press(driver, f"Start {CRAWL}", keyboard=True),
       "a Start button for the crawl job, pressed with the keyboard")
    # a runOnce run is FINISHING from its start: it works off its tasks
    ok(wait(driver, lambda d: "FINISHING" in (row(d, CRAWL) or ""), 20) is not None,
       "the run shows in the jobs table (FINISHING, with a Cancel button)", row(driver, CRAWL) or "")
    ok(button(driver, f"Cancel {CRAWL}") is not None and button(driver, f"Start {CRAWL}") is None,
       "while it runs: Cancel, no Start")

    # the job's page: progress updates while it runs
    driver.get(BASE + "/#/job/" + CRAWL)
    ok(wait(driver, lambda d: d.find_elements(By.ID, "run-tasks")) is not None,
       "the job page shows the run's progress")
    seen = set()  # progress shown while the run was still going
    deadline = time.time() + 120
    while time.time() < deadline:
        state = text(driver, "#run-state")
        if state in ("SUCCEEDED", "FAILED", "CANCELED"):
            break
        if state:
            seen.add(text(driver, "#run-tasks") + " / " + text(driver, "#run-pushed"))
        time.sleep(0.1)
    ok(len(seen) >= 2, f"the progress updated without a reload ({len(seen)} different figures seen while running)",
       repr(sorted(seen))[:300])
    ok(text(driver, "#run-state") == "SUCCEEDED", "the run ends SUCCEEDED on the page",
       text(driver, "#run-state"))
    ok(wait(driver, lambda d: "indexed" in text(d, "#run-indexed")) is not None,
       "the indexing phase is shown (the processing job's indexed documents)")
    nodes = driver.find_elements(By.CSS_SELECTOR, "#job-graph svg .node")
    ok(len(nodes) >= 4, f"the workflow graph draws the workflow's actions ({len(nodes)})")
    ok(len(driver.find_elements(By.CSS_SELECTOR, "#job-workers tbody tr")) >= 4,
       "the workers' counters are listed")
    shot(driver, "2-job-run")

    # the processing job's failed documents (the converter that fails)
    driver.get(BASE + "/#/job/" + PROCESSING)
    ok(wait(driver, lambda d: "converter.failed" in text(d, "#job-failed tbody"), 20) is not None,
       "the processing job's page lists the failed document and its reason",
       text(driver, "#job-failed tbody"))
    shot(driver, "3-failed-documents")

    # a standard job: start, then cancel; start, then finish
    driver.get(BASE + "/")
    ok(wait(driver, lambda d: button(d, f"Start {STANDARD}") is not None) is not None,
       "a Start button for the standard job")
    press(driver, f"Start {STANDARD}")
    ok(wait(driver, lambda d: button(d, f"Cancel {STANDARD}") is not None) is not None,
       "its run has a Cancel button")
    press(driver, f"Cancel {STANDARD}")
    ok(wait(driver, lambda d: "CANCELED" in (row(d, STANDARD) or ""), 30) is not None,
       "Cancel: the run is CANCELED", row(driver, STANDARD) or "")
    wait(driver, lambda d: button(d, f"Start {STANDARD}") is not None)
    press(driver, f"Start {STANDARD}")
    ok(wait(driver, lambda d: button(d, f"Pause {STANDARD}") is not None) is not None,
       "a running standard job has a Pause button")
    press(driver, f"Pause {STANDARD}")
    ok(wait(driver, lambda d: "RUNNING, paused" in (row(d, STANDARD) or "")
            and button(d, f"Resume {STANDARD}") is not None) is not None,
       "Pause: the run shows as paused, with a Resume button", row(driver, STANDARD) or "")
    press(driver, f"Resume {STANDARD}")
    ok(wait(driver, lambda d: "paused" not in (row(d, STANDARD) or "paused")
            and button(d, f"Pause {STANDARD}") is not None) is not None,
       "Resume: no longer paused", row(driver, STANDARD) or "")
    ok(wait(driver, lambda d: button(d, f"Finish {STANDARD}") is not None) is not None,
       "a running standard job has a Finish button")
    press(driver, f"Finish {STANDARD}")
    ok(wait(driver, lambda d: "SUCCEEDED" in (row(d, STANDARD) or ""), 30) is not None,
       "Finish: the run SUCCEEDED", row(driver, STANDARD) or "")
    shot(driver, "4-jobs-after")

    # search, with the matches highlighted
    driver.get(BASE + "/#/search")
    ok(wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#search-index option")) is not None,
       "the search page offers the indexes")
    q = driver.find_element(By.ID, "search-q")
    q.send_keys("heron")
    q.send_keys(Keys.ENTER)
    ok(wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#search-hits li")) is not None,
       "a search finds documents")
    mark = text(driver, "#search-hits mark")
    ok(mark.lower().startswith("heron"), "the snippets highlight the matches", mark or "no <mark>")
    ok("documents match" in text(driver, "#search-total"), "the number of matches is shown")
    shot(driver, "5-search")

    # the facets narrow the search, More adds the next page by the cursor,
    # and the order re-sorts
    ok(wait(driver, lambda d: re.search(r"txt\s*1\D?000", text(d, "#search-facets"))) is not None,
       "the facets are shown with their counts", text(driver, "#search-facets"))
    hits = lambda d: len(d.find_elements(By.CSS_SELECTOR, "#search-hits li"))
    ok(hits(driver) == 20, "a page of 20 hits", str(hits(driver)))
    driver.find_element(By.ID, "search-more").click()
    ok(wait(driver, lambda d: hits(d) == 40) is not None, "More results adds the next 20",
       str(hits(driver)))
    ids = driver.execute_script(
        "return [...document.querySelectorAll('#search-hits .id')].map(e => e.textContent);")
    ok(len(set(ids)) == 40, "no hit twice across the pages", str(len(set(ids))))
    facet = driver.find_elements(By.XPATH, '//aside[@id="search-facets"]//button[text()="txt"]')
    ok(bool(facet), "a facet value is a button")
    if facet:
        facet[0].click()
        ok(wait(driver, lambda d: d.find_element(By.ID, "search-q").get_attribute("value") == "heron ext:txt")
           is not None, "a facet value adds its filter to the query",
           driver.find_element(By.ID, "search-q").get_attribute("value"))
        ok(wait(driver, lambda d: hits(d) == 20) is not None, "the narrowed search shows its first page")
    Select(driver.find_element(By.ID, "search-sort")).select_by_visible_text("largest")
    ok(wait(driver, lambda d: text(d, "#search-hits .id").endswith("/d10/f100.txt")) is not None,
       "the order 'largest' puts the largest file first", text(driver, "#search-hits .id"))
    meta = text(driver, "#search-hits .meta")
    ok(re.search(r"\d (B|KiB)$", meta) is not None, "a hit shows its size", meta)
    shot(driver, "5b-search-facets")

    # a narrow screen: nothing wider than the window
    driver.set_window_size(390, 844)
    driver.get(BASE + "/")
    wait(driver, lambda d: row(d, CRAWL) is not None)
    over = driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth")
    ok(over <= 0, f"readable on a narrow screen: no page-wide horizontal scroll ({over} px over)")
    shot(driver, "6-narrow")


if __name__ == "__main__":
    sys.exit(main())
