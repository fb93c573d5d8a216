"""The person in the OAuth flow, played by a real headless Chromium through Selenium: opens the
authorization URL an MCP client produced, signs in on mdvault's page with the API key when asked,
and on the consent page grants read-only access to one folder, then lets the browser follow the
redirect to the client's callback. Used by tests/mcp_oauth_client.mjs (scripts/mcp-oauth.sh).

    python3 tests/oauth_consent.py AUTHORIZATION_URL

Environment: MDVAULT_KEY (the server's API key), OAUTH_ALLOW (the folder to allow), OAUTH_NAME
(the client's name in the list and the audit trail), MDVAULT_CHROMIUM and MDVAULT_CHROMEDRIVER
(default /usr/bin/chromium and /usr/bin/chromedriver). Prints the URL the browser ended at
(the callback with its code) and exits 0; exits 1 naming the step that failed.
"""

import os
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def browser(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("MDVAULT_CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    service = Service(executable_path=os.environ.get("MDVAULT_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=opts)


def main():
    url = sys.argv[1]
    key, allow, name = os.environ["MDVAULT_KEY"], os.environ["OAUTH_ALLOW"], os.environ["OAUTH_NAME"]
    with tempfile.TemporaryDirectory(prefix="mdvault-consent.") as profile:
        d = browser(profile)
        wait = WebDriverWait(d, 30)
        try:
            d.get(url)
            # The authorization request lands on the sign-in form (no session yet).
            wait.until(EC.presence_of_element_located((By.ID, "key")))
            d.find_element(By.ID, "key").send_keys(key)
            d.find_element(By.CSS_SELECTOR, "form[action='/ui/login'] button[type=submit]").click()
            wait.until(EC.presence_of_element_located((By.ID, "consent")))
            d.find_element(By.CSS_SELECTOR, "input[name=access][value=read]").click()
            d.find_element(By.ID, "consent-allow").send_keys(allow)
            field = d.find_element(By.ID, "consent-name")
            field.clear()
            field.send_keys(name)
            d.find_element(By.ID, "consent-allow-button").click()
            # The redirect leaves mdvault for the client's own listener.
            wait.until(lambda drv: "/ui/" not in drv.current_url and "code=" in drv.current_url)
            print(d.current_url, flush=True)
        except Exception as e:  # the step and the page, for whoever reads the failure
            print(f"consent failed at {d.current_url}: {e!r}\n{d.page_source[:2000]}", file=sys.stderr)
            sys.exit(1)
        finally:
            d.quit()


if __name__ == "__main__":
    main()
