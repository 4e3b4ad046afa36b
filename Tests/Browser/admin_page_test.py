"""The admin page in a real Chromium (Selenium + chromedriver from Debian).

Starts an origin (Python's http.server on a free loopback port), `sluice serve` with the page's
admin port and a rule that strips nulls and one that rejects 5xx, and a headless Chromium on the
page. Traffic goes through the proxy with plain sockets; the checks are made in the page the way
a person would see it. Screenshots of every view go to .build/ui-artifacts/.

Run by scripts/browser-test.sh (which makes the venv); SLUICE_BIN names the binary.
"""
import http.client
import http.server
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, ".build", "ui-artifacts")
SLUICE = os.environ.get("SLUICE_BIN", os.path.join(ROOT, ".build", "debug", "sluice"))
TOKEN = "page-t0ken"
MIB = 1 << 20
# The WebSocket origin and clients (the `websockets` package, in the venv scripts/setup.sh --tests makes).
TEST_PYTHON = os.path.join(ROOT, ".build", "test-venv", "bin", "python")
WEBSOCKET = os.path.join(ROOT, "Tests", "Fixtures", "websocket")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counts = {}
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def send(self, status, content_type, body, cache="max-age=600"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    posted = []

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        Origin.posted.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send(200, "text/plain", b"got %d bytes" % len(body), "no-store")

    def do_GET(self):
        path = self.path.split("?")[0]
        with Origin.lock:
            Origin.counts[path] = Origin.counts.get(path, 0) + 1
        if path == "/api/user":
            body = json.dumps({"id": 7, "name": "Ada", "middle_name": None,
                               "address": {"city": "London", "zip": None}, "tags": ["a", "b"]})
            self.send(200, "application/json", body.encode(), "no-store")
        elif path == "/page/xss":
            self.send(200, "text/html", b"<script>window.__xss = 1</script><img src=x onerror=\"window.__xss = 2\"><b>bold?</b>")
        elif path == "/shop/items":
            body = json.dumps({"items": [{"id": 1, "price": 12.5}, {"id": 2, "price": None}], "total": 2})
            self.send(200, "application/json", body.encode(), "no-store")
        elif path == "/bin/blob":
            self.send(200, "application/octet-stream", BLOB, "no-store")
        elif path == "/page/broken":
            self.send(500, "text/html", b"<h1>origin failure</h1>", "no-store")
        elif path == "/page/cached":
            self.send(200, "text/plain", b"stored text", "max-age=600")
        elif path == "/page/many":
            self.send(200, "text/plain", b"x" * 100, "max-age=600")
        elif path == "/slow/100m":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(100 * MIB))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            piece = b"z" * MIB
            try:
                for _ in range(100):
                    self.wfile.write(piece)
                    time.sleep(0.06)
            except OSError:
                pass
        else:
            self.send(404, "text/plain", b"not here", "no-store")


# Bytes that are no UTF-8 (a PNG's signature, 0xff, a NUL): a HAR keeps them only as base64.
BLOB = b"\x89PNG\r\n\x1a\n\xff\x00binary\xfe"


def proxy_get(proxy_port, url, read=True):
    connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=30)
    connection.request("GET", url)
    response = connection.getresponse()
    if not read:
        return response, connection  # the caller reads the body, then closes
    body = response.read()
    connection.close()
    return response, body



class AppOrigin(http.server.BaseHTTPRequestHandler):
    """A small web app for the HAR test: a page that fetches JSON and posts a form."""
    protocol_version = "HTTP/1.1"
    PAGE = b"""<!doctype html><title>shop</title><body><p id=out>loading</p><script>
(async () => {
  const items = await fetch("/app/items.json?lang=en&page=1");
  const data = await items.json();
  const sent = await fetch("/app/orders", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ item: data.items[0].id, qty: 2 }) });
  const order = await sent.json();
  document.getElementById("out").textContent = data.items.map((i) => i.name).join(",") + " / order " + order.order +
    " for " + order.got.qty + " / " + (items.headers.get("cache-status") || "live");
})();
</script>"""

    def log_message(self, *args):
        pass

    def reply(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/app/":
            self.reply(200, "text/html; charset=utf-8", self.PAGE)
        elif self.path.startswith("/app/items.json"):
            self.reply(200, "application/json", json.dumps({"items": [{"id": 3, "name": "tea"},
                                                                        {"id": 4, "name": "cake"}]}).encode())
        else:
            self.reply(404, "text/plain", b"not here")

    def do_POST(self):
        got = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.reply(201, "application/json", json.dumps({"order": 91, "got": got}).encode())


def chromium_through(proxy_port, performance_log=False):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--proxy-server=http://127.0.0.1:%d" % proxy_port, "--proxy-bypass-list=<-loopback>"]:
        options.add_argument(argument)
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def har_from_chromium(client):
    """A HAR 1.2 document from Chromium's own network records (the DevTools protocol events and
    response bodies DevTools' "Export HAR" is made from), written as DevTools writes it."""
    requests, responses, finished = {}, {}, []
    for entry in client.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            requests[params["requestId"]] = params
        elif message["method"] == "Network.responseReceived":
            responses[params["requestId"]] = params["response"]
        elif message["method"] == "Network.loadingFinished":
            finished.append(params["requestId"])
    entries = []
    for request_id in finished:
        sent, got = requests.get(request_id), responses.get(request_id)
        if not sent or not got:
            continue
        content = {"size": 0, "mimeType": got.get("mimeType", "")}
        try:
            body = client.execute_cdp_cmd("Network.getResponseBody", {"requestId": request_id})
            content["text"] = body["body"]
            if body.get("base64Encoded"):
                content["encoding"] = "base64"
            content["size"] = len(body["body"])
        except Exception:
            pass
        request = sent["request"]
        har_request = {"method": request["method"], "url": request["url"], "httpVersion": got.get("protocol", "http/1.1"),
                       "headers": [{"name": k, "value": v} for k, v in request["headers"].items()],
                       "queryString": [], "cookies": [], "headersSize": -1, "bodySize": len(request.get("postData", ""))}
        if "postData" in request:
            har_request["postData"] = {"mimeType": request["headers"].get("Content-Type", ""), "text": request["postData"]}
        started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sent["wallTime"])) + ".%03dZ" % (sent["wallTime"] % 1 * 1000)
        entries.append({"startedDateTime": started, "time": 1.5, "_resourceType": sent.get("type", "").lower(),
                        "request": har_request,
                        "response": {"status": got["status"], "statusText": got.get("statusText", ""),
                                     "httpVersion": got.get("protocol", "http/1.1"),
                                     "headers": [{"name": k, "value": v} for k, v in got["headers"].items()],
                                     "cookies": [], "content": content, "redirectURL": "", "headersSize": -1,
                                     "bodySize": -1, "_transferSize": got.get("encodedDataLength", -1)},
                        "cache": {}, "timings": {"blocked": -1, "dns": -1, "ssl": -1, "connect": -1, "send": 0,
                                                 "wait": 1, "receive": 0.5}})
    return {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [],
                    "entries": entries}}


class AdminPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        cls.origin.daemon_threads = True
        threading.Thread(target=cls.origin.serve_forever, daemon=True).start()
        cls.origin_url = "http://127.0.0.1:%d" % cls.origin.server_address[1]
        cls.proxy_port, cls.admin_port = free_port(), free_port()
        cls.directory = tempfile.mkdtemp(prefix="sluice-page-")
        # A TLS WebSocket origin for localhost (a self-signed certificate Sluice is told to trust).
        cls.ws_cert = os.path.join(cls.directory, "ws.pem")
        cls.ws_key = os.path.join(cls.directory, "ws.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", cls.ws_key, "-out", cls.ws_cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
        cls.ws_origin = subprocess.Popen([TEST_PYTHON, os.path.join(WEBSOCKET, "origin.py"), cls.ws_cert, cls.ws_key],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        cls.ws_port = int(cls.ws_origin.stdout.readline())
        config = os.path.join(cls.directory, "sluice.yaml")
        with open(config, "w") as f:
            f.write("""
listen: 127.0.0.1:%d
admin:
  listen: 127.0.0.1:%d
  token: %s
cache:
  path: %s/cache.sqlite
log:
  access: false
connect_ports: [443, %d, %d]
tls: { intercept: ["localhost"], ca_cert: %s/ca.pem, ca_key: %s/ca.key }
defaults: { tls: { ca_file: %s } }
rules:
  - name: user-api
    match: { path: "/api/*" }
    strip_json_nulls: true
  - name: pages-must-succeed
    match: { path: "/page/*" }
    accept: { status: ["200-299"] }
  - name: shop
    match: { path: "/shop/**" }
    contract: { schema: items.schema.json, on_violation: report }
  - name: flaky
    match: { path: "/flaky/**" }
    faults: { status: { code: 503, retry_after: 1, rate: 1 } }
""" % (cls.proxy_port, cls.admin_port, TOKEN, cls.directory, cls.origin.server_address[1], cls.ws_port,
       cls.directory, cls.directory, cls.ws_cert))
        with open(os.path.join(cls.directory, "items.schema.json"), "w") as f:
            json.dump({"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {
                "type": "object", "required": ["id", "price"],
                "properties": {"id": {"type": "integer"}, "price": {"type": "number"}}}}}}, f)
        cls.log = open(os.path.join(ARTIFACTS, "sluice.log"), "w")
        cls.sluice = subprocess.Popen([SLUICE, "serve", "--config", config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/health" % cls.admin_port, timeout=1).read()
                break
            except OSError:
                if time.time() > deadline or cls.sluice.poll() is not None:
                    raise RuntimeError("sluice did not start; see .build/ui-artifacts/sluice.log")
                time.sleep(0.1)
        options = Options()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1500,950", "--no-proxy-server"]:
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        cls.browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        cls.browser.set_script_timeout(30)
        cls.page = "http://127.0.0.1:%d/" % cls.admin_port
        cls.browser.get(cls.page)
        cls.wait(lambda b: b.find_element(By.ID, "stream-state").text == "live", 10)
        cls.errors = []

    @classmethod
    def tearDownClass(cls):
        logs = []
        try:
            logs = cls.browser.get_log("browser")
        except Exception:
            pass
        with open(os.path.join(ARTIFACTS, "console.log"), "w") as f:
            for entry in logs:
                f.write("%s %s\n" % (entry.get("level"), entry.get("message")))
        cls.browser.quit()
        cls.sluice.terminate()
        cls.sluice.wait(15)
        cls.log.close()
        cls.origin.shutdown()
        cls.ws_origin.kill()

    @classmethod
    def wait(cls, condition, seconds=5):
        # Lists are redrawn as events arrive: an element found a moment ago may be gone.
        return WebDriverWait(cls.browser, seconds, poll_frequency=0.05,
                             ignored_exceptions=[StaleElementReferenceException]).until(condition)

    def click_row(self, table, text, seconds=5):
        """Clicks the row of `table` whose text contains `text` (lists are redrawn: retried)."""
        deadline = time.time() + seconds
        while True:
            try:
                # One query in the page (not a round trip per row: a list holds hundreds).
                rows = self.browser.find_elements(
                    By.XPATH, "//table[@id='%s']/tbody/tr[td[contains(., '%s')]]" % (table, text))
                if rows:
                    rows[0].click()
                    return
            except StaleElementReferenceException:
                pass
            if time.time() > deadline:
                raise AssertionError("no row with %r in #%s" % (text, table))
            time.sleep(0.05)

    def admin_call(self, method, path, payload=None):
        """The admin API with the token; the JSON answer (None when empty)."""
        request = urllib.request.Request(
            "http://127.0.0.1:%d%s" % (self.admin_port, path), method=method,
            data=json.dumps(payload).encode() if payload is not None else None,
            headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(request, timeout=5).read() or b"null")

    def page_token(self, on):
        """The page keeps the admin token for this tab (on) or forgets it; reloaded, live again."""
        if on:
            self.browser.execute_script("sessionStorage.setItem('sluice-token', arguments[0])", TOKEN)
        else:
            self.browser.execute_script("sessionStorage.removeItem('sluice-token')")
        self.browser.refresh()
        self.wait(lambda b: b.find_element(By.ID, "stream-state").text == "live", 10)

    def shot(self, name):
        self.browser.save_screenshot(os.path.join(ARTIFACTS, name + ".png"))

    def tab(self, view):
        self.browser.find_element(By.CSS_SELECTOR, "#tabs button[data-view='%s']" % view).click()

    def live_row(self, url, seconds=5):
        def find(browser):
            for row in browser.find_elements(By.CSS_SELECTOR, "#live-table tbody tr"):
                cells = row.find_elements(By.TAG_NAME, "td")
                if len(cells) > 2 and cells[2].text == url:
                    return row
            return False
        return self.wait(find, seconds)

    def test_19_har_keeps_binary_bodies_and_queries_and_resend_n_sends_n_times(self):
        self.tab("live")
        url = self.origin_url + "/bin/blob?size=small&v=2"
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(body, BLOB)
        self.click_row("live-table", "/bin/blob")
        self.browser.execute_script("""
            window.__harBlob = null;
            const make = URL.createObjectURL;
            URL.createObjectURL = (blob) => { window.__harBlob = blob; return make.call(URL, blob); };""")
        self.wait(lambda b: b.find_elements(By.XPATH, "//aside[@id='detail']//button[text()='HAR']"))[0].click()
        har = json.loads(self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const wait = () => window.__harBlob ? window.__harBlob.text().then(done) : setTimeout(wait, 50);
            wait();"""))
        entry = har["log"]["entries"][0]
        content = entry["response"]["content"]
        self.assertEqual(content.get("encoding"), "base64", content)
        self.assertEqual(base64.b64decode(content["text"]), BLOB)
        self.assertEqual(entry["request"]["queryString"], [{"name": "size", "value": "small"}, {"name": "v", "value": "2"}])
        # Resend ×N: sent that many times at once (a GET has no body to wait for).
        self.page_token(True)
        try:
            before = Origin.counts.get("/bin/blob", 0)
            self.tab("live")
            self.click_row("live-table", "/bin/blob")
            count = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail input.count"))[0]
            count.clear()
            count.send_keys("3")
            self.browser.find_element(By.XPATH, "//aside[@id='detail']//button[text()='Resend ×N']").click()
            table = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#compose-result table.compose-results"), 10)[0]
            self.assertEqual(len(table.find_elements(By.CSS_SELECTOR, "tbody tr")), 3)
            self.assertEqual(Origin.counts.get("/bin/blob", 0), before + 3)
            self.browser.find_element(By.ID, "compose-close").click()
        finally:
            self.page_token(False)

    def test_1_exchange_appears_within_a_second_and_detail_shows_fields_and_pretty_json(self):
        self.tab("live")
        url = self.origin_url + "/api/user"
        sent = time.time()
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 200)
        self.assertNotIn(b"null", body)
        self.live_row(url, 3)
        self.assertLess(time.time() - sent, 1.0, "the exchange showed up after more than 1 s")
        # The list may be redrawn between finding the row and clicking it: clicked with retries.
        self.click_row("live-table", url)
        detail = self.wait(lambda b: b.find_element(By.ID, "detail").is_displayed() and b.find_element(By.ID, "detail"))
        pretty = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail pre.body-text"))[0]
        self.assertIn('{\n  "id": 7,\n  "name": "Ada",', pretty.text)
        text = detail.text
        for expected in ["Request header fields", "Response header fields", "Content-Type", "application/json",
                         "Cache-Status", "user-api", "Null stripping removed", "$.middle_name", "$.address.zip",
                         "Timeline", "first_byte" if False else "wait"]:
            self.assertIn(expected, text)
        detail.find_element(By.XPATH, ".//button[text()='Copy as curl']").click()
        curl = self.browser.find_element(By.CSS_SELECTOR, "#detail pre.curl").text
        self.assertIn("curl -x http://127.0.0.1:%d '%s'" % (self.proxy_port, url), curl)
        self.shot("live-detail")

    def test_2_rejected_response_shows_its_problem_and_rule(self):
        url = self.origin_url + "/page/broken"
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 502)
        self.live_row(url).click()
        detail = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail .problem"))[0]
        self.assertIn("unacceptable-status", detail.text)
        self.assertIn("500", self.browser.find_element(By.CSS_SELECTOR, "#detail .problem-detail").text)
        self.assertEqual(self.browser.find_element(By.CSS_SELECTOR, "#detail .problem-rule").text, "pages-must-succeed")
        # The failed-validation filter keeps it and drops the passing ones (every row left is marked).
        self.browser.find_element(By.ID, "live-failed").click()
        try:
            self.wait(lambda b: (lambda rows: rows and any(url in r.text for r in rows) and all(
                r.find_elements(By.CSS_SELECTOR, ".tag.failed, .tag.rejected") for r in rows))(
                b.find_elements(By.CSS_SELECTOR, "#live-table tbody tr")))
        finally:
            self.browser.find_element(By.ID, "live-failed").click()
        self.shot("live-rejected")

    def test_3_a_stored_script_is_shown_as_text_and_never_runs(self):
        url = self.origin_url + "/page/xss"
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 200)
        self.live_row(url).click()
        pretty = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail pre.body-text"))[0]
        self.assertIn("<script>window.__xss = 1</script>", pretty.text)
        # Also from the cache view.
        self.tab("cache")
        self.browser.find_element(By.ID, "cache-query").send_keys("xss\n")
        self.click_row("cache-table", "/page/xss")
        entry = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#entry pre.body-text"))[0]
        self.assertIn("<img src=x onerror", entry.text)
        time.sleep(0.3)
        self.assertIsNone(self.browser.execute_script("return window.__xss"))
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "main img:not(.preview-image):not(#device-qr)")), 0)
        self.shot("cache-xss-entry")
        self.browser.find_element(By.ID, "cache-query").clear()

    def test_4_a_slow_download_has_a_moving_progress_bar(self):
        url = self.origin_url + "/slow/100m"
        result = {}

        def download():
            try:
                response, connection = proxy_get(self.proxy_port, url, read=False)
                result["status"] = response.status
                total = 0
                while True:
                    piece = response.read(MIB)
                    if not piece:
                        break
                    total += len(piece)
                result["total"] = total
                connection.close()
            except Exception as error:
                result["error"] = repr(error)

        thread = threading.Thread(target=download, daemon=True)
        thread.start()
        self.tab("flight")
        bar = lambda b: b.find_elements(By.CSS_SELECTOR, "#flight-table tbody tr td progress")
        try:
            self.wait(lambda b: len(bar(b)) >= 2, 5)
        except Exception:
            self.shot("in-flight-failure")
            print(result, file=sys.stderr)
            raise

        def downloaded():
            value = self.browser.execute_script(
                "const p = document.querySelectorAll('#flight-table tbody tr td progress'); return p.length ? p[1].value : -1")
            return value or 0

        first = self.wait(lambda b: downloaded() > 0, 5) and downloaded()
        time.sleep(1.0)
        second = downloaded()
        self.assertGreater(second, first, "the download bar did not move")
        maximum = self.browser.execute_script("return document.querySelectorAll('#flight-table tbody tr td progress')[1].max")
        self.assertEqual(maximum, 100 * MIB)
        self.shot("in-flight")
        thread.join(60)
        self.assertEqual(result.get("total"), 100 * MIB)
        self.wait(lambda b: b.find_element(By.ID, "flight-empty").is_displayed(), 5)

    def test_5_purge_from_the_page_asks_for_the_token_and_the_next_request_goes_upstream(self):
        url = self.origin_url + "/page/cached"
        proxy_get(self.proxy_port, url)
        response, _ = proxy_get(self.proxy_port, url)
        self.assertIn("hit", response.getheader("Cache-Status"))
        before = Origin.counts.get("/page/cached", 0)
        self.tab("cache")
        query = self.browser.find_element(By.ID, "cache-query")
        query.clear()
        query.send_keys("page/cached\n")
        self.click_row("cache-table", "/page/cached")
        entry = self.wait(lambda b: b.find_element(By.ID, "entry").is_displayed() and b.find_element(By.ID, "entry"))
        self.wait(lambda b: "freshness" in entry.text)
        for expected in ["fresh for", "max-age", "hits", "last decision", "stored"]:
            self.assertIn(expected, entry.text)
        self.shot("cache-entry")
        entry.find_element(By.XPATH, ".//button[text()='Purge']").click()
        self.wait(lambda b: b.find_element(By.ID, "confirm").is_displayed())
        self.browser.find_element(By.ID, "confirm-yes").click()
        # admin.token is set: the page asks for it, then the purge goes through.
        self.wait(lambda b: b.find_element(By.ID, "token-form").is_displayed())
        self.browser.find_element(By.ID, "token-input").send_keys(TOKEN)
        self.browser.find_element(By.ID, "token-save").click()
        self.browser.find_element(By.XPATH, "//aside[@id='entry']//button[text()='Purge']").click()
        self.wait(lambda b: b.find_element(By.ID, "confirm").is_displayed())
        self.browser.find_element(By.ID, "confirm-yes").click()
        self.wait(lambda b: "Purged" in b.find_element(By.ID, "notice").text)
        response, body = proxy_get(self.proxy_port, url)
        self.assertIn("fwd=", response.getheader("Cache-Status"))
        self.assertEqual(Origin.counts["/page/cached"], before + 1)
        query.clear()

    def test_6_ten_thousand_events_leave_the_page_responsive(self):
        self.tab("live")
        self.browser.execute_script("""
            window.__lag = 0; let last = performance.now();
            window.__probe = setInterval(() => { const now = performance.now();
              window.__lag = Math.max(window.__lag, now - last - 50); last = now; }, 50);""")
        url = self.origin_url + "/page/many"
        proxy_get(self.proxy_port, url)
        started = time.time()

        def hammer(count):
            connection = http.client.HTTPConnection("127.0.0.1", self.proxy_port, timeout=30)
            for _ in range(count):
                connection.request("GET", url)
                connection.getresponse().read()
            connection.close()

        threads = [threading.Thread(target=hammer, args=(2500,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.time() - started
        # The page took them all (bounded to the newest 5000) and still answers a click at once.
        self.wait(lambda b: "5000 exchanges" in b.find_element(By.ID, "live-count").text, 15)
        lag = self.browser.execute_script("clearInterval(window.__probe); return window.__lag")
        clicked = time.time()
        self.browser.find_element(By.ID, "live-pause").click()  # the list holds still to be clicked
        self.click_row("live-table", "/page/many")
        self.wait(lambda b: b.find_element(By.ID, "detail").is_displayed(), 2)
        response_time = time.time() - clicked
        filter_started = time.time()
        self.browser.find_element(By.ID, "live-text").send_keys("/api/user")
        self.wait(lambda b: "of 5000 exchanges" in b.find_element(By.ID, "live-count").text
                  and not b.find_element(By.ID, "live-count").text.startswith("5000"), 3)
        filtered = time.time() - filter_started
        self.browser.find_element(By.ID, "live-text").clear()
        self.browser.find_element(By.ID, "live-pause").click()
        with open(os.path.join(ARTIFACTS, "responsiveness.txt"), "w") as f:
            f.write("10000 exchanges in %.1f s (%.0f/min); longest main-thread stall %.0f ms; "
                    "click to detail %.0f ms; filter %.0f ms\n" % (elapsed, 10000 / elapsed * 60, lag,
                                                               response_time * 1000, filtered * 1000))
        # Generous bounds (a busy CI machine shares its two cores with the proxy and the load):
        # an unresponsive page stalls for many seconds; the measured figures are in the artifact.
        self.assertLess(lag, 2000, "the page stalled for %.0f ms" % lag)
        self.assertLess(response_time, 3.0)
        self.shot("live-10000")

    def test_8_a_broken_contract_is_listed_filtered_and_marked_in_the_body(self):
        self.tab("live")
        url = self.origin_url + "/shop/items"
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 200)
        self.assertIn("violations=1", response.getheader("Sluice-Validation") or "")
        row = self.live_row(url)
        self.assertIn("contract ×1", row.text)
        # The contract filter keeps only exchanges whose contract broke.
        Select(self.browser.find_element(By.ID, "live-contract")).select_by_value("broken")
        self.wait(lambda b: [r.text for r in b.find_elements(By.CSS_SELECTOR, "#live-table tbody tr")] and all(
            "contract" in r.text for r in b.find_elements(By.CSS_SELECTOR, "#live-table tbody tr")))
        self.live_row(url).click()
        table = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail table.violations"))[0]
        self.assertIn("/items/1/price", table.text)
        self.assertIn("type", table.text)
        marked = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail pre.marked span.violation"))[0]
        self.assertEqual(marked.get_attribute("data-pointer"), "/items/1/price")
        self.assertEqual(marked.text, "null")
        self.shot("live-contract")
        Select(self.browser.find_element(By.ID, "live-contract")).select_by_value("")

    def chromium_visit(self, home, url):
        """A fresh Chromium whose $HOME is `home` (so its NSS database is home/.pki/nssdb), through
        the proxy, with no certificate flags: the page's title and text."""
        options = Options()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--proxy-server=http://127.0.0.1:%d" % self.proxy_port, "--proxy-bypass-list=<-loopback>",
                         "--user-data-dir=" + tempfile.mkdtemp(dir=home)]:
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        service = Service("/usr/bin/chromedriver", env=dict(os.environ, HOME=home))
        client = webdriver.Chrome(service=service, options=options)
        try:
            client.set_page_load_timeout(20)
            client.get(url)
            return client.title, client.find_element(By.TAG_NAME, "body").text
        finally:
            client.quit()

    def test_14_sluice_trust_install_makes_chromium_accept_intercepted_pages_and_uninstall_undoes_it(self):
        home = tempfile.mkdtemp(prefix="sluice-home-", dir=self.directory)
        nssdb = os.path.join(home, ".pki", "nssdb")
        config = os.path.join(self.directory, "sluice.yaml")
        url = "https://localhost:%d/refuse" % self.ws_port  # the origin's own 403 text, over intercepted TLS
        trust = lambda action: subprocess.run([SLUICE, "trust", action, "--config", config, "--nss-db", nssdb],
                                              capture_output=True, text=True, timeout=60)
        try:
            installed = trust("install")
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            self.assertIn("added", installed.stdout)
            title, text = self.chromium_visit(home, url)
            self.assertIn("no websockets here", text, title)
            removed = trust("uninstall")
            self.assertEqual(removed.returncode, 0, removed.stdout + removed.stderr)
            title, text = self.chromium_visit(home, url)
            self.assertNotIn("no websockets here", text)
            self.assertIn("privacy error", title.lower(), text[:300])
        finally:
            # Chromium's refusals may have opened a passthrough window for localhost: closed again.
            self.admin_call("DELETE", "/tls/passthrough")

    def test_15_the_devices_tab_shows_the_onboarding_url_and_a_qr_code_that_decodes_to_it(self):
        self.tab("devices")
        link = self.wait(lambda b: b.find_element(By.ID, "device-url"))
        url = link.text
        self.assertEqual(url, "http://sluice.internal/")  # this proxy listens on loopback only
        image = self.browser.find_element(By.ID, "device-qr")
        self.wait(lambda b: b.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) > 0)
        facts = self.browser.find_element(By.ID, "device-facts").text
        self.assertIn("this computer only", facts)
        self.assertIn("SHA-256", facts)
        self.assertTrue(self.browser.find_element(By.ID, "device-lan-hint").is_displayed())
        self.assertNotIn("any that reaches it", facts)  # loopback only: this computer, said once
        # The hint names this proxy's own port, and a restart (a new listen address needs one).
        hint = self.browser.find_element(By.ID, "device-lan-hint").text
        self.assertIn("listen: 0.0.0.0:%d" % self.proxy_port, hint)
        self.assertIn("restart", hint)
        self.shot("devices")
        # The same code as a PNG decodes (zbar) to the URL the page shows.
        if shutil.which("zbarimg"):
            png = os.path.join(self.directory, "qr.png")
            with open(png, "wb") as f:
                f.write(urllib.request.urlopen("http://127.0.0.1:%d/device/qr.png" % self.admin_port).read())
            decoded = subprocess.run(["zbarimg", "--quiet", "--raw", png], capture_output=True, text=True)
            self.assertEqual(decoded.stdout.strip(), url)
        else:
            print("skipped the QR decoding: zbarimg (zbar-tools) is not installed")
        # And the page it points at answers through the proxy.
        response, body = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 200)
        self.assertIn(b"Set up this device for Sluice", body)
        self.tab("live")

    def test_16_compose_edit_and_resend_go_through_the_proxy_and_show_in_the_list(self):
        self.tab("live")
        url = self.origin_url + "/api/user"
        response, _ = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 200)
        before = Origin.counts.get("/api/user", 0)
        # Edit and resend a listed exchange: the composer is filled from it, the request sent twice.
        self.click_row("live-table", "/api/user")
        self.wait(lambda b: b.find_elements(By.XPATH, "//aside[@id='detail']//button[text()='Edit and resend']"))[0].click()
        self.assertEqual(self.browser.find_element(By.ID, "compose-url").get_attribute("value"), url)
        self.assertEqual(Select(self.browser.find_element(By.ID, "compose-method")).first_selected_option.text, "GET")
        headers = self.browser.find_element(By.ID, "compose-headers")
        headers.send_keys("\nX-Composed: yes")
        repeat = self.browser.find_element(By.ID, "compose-repeat")
        repeat.clear()
        repeat.send_keys("2")
        self.browser.find_element(By.ID, "compose-send").click()
        # Composing changes traffic: with admin.token set the page asks for it first.
        self.wait(lambda b: "admin token" in b.find_element(By.ID, "compose-result").text)
        self.assertTrue(self.browser.find_element(By.ID, "token-form").is_displayed())
        self.browser.find_element(By.ID, "token-input").send_keys(TOKEN)
        self.browser.find_element(By.ID, "token-save").click()
        self.browser.find_element(By.ID, "compose-send").click()
        table = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#compose-result table.compose-results"), 10)[0]
        self.assertEqual(len(table.find_elements(By.CSS_SELECTOR, "tbody tr")), 2)
        self.assertIn("200", table.text)
        # The rule strips nulls on the way back, as for any client.
        preview = self.browser.find_element(By.CSS_SELECTOR, "#compose-result pre").text
        self.assertIn('"name":"Ada"', preview.replace(" ", ""))
        self.assertNotIn("middle_name", preview)
        self.assertEqual(Origin.counts.get("/api/user", 0), before + 2)  # no-store: both went upstream
        # Both show in the list, tagged.
        self.wait(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#live-table span.tag.composed")) >= 2)
        self.shot("live-composer")
        self.browser.find_element(By.ID, "compose-close").click()
        self.assertFalse(self.browser.find_element(By.ID, "composer").is_displayed())
        # Forget the token again: the purge test expects the page to ask for it.
        self.page_token(False)

    def test_17_a_paused_response_is_edited_in_the_page_its_contract_checked_as_it_is_typed(self):
        self.admin_call("PUT", "/breakpoints/shop-edit", {"stage": "response", "match": {"path": "/shop/**"}})
        result = {}

        def client():
            response, body = proxy_get(self.proxy_port, self.origin_url + "/shop/items")
            result["status"], result["body"] = response.status, body
        thread = threading.Thread(target=client)
        thread.start()
        try:
            self.page_token(True)
            self.wait(lambda b: b.find_element(By.ID, "paused-count").text == "1", 10)
            self.tab("paused")
            self.click_row("paused-table", "/shop/items", 10)
            # The origin's body breaks the schema (a null price): the editor says so at once.
            self.wait(lambda b: "violation" in b.find_element(By.ID, "paused-contract").text, 10)
            self.assertIn("/items/1/price", self.browser.find_element(By.ID, "paused-contract").text)
            body = self.browser.find_element(By.ID, "paused-body")
            self.assertIn('"price": null', body.get_attribute("value"))
            # Fixed as the person types: the list of violations empties and the check passes.
            body.clear()
            body.send_keys(json.dumps({"items": [{"id": 1, "price": 12.5}, {"id": 2, "price": 3}], "total": 2}))
            self.wait(lambda b: "passed" in b.find_element(By.ID, "paused-contract").text, 10)
            self.shot("paused-editor")
            self.browser.find_element(By.ID, "paused-resume").click()
            thread.join(15)
            self.assertEqual(result.get("status"), 200)
            delivered = json.loads(result["body"])
            self.assertEqual(delivered["items"][1]["price"], 3)
            self.wait(lambda b: b.find_element(By.ID, "paused-count").text == "0", 5)
        finally:
            self.admin_call("DELETE", "/breakpoints/shop-edit")
            thread.join(15)
            self.page_token(False)

    def test_18_a_requests_call_paused_before_it_is_sent_is_edited_in_the_page(self):
        # The breakpoint is added from the page's form.
        self.page_token(True)
        self.tab("paused")
        self.browser.find_element(By.ID, "bp-name").send_keys("orders")
        self.browser.find_element(By.ID, "bp-path").send_keys("/orders")
        self.browser.find_element(By.ID, "bp-method").send_keys("POST")
        self.browser.find_element(By.ID, "bp-add").click()
        self.wait(lambda b: "orders (request POST /orders)" in b.find_element(By.ID, "breakpoints-list").text, 10)
        self.assertEqual(self.admin_call("GET", "/breakpoints/orders")["match"], {"path": "/orders", "methods": ["POST"]})
        Origin.posted.clear()
        script = ("import json, sys, requests\n"
                  "r = requests.post(sys.argv[1], json={'qty': 1, 'note': None}, headers={'X-Trace': 'one'},\n"
                  "                  proxies={'http': sys.argv[2]}, timeout=30)\n"
                  "print(json.dumps({'status': r.status_code, 'text': r.text}))\n")
        client = subprocess.Popen([TEST_PYTHON, "-c", script, self.origin_url + "/orders",
                                   "http://127.0.0.1:%d" % self.proxy_port], stdout=subprocess.PIPE, text=True)
        try:
            self.wait(lambda b: b.find_element(By.ID, "paused-count").text == "1", 10)
            self.click_row("paused-table", "/orders", 10)
            self.assertEqual(Origin.posted, [], "nothing reached the origin while paused")
            self.assertEqual(self.browser.find_element(By.ID, "paused-method").get_attribute("value"), "POST")
            body = self.browser.find_element(By.ID, "paused-body")
            self.assertIn('"qty": 1', body.get_attribute("value"))
            # A field changed and the JSON body rewritten in the editor.
            headers = self.browser.find_element(By.ID, "paused-headers")
            text = headers.get_attribute("value").replace("X-Trace: one", "X-Trace: edited in the page")
            headers.clear()
            headers.send_keys(text)
            body.clear()
            # Sent as typed: a number past 2^53 and a decimal's trailing zero stay as written
            # (the editor never parses and re-serialises a body).
            typed = '{"qty": 12, "note": "from the page", "big": 12345678901234567890, "price": 1.10}'
            body.send_keys(typed)
            self.shot("paused-request")
            self.browser.find_element(By.ID, "paused-resume").click()
            out, _ = client.communicate(timeout=30)
            answer = json.loads(out)
            sent = typed.encode()
            self.assertEqual(answer, {"status": 200, "text": "got %d bytes" % len(sent)})
            fields, received = Origin.posted[0]
            self.assertEqual(received, sent)
            self.assertEqual(fields["content-length"], str(len(sent)))
            self.assertEqual(fields["x-trace"], "edited in the page")
            # Removed from the page.
            self.browser.find_element(By.CSS_SELECTOR, "#breakpoints-list button[data-remove='orders']").click()
            self.wait(lambda b: "No breakpoints" in b.find_element(By.ID, "breakpoints-list").text, 10)
        finally:
            if client.poll() is None:
                client.kill()
            try:
                self.admin_call("DELETE", "/breakpoints/orders")
            except urllib.error.HTTPError:
                pass  # removed from the page already
            self.page_token(False)

    def test_13_contract_failures_show_in_the_detail_counters_chart_and_coverage(self):
        url = self.origin_url + "/shop/items?coverage"
        response, body = proxy_get(self.proxy_port, url)
        self.assertIn("violations=1", response.getheader("Sluice-Validation") or "")
        # The detail says the contract failed, never "passed".
        self.tab("live")
        self.live_row(url).click()
        detail = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail dl"))[0]
        self.assertIn("failed: The response to GET /shop/items breaks the contract of rule shop", detail.text)
        self.assertNotIn("passed", detail.text)
        # The failures chart's contract series counted it; /stats and the Overview say so per rule.
        series = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/series?seconds=60" % self.admin_port).read())
        self.assertGreaterEqual(sum(series["contract_failures"]), 1)
        stats = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % self.admin_port).read())
        shop = [r for r in stats["contracts"]["rules"] if r["rule"] == "shop"][0]
        self.assertGreaterEqual(shop["failed"], 1)
        self.tab("overview")
        health = self.wait(lambda b: "contract of rule shop" in b.find_element(By.ID, "health").text and b.find_element(By.ID, "health"))
        self.assertRegex(health.text, r"contract checks / failed / rejected\s+\d+ / [1-9]\d* / 0")
        rows = self.wait(lambda b: [r for r in b.find_elements(By.CSS_SELECTOR, "#coverage-table tbody tr") if "/shop/items" in r.text])
        cells = rows[0].find_elements(By.TAG_NAME, "td")
        self.assertEqual([cells[0].text, cells[2].text], ["shop", "200"])
        self.assertGreaterEqual(int(cells[5].text), 1)
        self.shot("overview-contracts")
        self.tab("live")

    def test_7_overview_draws_its_charts_and_the_upstream_view(self):
        self.tab("overview")
        health = self.wait(lambda b: "upstream reachable" in b.find_element(By.ID, "health").text and b.find_element(By.ID, "health"))
        self.assertIn("yes", health.text)
        drawn = self.browser.execute_script("""
            const c = document.getElementById('chart-requests'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n;""")
        self.assertGreater(drawn, 100)
        self.shot("overview")
        self.tab("cache")
        self.browser.find_element(By.ID, "cache-refresh").click()
        self.wait(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#cache-table tbody tr")) > 0)
        self.shot("cache")
        self.tab("live")
        self.shot("live")

    def test_9_a_pinning_clients_passthrough_window_is_listed_and_cleared(self):
        # Python's TLS, trusting only the system store, refuses Sluice's leaf for localhost twice.
        port = self.origin.server_address[1]
        for _ in range(2):
            connection = http.client.HTTPSConnection("127.0.0.1", self.proxy_port, timeout=5)
            connection.set_tunnel("localhost", port)
            with self.assertRaises(Exception):
                connection.request("GET", "/")
            connection.close()
        self.tab("overview")
        row = self.wait(lambda b: [r for r in b.find_elements(By.CSS_SELECTOR, "#passthrough-table tbody tr")
                                   if "localhost" in r.text])[0]
        self.assertIn("127.0.0.1", row.text)
        self.assertIn("t13", row.text)
        self.assertFalse(self.browser.find_element(By.ID, "passthrough-clear-all").get_attribute("hidden"))
        self.shot("overview-passthrough")
        row.find_element(By.XPATH, ".//button[text()='Clear']").click()
        self.wait(lambda b: "Ended 1 passthrough window" in b.find_element(By.ID, "notice").text)
        self.wait(lambda b: b.find_element(By.ID, "passthrough-empty").is_displayed())
        stats = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % self.admin_port).read())
        self.assertEqual(stats["tls"]["passthrough"], [])
        self.tab("live")

    def test_11_a_rules_faults_are_switched_off_and_on_from_the_overview(self):
        url = "http://127.0.0.1:%d/flaky/orders" % self.origin.server_address[1]
        response, _ = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 503)
        self.assertEqual(response.getheader("Retry-After"), "1")
        self.tab("overview")

        def flaky_row(browser):
            rows = [r for r in browser.find_elements(By.CSS_SELECTOR, "#rules-table tbody tr")
                    if r.get_attribute("data-rule") == "flaky"]
            return rows[0] if rows else None

        def switch(label, word):
            self.wait(lambda b: flaky_row(b) and flaky_row(b).find_elements(By.XPATH, ".//button[text()='%s']" % label))
            flaky_row(self.browser).find_element(By.XPATH, ".//button[text()='%s']" % label).click()
            if self.browser.find_element(By.ID, "token-form").is_displayed():
                self.browser.find_element(By.ID, "token-input").send_keys(TOKEN)
                self.browser.find_element(By.ID, "token-save").click()
                flaky_row(self.browser).find_element(By.XPATH, ".//button[text()='%s']" % label).click()
            self.wait(lambda b: ("switched " + word) in b.find_element(By.ID, "notice").text)

        self.wait(lambda b: flaky_row(b) and "status 1" in flaky_row(b).text)
        self.shot("overview-rules")
        switch("Switch off", "off")
        self.wait(lambda b: flaky_row(b) and flaky_row(b).find_element(By.CSS_SELECTOR, ".faults-state").text == "off")
        response, _ = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 404)  # the origin's own answer
        switch("Switch on", "on")
        response, _ = proxy_get(self.proxy_port, url)
        self.assertEqual(response.status, 503)
        rules = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/rules" % self.admin_port).read())
        self.assertTrue([r for r in rules if r["name"] == "flaky"][0]["faults_enabled"])
        # Forget the token again: the purge test expects the page to ask for it.
        self.browser.execute_script("sessionStorage.removeItem('sluice-token')")
        self.browser.refresh()
        self.tab("live")

    def test_10_chromium_websocket_through_interception_and_its_messages_in_the_page(self):
        # A second Chromium, pointed at the proxy (loopback included), as the WebSocket client;
        # it is told to accept Sluice's leaf (the CA is not in its store here).
        options = Options()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--proxy-server=http://127.0.0.1:%d" % self.proxy_port, "--proxy-bypass-list=<-loopback>",
                         "--ignore-certificate-errors"]:
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        client = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            client.set_script_timeout(20)
            client.get("about:blank")
            echoed = client.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const ws = new WebSocket(arguments[0]);
                ws.binaryType = "arraybuffer";
                const got = [];
                ws.onopen = () => { ws.send("hi from chromium"); ws.send(new Uint8Array([1, 2, 3, 250])); };
                ws.onmessage = (e) => {
                  got.push(typeof e.data === "string" ? e.data : Array.from(new Uint8Array(e.data)).join(","));
                  if (got.length === 2) ws.close(1000, "bye");
                };
                ws.onclose = (e) => done({ got, code: e.code });
                ws.onerror = () => done({ error: true });
            """, "wss://localhost:%d/echo" % self.ws_port)
        finally:
            client.quit()
        self.assertEqual(echoed.get("got"), ["hi from chromium", "1,2,3,250"], echoed)
        self.assertEqual(echoed.get("code"), 1000)
        # The page lists the exchange (101) and, in its detail, the messages both ways.
        self.tab("live")
        url = "https://localhost:%d/echo" % self.ws_port
        self.click_row("live-table", url)
        table = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail table.messages"))[0]
        self.wait(lambda b: len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) >= 5)
        text = table.text
        self.assertIn("hi from chromium", text)
        self.assertIn("↑ sent", text)
        self.assertIn("↓ received", text)
        self.assertIn("010203fa", text)
        self.assertIn("close", text)
        self.shot("live-websocket")
        # Messages of an exchange that is open in the detail are added as they pass.
        rows = len(table.find_elements(By.CSS_SELECTOR, "tbody tr"))
        out = subprocess.run([TEST_PYTHON, os.path.join(WEBSOCKET, "client.py"), "wss", str(self.proxy_port),
                              "wss://localhost:%d/greet" % self.ws_port, os.path.join(self.directory, "ca.pem")],
                             capture_output=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.click_row("live-table", "/greet")
        live = self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, "#detail table.messages"))[0]
        self.wait(lambda b: "one two three" in live.text)
        self.assertGreater(len(live.find_elements(By.CSS_SELECTOR, "tbody tr")), rows)
        # The exchange's HAR carries the messages as Chrome writes them (_webSocketMessages).
        self.browser.execute_script("""
            window.__harBlob = null;
            const make = URL.createObjectURL;
            URL.createObjectURL = (blob) => { window.__harBlob = blob; return make.call(URL, blob); };""")
        self.browser.find_element(By.XPATH, "//aside[@id='detail']//button[text()='HAR']").click()
        har = json.loads(self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const wait = () => window.__harBlob ? window.__harBlob.text().then(done) : setTimeout(wait, 50);
            wait();"""))
        entry = har["log"]["entries"][0]
        self.assertEqual(entry["_resourceType"], "websocket")
        messages = entry["_webSocketMessages"]
        self.assertIn({"type": "receive", "opcode": 1, "data": "one two three"},
                      [{k: m[k] for k in ("type", "opcode", "data")} for m in messages])
        self.assertTrue(all(isinstance(m["time"], float) for m in messages))

    def test_12_a_har_from_chromium_is_imported_and_replayed_with_the_origin_gone(self):
        app = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AppOrigin)
        app.daemon_threads = True
        threading.Thread(target=app.serve_forever, daemon=True).start()
        url = "http://127.0.0.1:%d/app/" % app.server_address[1]
        client = chromium_through(self.proxy_port, performance_log=True)
        try:
            client.get(url)
            WebDriverWait(client, 10).until(lambda b: "order" in b.find_element(By.ID, "out").text)
            live = client.find_element(By.ID, "out").text
            har = har_from_chromium(client)
        finally:
            client.quit()
        app.shutdown()
        app.server_close()
        self.assertTrue(live.startswith("tea,cake / order 91 for 2 / Sluice; fwd="), live)
        har_file = os.path.join(self.directory, "chromium.har")
        with open(har_file, "w") as f:
            json.dump(har, f)
        recording = os.path.join(self.directory, "chromium.sluicerec")
        imported = subprocess.run([SLUICE, "record", "import", har_file, recording], capture_output=True, text=True)
        self.assertEqual(imported.returncode, 0, imported.stdout + imported.stderr)
        self.assertIn("imported", imported.stdout)
        # A second Sluice answers from the recording alone; the origin is gone.
        port = free_port()
        replay_config = os.path.join(self.directory, "replay.yaml")
        with open(replay_config, "w") as f:
            f.write("cache: { enabled: false }\nlog: { access: true }\n")
        log = open(os.path.join(ARTIFACTS, "sluice-replay.log"), "w")
        replaying = subprocess.Popen([SLUICE, "serve", "--config", replay_config, "--listen", "127.0.0.1:%d" % port,
                                      "--admin-listen", "", "--replay", recording], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 20
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline or replaying.poll() is not None:
                        raise RuntimeError("the replaying sluice did not start; see sluice-replay.log")
                    time.sleep(0.1)
            client = chromium_through(port)
            try:
                client.get(url)
                WebDriverWait(client, 10).until(lambda b: "order" in b.find_element(By.ID, "out").text)
                replayed = client.find_element(By.ID, "out").text
                client.save_screenshot(os.path.join(ARTIFACTS, "replayed-app.png"))
            finally:
                client.quit()
        finally:
            replaying.terminate()
            replaying.wait(15)
            log.close()
        self.assertEqual(replayed, "tea,cake / order 91 for 2 / Sluice; hit; detail=replay")


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
