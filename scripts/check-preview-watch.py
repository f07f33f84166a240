#!/usr/bin/env python3
"""Checks `passforge preview --watch` in a real headless Chromium (selenium).

Opens PAGE_URL, then edits CONTENT_FILE (OLD -> NEW): the page must show
SHOWN within WATCH_DEADLINE seconds (default 2) without being reloaded by
hand. Then breaks the file (appends an unterminated YAML flow list): the page
must show the error with the file's name and a line number within that time.
When the page has a language menu, each language must show its own
section when chosen (the page's script works). With --literal TEXT, TEXT
(say, pass data holding `<!--<script>`) must be shown as text.
Exits 1 on failure.

Usage: check-preview-watch.py PAGE_URL CONTENT_FILE OLD NEW SHOWN [--literal TEXT]
"""
import argparse
import os
import re
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def main():
    parser = argparse.ArgumentParser()
    for name in ("url", "content_file", "old", "new", "shown"):
        parser.add_argument(name)
    parser.add_argument("--literal")
    args = parser.parse_args()
    url, content_file, old, new, shown = args.url, args.content_file, args.old, args.new, args.shown
    deadline = float(os.environ.get("WATCH_DEADLINE", "2"))
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    failures = []
    try:
        driver.get(url)
        def body(d):
            # The page reloads itself mid-poll: an element of the old page is stale then, which is
            # "not yet", not a failure (WebDriverWait ignores only NoSuchElementException).
            try:
                return d.find_element(By.TAG_NAME, "body").text
            except WebDriverException:
                return ""
        if shown in body(driver):
            failures.append(f"{shown!r} is on the page before the edit")
        if args.literal and args.literal not in body(driver):
            failures.append(f"{args.literal!r} is not shown as text; the page shows: {body(driver)[:300]!r}")
        menus = driver.find_elements(By.ID, "language")
        if menus:
            languages = [option.get_attribute("value") for option in Select(menus[0]).options]
            for language in languages[1:] + languages[:1]:
                Select(menus[0]).select_by_value(language)
                shown_languages = [s.get_attribute("data-lang") for s in driver.find_elements(By.CSS_SELECTOR, "section.language") if s.is_displayed()]
                if shown_languages != [language]:
                    failures.append(f"choosing {language} shows the sections {shown_languages}")
            print("languages switched: " + ", ".join(languages))
        # Wait until the page's event stream is open, so that the edit is not missed.
        try:
            WebDriverWait(driver, 5).until(lambda d: d.execute_script("return document.documentElement.dataset.live === 'connected'"))
        except Exception:
            failures.append("the live-reload script did not connect to the event stream")

        text = open(content_file, encoding="utf-8").read()
        if old not in text:
            failures.append(f"{old!r} is not in {content_file}")
        started = time.monotonic()
        with open(content_file, "w", encoding="utf-8") as handle:
            handle.write(text.replace(old, new))
        try:
            WebDriverWait(driver, deadline, poll_frequency=0.05).until(lambda d: shown in body(d))
            print(f"edit shown after {time.monotonic() - started:.2f} s")
        except Exception:
            failures.append(f"{shown!r} did not appear within {deadline:g} s of the edit; the page shows: {body(driver)[:300]!r}")

        started = time.monotonic()
        with open(content_file, "a", encoding="utf-8") as handle:
            handle.write("\nbroken: [unterminated\n")
        name = os.path.basename(content_file)
        try:
            WebDriverWait(driver, deadline, poll_frequency=0.05, ignored_exceptions=(WebDriverException,)).until(
                lambda d: d.find_elements(By.ID, "errors") and re.search(re.escape(name) + r":\d+", d.find_element(By.ID, "errors").text))
            print(f"error shown after {time.monotonic() - started:.2f} s: " + driver.find_element(By.ID, "errors").text.splitlines()[1])
        except Exception:
            failures.append(f"no error with {name}:LINE on the page within {deadline:g} s of breaking the file")
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE" and "favicon" not in entry.get("message", ""):
                failures.append(f"console error: {entry.get('message')}")
    finally:
        driver.quit()
    for failure in failures:
        print("FAIL " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
