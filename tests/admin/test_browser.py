"""The dead-letter requeue, driven in a real headless Chromium through the admin.

A superuser logs in through the login form, selects one dead letter on the list, runs
the "requeue" action from the action menu, and the database shows the row moved back
to the messages table. Chromium and chromedriver come from Debian
(``scripts/system-packages.sh``, run by ``make services``); Selenium from the ``dev``
extra. The test fails, never skips, when either is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from toolkit_batteries.queue.models import DeadLetter, Message

from .conftest import dead_letter

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Seconds any page may take to show what the test waits for.
PAGE_TIMEOUT = 20


@pytest.fixture
def browser() -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for program in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(program):
            pytest.fail(f"{program} is missing; run scripts/system-packages.sh (make services)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


def test_a_superuser_requeues_a_dead_letter_in_the_browser(
    live_server, browser, queue, django_user_model
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    django_user_model.objects.create_superuser("ops", "ops@example.com", "correct horse 9")
    chosen = dead_letter(queue, "emails", b'{"to": "ada@example.com"}', "smtp refused")
    kept = dead_letter(queue, "emails", b'{"to": "bob@example.com"}', "smtp refused")
    wait = WebDriverWait(browser, PAGE_TIMEOUT)

    browser.get(f"{live_server.url}/admin/login/?next=/admin/toolkit_queue/deadletter/")
    browser.find_element(By.ID, "id_username").send_keys("ops")
    browser.find_element(By.ID, "id_password").send_keys("correct horse 9")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    row = f'input[name="_selected_action"][value="{chosen}"]'
    wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, row))).click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("requeue")
    browser.find_element(By.CSS_SELECTOR, 'button[name="index"]').click()
    notice = wait.until(ready.visibility_of_element_located((By.CSS_SELECTOR, ".messagelist")))
    assert "Requeued 1 dead letter(s)." in notice.text

    assert list(DeadLetter.objects.values_list("id", flat=True)) == [int(kept)]
    moved = Message.objects.get(id=int(chosen))
    assert (moved.topic, bytes(moved.body), moved.attempts) == (
        "emails",
        b'{"to": "ada@example.com"}',
        0,
    )
    assert not moved.leased
