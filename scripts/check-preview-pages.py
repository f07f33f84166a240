#!/usr/bin/env python3
"""Checks `passforge preview` pages in a real headless Chromium (selenium).

For every pass page of a gallery, in one browser session (order pages: see check_order_page):
  - takes a screenshot of the pass's front and decodes every barcode in it
    with zxing-cpp: the first barcode of the pass must read back as its message;
  - every field's label (in the page's first language, pass.strings applied)
    and every plain value are in the page text; formatted values (dates,
    numbers with numberStyle or currencyCode) are shown, not raw;
  - the browser console has no errors;
  - switching to each other language shows that language's labels.
Prints one line per page and a JSON summary; exits 1 on any failure.

Usage: check-preview-pages.py GALLERY_DIR [--screenshots DIR] [--docs-screenshot FILE SERIAL]
"""
import argparse
import io
import json
import os
import sys

import zxingcpp
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

FORMATTED_KEYS = ("dateStyle", "timeStyle", "numberStyle", "currencyCode")
AREAS = ("headerFields", "primaryFields", "secondaryFields", "auxiliaryFields", "footerFields", "backFields", "additionalInfoFields")
STYLES = ("boardingPass", "coupon", "eventTicket", "generic", "storeCard", "posterGeneric")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1500", "--force-device-scale-factor=1", "--allow-file-access-from-files"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def fields_of(pass_json):
    style = next((s for s in STYLES if s in pass_json), None)
    if not style:
        return []
    return [field for area in AREAS for field in pass_json[style].get(area, [])]


def visible_text(driver):
    return driver.find_element(By.TAG_NAME, "body").text


def check_page(driver, path, screenshots):
    problems = []
    driver.get("file://" + os.path.abspath(path))
    pass_json = json.loads(driver.find_element(By.ID, "pass-json").get_attribute("textContent"))
    tables = json.loads(driver.find_element(By.ID, "pass-strings").get_attribute("textContent"))
    languages = list(tables.keys())
    first = tables[languages[0]]
    serial = pass_json.get("serialNumber")

    # Barcodes: decode the screenshot of the visible front.
    barcodes = pass_json.get("barcodes") or ([pass_json["barcode"]] if "barcode" in pass_json else [])
    front = next(e for e in driver.find_elements(By.CSS_SELECTOR, "section.language .front") if e.is_displayed())
    driver.execute_script("arguments[0].scrollIntoView()", front)
    png = front.screenshot_as_png
    if screenshots:
        with open(os.path.join(screenshots, f"{serial}.png"), "wb") as handle:
            handle.write(png)
    decoded = [result.text for result in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]
    if barcodes:
        if barcodes[0]["message"] not in decoded:
            problems.append(f"barcode {barcodes[0]['format']} did not decode to {barcodes[0]['message']!r} (decoded: {decoded!r})")
    elif decoded:
        problems.append(f"a barcode decoded although the pass has none: {decoded!r}")

    # Labels and values in the first language.
    text = visible_text(driver)
    for field in fields_of(pass_json):
        label = field.get("label")
        if isinstance(label, str) and label and first.get(label, label) not in text:
            problems.append(f"label {first.get(label, label)!r} of field {field.get('key')} is not in the page text")
        value = field.get("value")
        key = field.get("key")
        shown = driver.find_elements(By.CSS_SELECTOR, f"section.language:not([hidden]) [data-key='{key}']")
        if not shown:
            problems.append(f"field {key} is not on the page")
            continue
        shown_text = shown[0].text
        if any(k in field for k in FORMATTED_KEYS):
            if not shown_text.strip() or (isinstance(value, str) and value in shown_text):
                problems.append(f"field {key}: formatted value missing or raw ({shown_text!r})")
        elif isinstance(value, str):
            if first.get(value, value) not in text:
                problems.append(f"value {first.get(value, value)!r} of field {key} is not in the page text")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if str(value) not in shown_text:
                problems.append(f"value {value!r} of field {key} is not shown ({shown_text!r})")

    # Every other language: its own labels once selected.
    for language in languages[1:]:
        Select(driver.find_element(By.ID, "language")).select_by_value(language)
        text = visible_text(driver)
        table = tables[language]
        changed = [f for f in fields_of(pass_json) if isinstance(f.get("label"), str) and table.get(f["label"], f["label"]) != first.get(f["label"], f["label"])]
        if not changed:
            problems.append(f"language {language}: no label differs from {languages[0]}")
        for field in changed:
            if table[field["label"]] not in text:
                problems.append(f"language {language}: label {table[field['label']]!r} of field {field.get('key')} not shown")
        Select(driver.find_element(By.ID, "language")).select_by_value(languages[0])

    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"console error: {entry.get('message')}")
    return serial, len(barcodes), languages, problems


def check_order_page(driver, path, screenshots):
    """An order page: the pickup barcodes decode from a screenshot, the merchant, order number and line
    items (order.strings applied) are in the page text, and the console has no errors."""
    problems = []
    driver.get("file://" + os.path.abspath(path))
    order = json.loads(driver.find_element(By.ID, "order-json").get_attribute("textContent"))
    tables = json.loads(driver.find_element(By.ID, "order-strings").get_attribute("textContent"))
    languages = list(tables.keys())
    first = tables[languages[0]]
    identifier = order.get("orderIdentifier") or os.path.basename(path)[:-len(".html")]
    view = next(e for e in driver.find_elements(By.CSS_SELECTOR, "section.language .order") if e.is_displayed())
    png = view.screenshot_as_png
    if screenshots:
        with open(os.path.join(screenshots, f"{identifier}.png"), "wb") as handle:
            handle.write(png)
    decoded = [result.text for result in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]
    barcodes = [f["barcode"] for f in order.get("fulfillments", []) if isinstance(f.get("barcode"), dict)]
    for barcode in barcodes:
        if barcode.get("message") not in decoded:
            problems.append(f"pickup barcode {barcode.get('format')} did not decode to {barcode.get('message')!r} (decoded: {decoded!r})")
    text = visible_text(driver)
    shown = [order.get("merchant", {}).get("displayName"), order.get("orderNumber")]
    shown += [item.get("title") for item in order.get("lineItems", [])]
    for value in shown:
        if isinstance(value, str) and first.get(value, value) not in text:
            problems.append(f"{first.get(value, value)!r} is not in the page text")
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"console error: {entry.get('message')}")
    return identifier, len(barcodes), languages, problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("gallery")
    parser.add_argument("--screenshots")
    parser.add_argument("--docs-screenshot", nargs=2, metavar=("FILE", "SERIAL"))
    args = parser.parse_args()
    pages = sorted(os.path.join(root, name) for root, _, files in os.walk(args.gallery) for name in files
                   if name.endswith(".html") and root != args.gallery.rstrip("/"))
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    driver = browser()
    failures = 0
    summary = []
    try:
        # The index: every page is linked from it, and it loads without console errors.
        driver.get("file://" + os.path.abspath(os.path.join(args.gallery, "index.html")))
        links = {os.path.normpath(a.get_attribute("href").replace("file://", "")) for a in driver.find_elements(By.CSS_SELECTOR, "a.card")}
        for page in pages:
            if os.path.abspath(page) not in links:
                print(f"FAIL index.html: no link to {page}")
                failures += 1
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                print(f"FAIL index.html: console error: {entry.get('message')}")
                failures += 1
        for page in pages:
            with open(page, encoding="utf-8") as handle:
                is_order = 'id="order-json"' in handle.read()
            serial, barcode_count, languages, problems = (check_order_page if is_order else check_page)(driver, page, args.screenshots)
            summary.append({"page": page, "serial": serial, "barcodes": barcode_count, "languages": languages, "problems": problems})
            if problems:
                failures += 1
                print(f"FAIL {page}:\n  " + "\n  ".join(problems))
            else:
                print(f"ok   {page} ({barcode_count} barcode, languages {', '.join(languages)})")
        if args.docs_screenshot:
            target, serial = args.docs_screenshot
            page = next(p for p in pages if os.path.basename(p) == f"{serial}.html")
            driver.set_window_size(900, 1050)
            driver.get("file://" + os.path.abspath(page))
            driver.save_screenshot(target)
    finally:
        driver.quit()
    print(json.dumps({"pages": len(pages), "failures": failures}))
    sys.exit(1 if failures or not pages else 0)


if __name__ == "__main__":
    main()
