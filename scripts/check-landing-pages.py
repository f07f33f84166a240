#!/usr/bin/env python3
"""Checks the landing pages of `passforge build`, served by `passforge serve`, in a real headless Chromium.

In one browser session (selenium), on a live pass's page and a voided pass's page:
  - as a desktop (Chromium's own user agent): the page shows a QR code, and zxing-cpp reads a screenshot of it
    back as the page's own URL (its og:url, whose path is the path the page was loaded from);
  - as an iPhone (user agent and screen emulated): the badge links the download, and the .pkpass fetched from
    that link is signed: `openssl smime -verify` accepts its signature over manifest.json against --ca, and
    the manifest's digest of every file (SHA-1; an order's SHA-256) matches the file;
  - the same for --order, whose badge downloads the signed .order;
  - with the browser's language French (Accept-Language fr): the French page comes, holding --french;
  - the voided pass's page has no badge, no download link and no QR code;
  - on every page: no request leaves the page's own host (the DevTools network log and
    performance.getEntriesByType('resource')), no console error, no alert, and --hostile shows as text
    (in the page text, and no <img> element made from it).
Prints one line per check and a JSON summary; exits 1 on any failure.

Usage: check-landing-pages.py --base URL --live CAPABILITY --voided CAPABILITY --ca ROOT.pem
                              --hostile TEXT --french TEXT [--order CAPABILITY]
"""
import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile

import zxingcpp
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1500", "--force-device-scale-factor=1", "--lang=en-US"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-US,en"})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


class Check:
    def __init__(self, driver, base):
        self.driver = driver
        self.host = urllib.parse.urlsplit(base).netloc
        self.failures = []

    def expect(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            self.failures.append(what)

    def load(self, url, user_agent=None, language="en-US,en", mobile=False):
        """Loads `url` as the given browser; drains the logs of the previous page first."""
        self.driver.get_log("browser")
        self.driver.get_log("performance")
        agent = user_agent or self.driver.execute_script("return navigator.userAgent").replace("Headless", "")
        # Accept-Language goes with the override: the one way to change it for a running session.
        self.driver.execute_cdp_cmd("Network.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": language})
        if mobile:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        else:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.get(url)

    def stays_home(self, name, hostile):
        """No request outside the page's host, no console error, no alert, the hostile value as text."""
        requested = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                requested.append(message["params"]["request"]["url"])
        requested += self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name).concat([document.URL])")
        away = sorted({u for u in requested
                       if not u.startswith("data:") and urllib.parse.urlsplit(u).netloc != self.host})
        self.expect(requested and not away,
                    f"{name}: every request stays on {self.host} ({len(requested)} seen; away: {away})")
        errors = [e.get("message") for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]
        self.expect(not errors, f"{name}: no console error {errors}")
        try:
            text = self.driver.switch_to.alert.text
            self.driver.switch_to.alert.dismiss()
            self.expect(False, f"{name}: no alert (one said {text!r})")
        except NoAlertPresentException:
            self.expect(True, f"{name}: no alert")
        if hostile:
            images = self.driver.execute_script(
                "return [...document.images].map(i => i.getAttribute('src')).filter(s => s === 'x')")
            body = self.driver.find_element(By.TAG_NAME, "body").text
            self.expect(hostile in body and not images, f"{name}: the hostile value is text, no <img> made from it")


def desktop(check, url, hostile):
    check.load(url)
    own = check.driver.find_element(By.CSS_SELECTOR, "meta[property='og:url']").get_attribute("content")
    # The host answers the page in the browser's language: its own URL is then <capability>.<language>.html.
    path = urllib.parse.urlsplit(url).path
    language = check.driver.execute_script("return document.documentElement.lang")
    check.expect(urllib.parse.urlsplit(own).path in (path, f"{path[:-len('.html')]}.{language}.html"),
                 f"desktop: og:url {own} is the page's own path (loaded {path}, lang {language!r})")
    codes = check.driver.find_elements(By.CSS_SELECTOR, ".handoff")
    shown = [c for c in codes if c.is_displayed()]
    check.expect(bool(shown), "desktop: the QR code is shown")
    png = shown[0].screenshot_as_png if shown else check.driver.get_screenshot_as_png()
    decoded = [r.text for r in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]
    check.expect(decoded == [own], f"desktop: the QR code reads {own} (decoded {decoded})")
    check.stays_home("desktop", hostile)


def verify_package(check, name, data, ca):
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
        result = subprocess.run(
            ["openssl", "smime", "-verify", "-binary", "-inform", "DER", "-in", "signature", "-content",
             "manifest.json", "-CAfile", ca, "-purpose", "any", "-out", os.devnull],
            cwd=folder, capture_output=True, text=True)
        check.expect(result.returncode == 0, f"{name}: openssl verifies the signature {result.stderr.strip()}")
        with open(os.path.join(folder, "manifest.json"), "rb") as handle:
            manifest = json.load(handle)
        names = {n for n in archive.namelist() if n not in ("manifest.json", "signature")}
        # Passes list SHA-1 digests, orders SHA-256 (Apple's PassKit and Wallet Orders package formats).
        digest = hashlib.sha256 if "order.json" in names else hashlib.sha1
        wrong = [n for n in names if manifest.get(n) != digest(archive.read(n)).hexdigest()]
        check.expect(bool({"pass.json", "order.json"} & names) and not wrong and set(manifest) == names,
                     f"{name}: the manifest lists every file with its digest (wrong: {wrong})")


def iphone(check, url, ca, hostile, name="iphone", extension=".pkpass", media="application/vnd.apple.pkpass"):
    """The badge links the package (a pass, or an order's .order), and that package is signed."""
    check.load(url, user_agent=IPHONE, mobile=True)
    check.expect(check.driver.execute_script("return navigator.userAgent") == IPHONE, f"{name}: the iPhone user agent")
    badges = [b for b in check.driver.find_elements(By.CSS_SELECTOR, "a.badge") if b.is_displayed()]
    check.expect(bool(badges), f"{name}: the badge is shown")
    href = badges[0].get_attribute("href") if badges else ""
    check.expect(href.endswith(extension), f"{name}: the badge links the {extension} ({href})")
    check.stays_home(name, hostile)
    if href:
        with urllib.request.urlopen(href) as response:
            kind, data = response.headers.get("Content-Type"), response.read()
        check.expect(kind == media, f"{name}: the download is {media} ({kind})")
        verify_package(check, name, data, ca)


def french(check, url, text, hostile):
    check.load(url, language="fr-FR,fr")
    language = check.driver.execute_script("return document.documentElement.lang")
    body = check.driver.find_element(By.TAG_NAME, "body").text
    check.expect(language == "fr" and text in body, f"french: the French page comes (lang {language!r})")
    check.stays_home("french", hostile)


def voided(check, url):
    check.load(url, user_agent=IPHONE, mobile=True)
    links = [a.get_attribute("href") for a in check.driver.find_elements(By.TAG_NAME, "a")]
    badges = check.driver.find_elements(By.CSS_SELECTOR, ".badge, .handoff")
    check.expect(not badges and not any(h and ".pkpass" in h for h in links),
                 f"voided: no badge, no QR code, no download link ({links})")
    check.stays_home("voided", None)


def main():
    parser = argparse.ArgumentParser()
    for name in ("--base", "--live", "--voided", "--ca", "--hostile", "--french"):
        parser.add_argument(name, required=True)
    parser.add_argument("--order", help="an order's capability: its page's badge downloads the signed .order")
    args = parser.parse_args()
    page = lambda capability: f"{args.base.rstrip('/')}/download/{capability}.html"
    driver = browser()
    check = Check(driver, args.base)
    try:
        desktop(check, page(args.live), args.hostile)
        iphone(check, page(args.live), args.ca, args.hostile)
        french(check, page(args.live), args.french, args.hostile)
        voided(check, page(args.voided))
        if args.order:
            iphone(check, page(args.order), args.ca, None, "order", ".order", "application/vnd.apple.finance.order")
    finally:
        driver.quit()
    print(json.dumps({"failures": len(check.failures)}))
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
