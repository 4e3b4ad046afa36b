/// The admin page at `http://127.0.0.1:8081/`: one HTML document (`index.html`), its script
/// (`app.js`) and its style sheet (`app.css`), real files beside this one compiled into the binary
/// (nothing fetched from elsewhere, no build step). The script renders every header, URL and body
/// as text (`textContent`), never as markup, and the strict Content-Security-Policy forbids
/// inline script and anything not from the admin origin.
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

    // The files beside this one (`Package.swift` embeds them).
    static let html = PackageResources.index_html
    static let script = PackageResources.app_js
    static let style = PackageResources.app_css
    static let icon = PackageResources.favicon_svg
}
