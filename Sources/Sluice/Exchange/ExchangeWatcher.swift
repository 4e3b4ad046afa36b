/// Someone looks at exchanges as they happen (the admin page, through `/events`): while one
/// does, each exchange keeps a bounded ``ExchangeCapture`` of what it received and sent, and says
/// when it starts and ends so that transfers still running can be shown with their progress.
/// Nobody looking costs an exchange one Boolean read.
protocol ExchangeWatcher: AnyObject {
    /// Whether anyone looks now.
    var isWatching: Bool { get }
    /// Body bytes the next watched exchange may keep (0 when enough are kept already).
    var bodyRoom: Int { get }
    /// A watched exchange started (its end is the monitors' `exchangeDidComplete`, which the
    /// watcher is one of).
    func exchangeDidStart(_ exchange: Exchange)
    /// An upgraded exchange switched protocols (`101`): shown now, its messages follow.
    func upgradeDidSwitch(_ record: ExchangeRecord)
    /// A WebSocket message (or control frame) passed through an upgraded exchange.
    func webSocketMessage(_ id: Int, _ message: WebSocketFrames.Message)
}
