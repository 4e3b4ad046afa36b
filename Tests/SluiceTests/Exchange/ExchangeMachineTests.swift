import Foundation
import Logging
import SluiceTestKit
import Testing

@testable import Sluice

/// The exchange's decisions without sockets: each case puts the machine in a phase, sends one
/// event, and compares the actions (spelled as short strings) and the phase it moved to.
@Suite("ExchangeMachine")
struct ExchangeMachineTests {
    static let url = "http://a.test/r"
    static let now: Double = 1_000_000

    // MARK: - Helpers

    static func request(
        _ method: String = "GET", _ fields: [(String, String)] = [], body: ProxyRequest.BodyFraming = .none
    ) -> ProxyRequest {
        ProxyRequest(
            method: method, target: .absolute(TargetURL(url)!), rawTarget: url, minorVersion: 1,
            headers: HTTPFields(fields), bodyFraming: body)
    }

    static func machine(
        _ request: ProxyRequest = request(), cache: Bool = true, strip: NullStripper.Mode? = nil
    ) -> ExchangeMachine {
        var settings = Configuration.Cache()
        settings.collapseForwarding = true
        return ExchangeMachine(
            .init(
                request: request, url: url, transform: JSONTransform(strip: strip), transformLimit: 1 << 20,
                cache: cache ? .init(settings) : nil))
    }

    /// A stored GET response, `age` seconds old at ``now``.
    static func entry(_ fields: [(String, String)], age: Double = 0, status: Int = 200) -> CacheStore.Entry {
        let headers = HTTPFields(fields)
        return CacheStore.Entry(
            key: url, ref: EntryRef(row: 7), variant: "", varyNames: [], status: status, reason: "OK", headers: headers,
            requestTime: now - age, responseTime: now - age, size: 3, ttl: nil,
            facts: CacheStore.Facts(headers, shared: true, heuristic: .init()))
    }

    /// A 200 being written into a real cache file (what read-while-write offers a waiter); the
    /// file is unlinked at once (the open store keeps it until the writer goes).
    static func writer(varyNames: [String] = [], variant: String = "") throws -> CacheWriter {
        let path = TestScratch.root.appendingPathComponent("machine-\(UUID().uuidString).sqlite")
            .path
        var settings = Configuration.Cache()
        settings.path = path
        let store = try CacheStore(settings: settings, logger: Logger(label: "test"))
        let target = try #require(TargetURL(url))
        let new = CacheStore.NewEntry(
            stored: StoredHead(
                key: url, variant: variant, varyNames: varyNames, status: 200, reason: "OK", headers: HTTPFields(),
                requestTime: now, responseTime: now),
            method: "GET", url: target, rule: nil, limit: 1 << 20, expectedLength: nil, proposedHeaders: HTTPFields())
        let entry = try #require(store.begin(new))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return CacheWriter(store: store, entry: entry, new: new)
    }

    /// A key found not storable a moment ago (hit-for-miss): its misses neither wait nor lead.
    static let noCollapse = ExchangeMachine.CollapseView(fetching: false, uncacheable: true)

    /// A machine routed and looked up with `candidates` (now fetching, serving or waiting).
    static func lookedUp(
        _ request: ProxyRequest = request(), _ candidates: [CacheStore.Entry],
        collapse: ExchangeMachine.CollapseView = noCollapse, strip: NullStripper.Mode? = nil
    ) -> (ExchangeMachine, [String]) {
        var machine = machine(request, strip: strip)
        _ = machine.handle(.routed(.forward, transform: JSONTransform(strip: strip), now: now))
        let actions = machine.handle(.lookedUp(candidates, collapse: collapse, now: now))
        return (machine, actions.map(describe))
    }

    static func head(_ status: Int, _ fields: [(String, String)] = []) -> ResponseHead {
        ResponseHead(status: status, headers: HTTPFields(fields))
    }

    /// A stored answer in a few words, after a comma (nothing for the plain hit).
    static func describe(_ answer: StoredAnswer) -> String {
        switch answer {
        case .plain: ""
        case .whole(.pass): ", whole"
        case .whole(let plan): ", whole(\(plan))"
        case .notModified: ", 304"
        case .range(let bytes): ", 206 \(bytes.lowerBound)-\(bytes.upperBound)"
        case .piece(let bytes, let within, let complete):
            ", 206 \(bytes.lowerBound)-\(bytes.upperBound)/\(complete) from \(within.lowerBound)-\(within.upperBound)"
        case .unsatisfiable(let complete): ", 416 */\(complete)"
        }
    }

    static func describe(_ action: ExchangeMachine.Action) -> String {
        switch action {
        case .fail(let error): "fail(\(Problem(error).status))"
        case .answerLocally: "answerLocally"
        case .setCacheStatus(let status): "status(\(status))"
        case .lookUp: "lookUp"
        case .wait: "wait"
        case .leave: "leave"
        case .lead: "lead"
        case .release: "release"
        case .rememberUncacheable: "rememberUncacheable"
        case .shareWhileWriting: "shareWhileWriting"
        case .serveWhileWritten(_, let answer): "serveWhileWritten\(describe(answer))"
        case .forgetUncacheable: "forgetUncacheable"
        case .countMiss: "countMiss"
        case .fetch(let conditions): "fetch(\(conditions.map(\.name).joined(separator: ",")))"
        case .refreshInBackground: "refreshInBackground"
        case .serve(_, let age, let answer): "serve(age=\(age)\(describe(answer)))"
        case .refreshStored: "refreshStored"
        case .invalidate: "invalidate"
        case .deliverHead(let head, let plan): "deliverHead(\(head.status), \(plan))"
        case .commitStore: "commitStore"
        case .abandonStore: "abandonStore"
        case .endResponse: "endResponse"
        case .cancelUpstream: "cancelUpstream"
        case .stopStoredBody: "stopStoredBody"
        case .finishClosing: "finishClosing"
        case .detachClient: "detachClient"
        case .storeOnly(let head): "storeOnly(\(head.status))"
        case .endOrphan: "endOrphan"
        }
    }

    static func describe(_ phase: ExchangePhase) -> String {
        switch phase {
        case .routing: return "routing"
        case .lookingUp(_, let after): return "lookingUp" + (after.map { "(after \($0.rawValue))" } ?? "")
        case .awaitingCollapse(_, let forward): return "awaitingCollapse(\(forward.rawValue))"
        case .fetching(let fetch):
            var text = "fetching("
            switch fetch.delivery {
            case .awaitingHead: text += "awaitingHead"
            case .streaming: text += "streaming"
            case .discarding(.notModified): text += "discarding 304"
            case .discarding(.originError(let status)): text += "discarding \(status)"
            case .discarding(.otherRepresentation): text += "discarding 304 of another"
            case .orphaned: text += "orphaned"
            }
            if case .sluice = fetch.revalidating { text += ", revalidating" }
            switch fetch.onOriginFailure {
            case .fail: break
            case .serveStale: text += ", stale-if-error"
            case .gatewayTimeout: text += ", must-revalidate"
            }
            if case .leading = fetch.collapse { text += ", leading" }
            return text + ")"
        case .servingStored(let serving): return "servingStored(\(serving))"
        case .done(let outcome): return "done(\(outcome))"
        }
    }

    // MARK: - Route

    @Test(
        "Route: refusals fail, Max-Forwards 0 is answered, and what the cache cannot take is fetched at once",
        arguments: [
            (request(), false, ExchangeMachine.Route.refused(.forbidden(reason: .loopDetected("x"))), ["fail(403)"]),
            (request("TRACE"), true, .answerLocally, ["answerLocally"]),
            (request(), false, .forward, ["fetch()"]),
            (request("POST", body: .length(3)), true, .forward, ["status(Sluice; fwd=method)", "fetch()"]),
            (
                request("GET", [("Cache-Control", "no-store")]), true, .forward,
                ["status(Sluice; fwd=request; detail=no-store)", "fetch()"]
            ),
            (request("GET", [("Range", "bytes=0-1")]), true, .forward, ["lookUp"]),
            (request(), true, .forward, ["lookUp"]),
        ] as [(ProxyRequest, Bool, ExchangeMachine.Route, [String])])
    func route(request: ProxyRequest, cache: Bool, route: ExchangeMachine.Route, expected: [String]) {
        // Given a new exchange
        var machine = Self.machine(request, cache: cache)
        // When Route has decided
        let actions = machine.handle(.routed(route, transform: nil, now: Self.now))
        // Then
        #expect(actions.map(Self.describe) == expected)
    }

    // MARK: - Lookup

    @Test("Lookup: fresh, stale-while-revalidate, stale with validators, misses, only-if-cached")
    func lookup() {
        let fresh = Self.entry([("Cache-Control", "max-age=60")], age: 10)
        var (machine, actions) = Self.lookedUp(Self.request(), [fresh])
        #expect(actions == ["status(Sluice; hit; ttl=50)", "serve(age=10)"])
        #expect(Self.describe(machine.phase) == "servingStored(hit)")

        let swr = Self.entry([("Cache-Control", "max-age=5, stale-while-revalidate=60")], age: 10)
        (machine, actions) = Self.lookedUp(Self.request(), [swr])
        #expect(
            actions == [
                "refreshInBackground", "status(Sluice; hit; ttl=-5; detail=stale-while-revalidate)", "serve(age=10)",
            ])
        // A HEAD is served stale too, but refreshes nothing (the refresh would be a GET of its own).
        (machine, actions) = Self.lookedUp(Self.request("HEAD"), [swr])
        #expect(!actions.contains("refreshInBackground"))

        let stale = Self.entry([("Cache-Control", "max-age=5"), ("ETag", "\"v1\"")], age: 10)
        (machine, actions) = Self.lookedUp(Self.request(), [stale])
        #expect(actions == ["status(Sluice; fwd=stale)", "countMiss", "fetch(If-None-Match)"])
        #expect(Self.describe(machine.phase) == "fetching(awaitingHead, revalidating)")

        // The client's own validators: Sluice adds none of its own.
        (machine, actions) = Self.lookedUp(Self.request("GET", [("If-None-Match", "\"x\"")]), [stale])
        #expect(actions.last == "fetch()")
        #expect(Self.describe(machine.phase) == "fetching(awaitingHead)")

        (machine, actions) = Self.lookedUp(Self.request(), [])
        #expect(actions == ["status(Sluice; fwd=uri-miss)", "countMiss", "fetch()"])

        (machine, actions) = Self.lookedUp(Self.request("GET", [("Cache-Control", "only-if-cached")]), [stale])
        #expect(actions == ["status(Sluice; fwd=stale; detail=only-if-cached)", "fail(504)"])

        (machine, actions) = Self.lookedUp(Self.request("GET", [("Cache-Control", "no-cache")]), [fresh])
        #expect(actions == ["status(Sluice; fwd=request)", "countMiss", "fetch()"])
    }

    @Test("Lookup: what an origin failure will lead to is decided with the stale entry")
    func originFailurePlans() {
        let sie = Self.entry([("Cache-Control", "max-age=5, stale-if-error=60"), ("ETag", "\"a\"")], age: 10)
        #expect(
            Self.describe(Self.lookedUp(Self.request(), [sie]).0.phase)
                == "fetching(awaitingHead, revalidating, stale-if-error)")
        let must = Self.entry([("Cache-Control", "max-age=5, must-revalidate")], age: 10)
        #expect(
            Self.describe(Self.lookedUp(Self.request(), [must]).0.phase) == "fetching(awaitingHead, must-revalidate)")
    }

    // MARK: - Collapsed forwarding

    @Test("Collapse: a miss waits behind a fetch of its key, leads a cold key, and never waits twice")
    func collapse() {
        let fetching = ExchangeMachine.CollapseView(fetching: true, uncacheable: false)
        var (machine, actions) = Self.lookedUp(Self.request(), [], collapse: fetching)
        #expect(actions == ["status(Sluice; fwd=uri-miss)", "wait"])
        #expect(Self.describe(machine.phase) == "awaitingCollapse(uri-miss)")

        // Released: it looks again; a hit now says it was collapsed.
        #expect(machine.handle(.collapseReleased).map(Self.describe) == ["lookUp"])
        #expect(Self.describe(machine.phase) == "lookingUp(after uri-miss)")
        var hit = machine
        let fresh = Self.entry([("Cache-Control", "max-age=60")])
        #expect(
            hit.handle(.lookedUp([fresh], collapse: fetching, now: Self.now)).map(Self.describe) == [
                "status(Sluice; fwd=uri-miss; collapsed)", "serve(age=0)",
            ])
        // A miss again goes upstream: it never queues a second time, nor leads.
        #expect(
            machine.handle(.lookedUp([], collapse: fetching, now: Self.now)).map(Self.describe) == [
                "status(Sluice; fwd=uri-miss)", "countMiss", "fetch()",
            ])

        // A cold key (nothing stored, nobody fetching) leads: concurrent misses will wait for it.
        let cold = ExchangeMachine.CollapseView(fetching: false, uncacheable: false)
        (machine, actions) = Self.lookedUp(Self.request(), [], collapse: cold)
        #expect(actions == ["status(Sluice; fwd=uri-miss)", "lead", "countMiss", "fetch()"])
        #expect(Self.describe(machine.phase) == "fetching(awaitingHead, leading)")
        // A key found not storable a moment ago neither leads nor waits (hit-for-miss).
        (machine, actions) = Self.lookedUp(Self.request(), [], collapse: Self.noCollapse)
        #expect(actions == ["status(Sluice; fwd=uri-miss)", "countMiss", "fetch()"])
        let stored = cold
        // HEAD, no-cache and ranges never lead or wait.
        #expect(!Self.lookedUp(Self.request("HEAD"), [], collapse: stored).1.contains("lead"))
        #expect(
            !Self.lookedUp(Self.request("GET", [("Cache-Control", "no-cache")]), [], collapse: fetching).1.contains(
                "wait"))
        let range = Self.request("GET", [("Range", "bytes=0-1")])
        #expect(
            Self.lookedUp(range, [], collapse: fetching).1 == ["status(Sluice; fwd=uri-miss)", "countMiss", "fetch()"])
        #expect(!Self.lookedUp(range, [], collapse: stored).1.contains("lead"))
    }

    @Test("A Range: a fresh stored piece that holds it answers; a complete response comes first; else upstream")
    func rangeFromPiece() {
        func look(_ range: String, _ candidates: [CacheStore.Entry], pieces: [CacheStore.Entry]) -> [String] {
            var machine = Self.machine(Self.request("GET", [("Range", range)]))
            _ = machine.handle(.routed(.forward, transform: nil, now: Self.now))
            return machine.handle(.lookedUp(candidates, pieces: pieces, collapse: Self.noCollapse, now: Self.now))
                .map(Self.describe)
        }
        let piece = Self.entry(
            [("Cache-Control", "max-age=60"), ("Content-Range", "bytes 10-19/100")], age: 5, status: 206)
        let stalePiece = Self.entry(
            [("Cache-Control", "max-age=60"), ("Content-Range", "bytes 10-19/100")], age: 90, status: 206)
        let whole = Self.entry([("Cache-Control", "max-age=60")], age: 1)
        #expect(
            look("bytes=12-15", [], pieces: [piece]) == [
                "status(Sluice; hit; ttl=55; detail=partial)", "serve(age=5, 206 12-15/100 from 2-5)",
            ])
        // The complete response (3 bytes here) comes first: the range is past its end.
        #expect(
            look("bytes=12-15", [whole], pieces: [piece]) == ["status(Sluice; hit; ttl=59)", "serve(age=1, 416 */3)"])
        #expect(look("bytes=5-15", [], pieces: [piece]).last == "fetch()")
        #expect(look("bytes=12-15", [], pieces: [stalePiece]).last == "fetch()")
    }

    @Test("Collapse: the leader releases its waiters exactly once, whatever ends its part")
    func leaderReleases() {
        let stored = ExchangeMachine.CollapseView(fetching: false, uncacheable: false)
        // A response that may not be shared releases at the head, and the key is remembered as
        // uncacheable; nothing more at the end.
        var (machine, _) = Self.lookedUp(Self.request(), [], collapse: stored)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        #expect(
            machine.handle(.storing(.notShareable)).map(Self.describe) == [
                "rememberUncacheable", "release",
            ])
        #expect(
            machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now)).map(Self.describe) == [
                "commitStore", "endResponse",
            ])
        #expect(machine.handle(.finished(.completed)).isEmpty)

        // A database failure releases too, but says nothing of the key.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: stored)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        #expect(machine.handle(.storing(.failed)).map(Self.describe) == ["release"])

        // A shared entry releases when it is committed, and the key collapses again.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: stored)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        #expect(
            machine.handle(.storing(.shared)).map(Self.describe) == [
                "forgetUncacheable", "shareWhileWriting",
            ])
        #expect(
            machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now)).map(Self.describe) == [
                "commitStore", "release", "endResponse",
            ])

        // A fetch that leads nobody stops with its client.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: Self.noCollapse)
        #expect(
            machine.handle(.clientGone(nil)).map(Self.describe) == ["abandonStore", "cancelUpstream", "finishClosing"])
        #expect(machine.handle(.finished(.failed)).isEmpty)
        // One too slow with its request body is answered (408), after its transfer is cancelled.
        var slow = Self.lookedUp(Self.request(), [], collapse: Self.noCollapse).0
        #expect(
            slow.handle(.clientGone(.badRequest(reason: .timedOut))).map(Self.describe) == [
                "abandonStore", "cancelUpstream", "fail(408)",
            ])
        _ = slow.handle(.finished(.failed))
        #expect(Self.describe(machine.phase) == "done(failed)")
        // Late events after the end change nothing.
        #expect(machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now)).isEmpty)
        #expect(machine.handle(.clientGone(nil)).isEmpty)
    }

    @Test("Collapse: a leader whose client leaves goes on for its waiters, into the cache only")
    func orphanedLeader() {
        let cold = ExchangeMachine.CollapseView(fetching: false, uncacheable: false)
        // Before the head: the client side ends now; the head is only stored; the commit releases.
        var (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["detachClient"])
        #expect(Self.describe(machine.phase) == "fetching(orphaned, leading)")
        #expect(machine.isOrphaned && !machine.discardsBody)
        #expect(machine.handle(.responseHead(Self.head(200), now: Self.now)).map(Self.describe) == ["storeOnly(200)"])
        #expect(
            machine.handle(.storing(.shared)).map(Self.describe) == [
                "forgetUncacheable", "shareWhileWriting",
            ])
        #expect(machine.handle(.clientGone(nil)).isEmpty)
        #expect(
            machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now)).map(Self.describe) == [
                "commitStore", "release", "endOrphan",
            ])
        #expect(Self.describe(machine.phase) == "done(completed)")

        // While streaming a shared entry; then the origin fails: nothing stays, the waiters look again.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        _ = machine.handle(.storing(.shared))
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["detachClient"])
        #expect(
            machine.handle(
                .upstreamCompleted(.upstreamFailed(reason: .timedOut(detail: "x")), ownError: nil, now: Self.now)
            )
            .map(Self.describe) == ["abandonStore", "release", "endOrphan"])
        #expect(Self.describe(machine.phase) == "done(failed)")

        // Orphaned before a head that may not be shared: release, remember, stop the transfer.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        _ = machine.handle(.clientGone(nil))
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        #expect(
            machine.handle(.storing(.notShareable)).map(Self.describe) == [
                "rememberUncacheable", "release", "cancelUpstream", "endOrphan",
            ])
        #expect(Self.describe(machine.phase) == "done(failed)")

        // A store given up midway (too large): nobody needs the rest.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        _ = machine.handle(.storing(.shared))
        _ = machine.handle(.clientGone(nil))
        #expect(machine.handle(.storeEnded).map(Self.describe) == ["cancelUpstream", "release", "endOrphan"])

        // A leader revalidating a stale entry: a 304 refreshes it for the waiters.
        let stale = Self.entry([("Cache-Control", "max-age=5"), ("ETag", "\"v1\"")], age: 10)
        (machine, _) = Self.lookedUp(Self.request(), [stale], collapse: cold)
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["detachClient"])
        #expect(
            machine.handle(.responseHead(Self.head(304), now: Self.now)).map(Self.describe) == [
                "refreshStored", "release", "endOrphan",
            ])

        // Before the head with nobody waiting: the transfer stops with its client (a client that
        // resets streams as fast as it opens them leaves nothing running).
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        #expect(
            machine.handle(.clientGone(nil, othersWait: false)).map(Self.describe) == [
                "abandonStore", "cancelUpstream", "finishClosing",
            ])
        // With the head, the body goes on into the cache all the same.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        _ = machine.handle(.storing(.shared))
        #expect(machine.handle(.clientGone(nil, othersWait: false)).map(Self.describe) == ["detachClient"])

        // A response already released (not shareable) leads nobody: the client's leaving stops it.
        (machine, _) = Self.lookedUp(Self.request(), [], collapse: cold)
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        _ = machine.handle(.storing(.notShareable))
        #expect(
            machine.handle(.clientGone(nil)).map(Self.describe) == ["abandonStore", "cancelUpstream", "finishClosing"])
    }

    @Test("Read-while-write: a waiting GET of the same variant takes the entry as it is written; others wait on")
    func collapseMayStream() throws {
        let fetching = ExchangeMachine.CollapseView(fetching: true, uncacheable: false)
        var (machine, _) = Self.lookedUp(Self.request(), [], collapse: fetching)
        #expect(
            machine.handle(.collapseMayStream(try Self.writer())).map(Self.describe) == [
                "leave", "status(Sluice; fwd=uri-miss; collapsed)", "serveWhileWritten, whole",
            ])
        #expect(Self.describe(machine.phase) == "servingStored(whileWritten)")
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["stopStoredBody", "finishClosing"])
        // Another variant, a range or a HEAD keeps waiting for the release.
        let german = Self.request("GET", [("Accept-Language", "de")])
        (machine, _) = Self.lookedUp(german, [], collapse: fetching)
        #expect(
            machine.handle(
                .collapseMayStream(try Self.writer(varyNames: ["accept-language"], variant: "accept-language:en"))
            ).isEmpty)
        #expect(Self.describe(machine.phase) == "awaitingCollapse(uri-miss)")
        #expect(
            machine.handle(
                .collapseMayStream(try Self.writer(varyNames: ["accept-language"], variant: "accept-language:de"))
            ).map(
                Self.describe
            ).last == "serveWhileWritten, whole")
        (machine, _) = Self.lookedUp(Self.request("HEAD"), [], collapse: fetching)
        #expect(machine.handle(.collapseMayStream(try Self.writer())).isEmpty)
    }

    @Test("Collapse: a waiter whose client goes away leaves the queue")
    func waiterLeaves() {
        var (machine, _) = Self.lookedUp(Self.request(), [], collapse: .init(fetching: true, uncacheable: false))
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["finishClosing"])
        #expect(machine.handle(.finished(.failed)).map(Self.describe) == ["leave"])
    }

    // MARK: - Revalidation

    @Test("304 merge: the body is discarded, the refreshed entry is stored and served at completion")
    func notModified() throws {
        let stale = Self.entry([("Cache-Control", "max-age=5"), ("ETag", "\"v1\""), ("X-Old", "1")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request(), [stale])
        let actions = machine.handle(
            .responseHead(Self.head(304, [("Cache-Control", "max-age=100"), ("X-New", "2")]), now: Self.now))
        #expect(actions.isEmpty)
        #expect(machine.discardsBody)
        #expect(Self.describe(machine.phase) == "fetching(discarding 304)")
        let done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
        #expect(
            done.map(Self.describe) == [
                "refreshStored", "status(Sluice; fwd=stale; fwd-status=304)", "serve(age=1, whole)",
            ])
        guard case .refreshStored(let refreshed) = done[0] else { return #expect(Bool(false)) }
        #expect(refreshed.headers["x-old"] == "1" && refreshed.headers["x-new"] == "2")
        #expect(refreshed.facts.lifetime == 100 && refreshed.responseTime == Self.now)
        #expect(Self.describe(machine.phase) == "servingStored(revalidated)")
    }

    @Test("A fresh entry revalidated because the request said no-cache is confirmed as fwd=request, not stale")
    func notModifiedAfterNoCache() throws {
        let fresh = Self.entry([("Cache-Control", "max-age=500"), ("ETag", "\"v1\"")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request("GET", [("Cache-Control", "no-cache")]), [fresh])
        _ = machine.handle(.responseHead(Self.head(304, [("ETag", "\"v1\"")]), now: Self.now))
        let done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
        #expect(
            done.map(Self.describe).contains("status(Sluice; fwd=request; fwd-status=304)"),
            "\(done.map(Self.describe))")
    }

    @Test("A 304's Set-Cookie is served to its client, never stored; a private or no-store 304 stores nothing")
    func notModifiedPersonal() throws {
        let stale = Self.entry([("Cache-Control", "max-age=5"), ("ETag", "\"v1\"")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request(), [stale])
        _ = machine.handle(
            .responseHead(
                Self.head(304, [("Cache-Control", "max-age=100"), ("Set-Cookie", "session=ALICE")]), now: Self.now))
        var done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
        #expect(done.map(Self.describe).first == "refreshStored")
        guard case .refreshStored(let kept) = done[0], case .serve(let served, _, _) = done.last else {
            return #expect(Bool(false))
        }
        #expect(kept.headers[.setCookie] == nil && kept.facts.lifetime == 100, "the stored entry has no cookie")
        #expect(served.headers[.setCookie] == "session=ALICE", "the client whose 304 it was gets its cookie")
        for control in ["private, max-age=600", "no-store"] {
            (machine, _) = Self.lookedUp(Self.request(), [stale])
            _ = machine.handle(.responseHead(Self.head(304, [("Cache-Control", control)]), now: Self.now))
            done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
            #expect(
                done.map(Self.describe) == ["status(Sluice; fwd=stale; fwd-status=304)", "serve(age=1, whole)"],
                "\(control): the stored entry stays as it was")
        }
        // must-understand overrides no-store for a status it stores: such an entry is refreshed.
        (machine, _) = Self.lookedUp(Self.request(), [stale])
        _ = machine.handle(
            .responseHead(Self.head(304, [("Cache-Control", "must-understand, no-store, max-age=60")]), now: Self.now))
        done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
        #expect(done.map(Self.describe).first == "refreshStored")
        (machine, _) = Self.lookedUp(Self.request("HEAD"), [stale])
        let head = Self.head(200, [("ETag", "\"v1\""), ("Cache-Control", "private")])
        #expect(machine.handle(.responseHead(head, now: Self.now)).map(Self.describe) == ["deliverHead(200, pass)"])
    }

    @Test("A 304 whose validator is not the stored one's updates nothing; the request goes again without conditions")
    func notModifiedOtherRepresentation() throws {
        let stale = Self.entry(
            [("Cache-Control", "max-age=5"), ("ETag", "\"a\""), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")],
            age: 10)
        let mismatched: [[(String, String)]] = [
            [("ETag", "\"b\"")], [("ETag", "W/\"b\"")], [("ETag", "\"A\"")],
            [("Last-Modified", "Tue, 02 Jan 2024 00:00:00 GMT")],
        ]
        for fields in mismatched {
            var (machine, _) = Self.lookedUp(Self.request(), [stale])
            _ = machine.handle(.responseHead(Self.head(304, fields + [("Cache-Control", "max-age=60")]), now: Self.now))
            #expect(machine.discardsBody)
            let done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
            #expect(done.map(Self.describe) == ["fetch()"], "\(fields): asked again, nothing stored")
            // The plain answer is delivered as any other.
            let answer = machine.handle(.responseHead(Self.head(200, [("ETag", "\"b\"")]), now: Self.now + 2))
            #expect(answer.map(Self.describe) == ["deliverHead(200, pass)"], "\(fields)")
        }
        let matching: [[(String, String)]] = [
            [("ETag", "\"a\"")], [("ETag", "W/\"a\"")], [("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")], [],
        ]
        for fields in matching {
            var (machine, _) = Self.lookedUp(Self.request(), [stale])
            _ = machine.handle(.responseHead(Self.head(304, fields + [("Cache-Control", "max-age=60")]), now: Self.now))
            let done = machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now + 1))
            #expect(done.map(Self.describe).first == "refreshStored", "\(fields) selects the entry")
        }
    }

    @Test("A 200 to HEAD freshens the stored GET it agrees with, and outdates one it does not")
    func headRevalidation() {
        let stale = Self.entry([("Cache-Control", "max-age=5"), ("ETag", "\"v1\"")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request("HEAD"), [stale])
        #expect(
            machine.handle(.responseHead(Self.head(200, [("ETag", "\"v1\"")]), now: Self.now)).map(Self.describe) == [
                "refreshStored", "deliverHead(200, pass)",
            ])
        (machine, _) = Self.lookedUp(Self.request("HEAD"), [stale])
        #expect(
            machine.handle(.responseHead(Self.head(200, [("ETag", "\"v2\"")]), now: Self.now)).map(Self.describe) == [
                "invalidate", "deliverHead(200, pass)",
            ])
    }

    // MARK: - Origin failures

    @Test("stale-if-error at completion: a 5xx head or a dead origin gets the stale entry")
    func staleIfError() {
        let sie = Self.entry([("Cache-Control", "max-age=5, stale-if-error=60"), ("ETag", "\"a\"")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request(), [sie])
        #expect(machine.handle(.responseHead(Self.head(503), now: Self.now)).isEmpty)
        #expect(machine.discardsBody)
        #expect(
            machine.handle(.upstreamCompleted(nil, ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "status(Sluice; fwd=stale; fwd-status=503; detail=stale-if-error)",
                "serve(age=10, whole)",
            ])
        #expect(Self.describe(machine.phase) == "servingStored(staleIfError)")

        let dead = SluiceError.upstreamFailed(reason: .connectFailed(host: "a.test", detail: "refused"))
        (machine, _) = Self.lookedUp(Self.request(), [sie])
        #expect(
            machine.handle(.upstreamCompleted(dead, ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "status(Sluice; fwd=stale; detail=stale-if-error)", "serve(age=10, whole)",
            ])

        // Once the origin's response streams, it is too late for the stale entry.
        (machine, _) = Self.lookedUp(Self.request(), [sie])
        _ = machine.handle(.responseHead(Self.head(200), now: Self.now))
        #expect(
            machine.handle(.upstreamCompleted(dead, ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "fail(502)",
            ])

        // The client's own failure (its request body) outranks: no stale answer.
        (machine, _) = Self.lookedUp(Self.request(), [sie])
        let own = SluiceError.badRequest(reason: .malformed("body cut"))
        #expect(
            machine.handle(.upstreamCompleted(dead, ownError: own, now: Self.now)).map(Self.describe) == [
                "abandonStore", "fail(400)",
            ])
    }

    @Test("Validation cancel at the head: a rejected 5xx is answered by the stale entry, another fails")
    func validationCancel() {
        func rejected(_ status: Int) -> SluiceError {
            .validationFailed(
                ValidationFailure(
                    reasons: [.unacceptableStatus], rule: "api", status: status, contentType: "text/html",
                    acceptance: Acceptance()))
        }
        let sie = Self.entry([("Cache-Control", "max-age=5, stale-if-error=60")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request(), [sie])
        #expect(
            machine.handle(.upstreamCompleted(rejected(502), ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "status(Sluice; fwd=stale; fwd-status=502; detail=stale-if-error)",
                "serve(age=10, whole)",
            ])
        (machine, _) = Self.lookedUp(Self.request(), [])
        #expect(
            machine.handle(.upstreamCompleted(rejected(404), ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "fail(502)",
            ])
    }

    @Test("must-revalidate: a stale entry is never served without the origin: 504")
    func mustRevalidate() {
        let must = Self.entry([("Cache-Control", "max-age=5, must-revalidate")], age: 10)
        var (machine, _) = Self.lookedUp(Self.request(), [must])
        let dead = SluiceError.upstreamFailed(reason: .connectFailed(host: "a.test", detail: "refused"))
        #expect(
            machine.handle(.upstreamCompleted(dead, ownError: nil, now: Self.now)).map(Self.describe) == [
                "abandonStore", "fail(504)",
            ])
    }

    // MARK: - Delivery

    @Test("A followed redirect is the task's business: the machine sees one final head and streams it")
    func finalHeadStreams() {
        var (machine, _) = Self.lookedUp(Self.request(), [])
        #expect(
            machine.handle(.responseHead(Self.head(200), now: Self.now)).map(Self.describe) == [
                "deliverHead(200, pass)"
            ])
        #expect(Self.describe(machine.phase) == "fetching(streaming)")
        #expect(!machine.discardsBody)
        // A second head (none can come) changes nothing.
        #expect(machine.handle(.responseHead(Self.head(500), now: Self.now)).isEmpty)
    }

    @Test("Stripping plans to hold a JSON body; the machine's phase is the same as streaming")
    func holding() {
        var (machine, _) = Self.lookedUp(Self.request(), [], strip: .members)
        let json = Self.head(200, [("Content-Type", "application/json")])
        #expect(
            machine.handle(.responseHead(json, now: Self.now)).map(Self.describe) == ["deliverHead(200, hold(nil))"])
        // The driver holds the bytes (and knows it does); for the machine the body goes to the client.
        #expect(Self.describe(machine.phase) == "fetching(streaming)")
        // Not JSON: nothing to hold.
        (machine, _) = Self.lookedUp(Self.request(), [], strip: .members)
        _ = machine.handle(.responseHead(Self.head(200, [("Content-Type", "text/plain")]), now: Self.now))
        #expect(Self.describe(machine.phase) == "fetching(streaming)")
    }

    @Test("The client gone while a stored body is served stops the body and finishes")
    func clientGoneWhileServing() {
        var (machine, _) = Self.lookedUp(Self.request(), [Self.entry([("Cache-Control", "max-age=60")])])
        #expect(machine.handle(.clientGone(nil)).map(Self.describe) == ["stopStoredBody", "finishClosing"])
        #expect(machine.handle(.finished(.failed)).isEmpty)
        #expect(machine.isDone)
    }
}
