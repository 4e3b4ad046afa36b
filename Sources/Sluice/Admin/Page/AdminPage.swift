/// The admin page at `http://127.0.0.1:8081/`: one HTML document, its script and its style
/// sheet, compiled into the binary (nothing fetched from elsewhere, no build step). The script
/// renders every header, URL and body as text (`textContent`), never as markup, and the strict
/// Content-Security-Policy forbids inline script and anything not from the admin origin.
enum AdminPage {
    /// For the page's own files (every other admin answer is sandboxed data, see `AdminConnection`).
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The file at `path`, if it is one of the page's.
    static func asset(_ path: String) -> (type: String, bytes: [UInt8])? {
        switch path {
        case "/", "/index.html": return ("text/html; charset=utf-8", html)
        case "/ui/app.js": return ("text/javascript; charset=utf-8", script)
        case "/ui/app.css": return ("text/css; charset=utf-8", style)
        case "/favicon.ico": return ("image/svg+xml", icon)
        default: return nil
        }
    }

    static let html = Array(htmlText.utf8)
    static let script = Array(scriptText.utf8)
    static let style = Array(styleText.utf8)
    static let icon = Array(
        ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d5c9b"/><path d="M3 5h10M3 8h7M3 11h10" stroke="#fff" stroke-width="2"/></svg>"##
            .utf8)

    private static let htmlText = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Sluice</title>
        <link rel="icon" href="/favicon.ico">
        <link rel="stylesheet" href="/ui/app.css">
        <script src="/ui/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Sluice</h1>
          <nav id="tabs">
            <button data-view="live" class="active">Live</button>
            <button data-view="flight">In flight <span id="flight-count" class="badge">0</span></button>
            <button data-view="cache">Cache</button>
            <button data-view="overview">Overview</button>
          </nav>
          <span id="stream-state" class="state">connecting…</span>
          <button id="token-button" class="quiet" title="The admin token, asked for purges when admin.token is set">Token</button>
        </header>
        <div id="notice" hidden></div>
        <div id="confirm" hidden><span id="confirm-text"></span> <button id="confirm-yes">Purge</button> <button id="confirm-no" class="quiet">Cancel</button></div>
        <div id="token-form" hidden>
          <label>Admin token <input id="token-input" type="password" autocomplete="off"></label>
          <button id="token-save">Use</button> <button id="token-cancel" class="quiet">Cancel</button>
        </div>

        <main>
        <section id="view-live" class="view">
          <div class="toolbar">
            <input id="live-host" placeholder="host" size="14">
            <input id="live-text" placeholder="search URL, rule, error" size="24">
            <select id="live-status">
              <option value="">any status</option><option value="2">2xx</option><option value="3">3xx</option>
              <option value="4">4xx</option><option value="5">5xx</option><option value="err">errors</option>
            </select>
            <select id="live-cache">
              <option value="">any cache status</option><option value="hit">hit</option>
              <option value="fwd">forwarded</option><option value="stored">stored</option>
            </select>
            <label><input id="live-failed" type="checkbox"> failed validation</label>
            <button id="live-pause">Pause</button>
            <button id="live-clear" class="quiet">Clear</button>
            <button id="live-har" class="quiet">HAR</button>
            <span id="live-count" class="muted"></span>
          </div>
          <div class="split">
            <div class="list">
              <table id="live-table">
                <thead><tr><th>time</th><th>method</th><th>URL</th><th>status</th><th>cache</th><th>validation</th><th class="num">size</th><th class="num">ms</th></tr></thead>
                <tbody></tbody>
              </table>
            </div>
            <aside id="detail" hidden></aside>
          </div>
        </section>

        <section id="view-flight" class="view" hidden>
          <table id="flight-table">
            <thead><tr><th>#</th><th>method</th><th>URL</th><th class="num">s</th><th>upload</th><th>download</th></tr></thead>
            <tbody></tbody>
          </table>
          <p id="flight-empty" class="muted">No exchange is running.</p>
        </section>

        <section id="view-cache" class="view" hidden>
          <div class="toolbar">
            <input id="cache-query" placeholder="search URL, header fields, body text" size="30">
            <input id="cache-host" placeholder="host" size="14">
            <select id="cache-sort">
              <option value="recent">recent</option><option value="size">size</option>
              <option value="hits">hits</option><option value="age">age</option>
            </select>
            <button id="cache-refresh">Search</button>
            <button id="cache-purge-host" class="danger">Purge host</button>
            <button id="cache-purge-all" class="danger">Purge all</button>
            <button id="cache-har" class="quiet">HAR</button>
            <span id="cache-count" class="muted"></span>
          </div>
          <div class="split">
            <div class="list">
              <table id="cache-table">
                <thead><tr><th>URL</th><th>status</th><th class="num">size</th><th class="num">hits</th><th class="num">age</th><th>fresh</th></tr></thead>
                <tbody></tbody>
              </table>
            </div>
            <aside id="entry" hidden></aside>
          </div>
        </section>

        <section id="view-overview" class="view" hidden>
          <div class="charts">
            <figure><figcaption>requests / s <span class="muted">(last 5 minutes)</span></figcaption><canvas id="chart-requests" width="420" height="120"></canvas></figure>
            <figure><figcaption>hit ratio %</figcaption><canvas id="chart-hits" width="420" height="120"></canvas></figure>
            <figure><figcaption>responses by class / s <span class="legend"><i class="c2"></i>2xx <i class="c3"></i>3xx <i class="c4"></i>4xx <i class="c5"></i>5xx</span></figcaption><canvas id="chart-classes" width="420" height="120"></canvas></figure>
            <figure><figcaption>validation failures / s</figcaption><canvas id="chart-validation" width="420" height="120"></canvas></figure>
          </div>
          <h2>Upstream and proxy</h2>
          <dl id="health"></dl>
        </section>
        </main>
        </body>
        </html>
        """#
}
