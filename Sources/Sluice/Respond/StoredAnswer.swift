/// How a stored response answers the client, decided by ``ExchangeMachine`` (a pure function of
/// the stored head, the request, the rule and the enforce verdict) and carried out by the driver,
/// which only writes: `304`, `206`, `416`, or the stored response itself.
enum StoredAnswer: Equatable {
    /// `304 Not Modified`: the client's own validators match a stored `200` (RFC 9111 §4.3.2).
    case notModified
    /// `206` with these bytes of a stored `200` (RFC 9110 §14).
    case range(ClosedRange<Int64>)
    /// `206` cut from a stored piece (a stored `206`): `bytes` as the client counts them,
    /// `within` as the piece's body counts them, `complete` the representation's length.
    case piece(bytes: ClosedRange<Int64>, within: ClosedRange<Int64>, complete: Int64)
    /// `416`: the range holds nothing of a representation of `complete` bytes.
    case unsatisfiable(complete: Int64)
    /// The stored response with `Age`, its body null-stripped by the plan (or not: `.pass`).
    case whole(JSONBodyDelivery.Plan)
    /// The stored response as it is, for a plain `GET` with no rule and no transform: the
    /// client head may come straight from memory (``StoredResponse/plainHead(_:age:request:cacheStatus:cache:)``).
    case plain

    /// What the decision needs of the exchange, besides the stored response.
    struct Request {
        /// The client's request.
        var request: ProxyRequest
        /// What delivery does to a JSON body (`nil`: nothing).
        var transform: JSONTransform?
        /// `limits.max_transform_body`.
        var transformLimit: Int
        /// Whether a rule validates this exchange's responses (then no head comes from memory).
        var validated: Bool
    }

    /// The answer from `head` (with its `Age`) of `size` body bytes; a `Failure` when the entry
    /// must not be served: the rule's enforce verdict (`verdict`), or a piece that turned out not
    /// to hold the range it was chosen for.
    static func decide(
        _ head: ResponseHead, size: Int64, for exchange: Request, verdict: ValidationFailure?,
        fromUpstream: Bool
    ) -> Result<StoredAnswer, SluiceError> {
        if let verdict { return .failure(.validationFailed(verdict)) }
        let request = exchange.request
        if head.status == 206, let piece = ByteRange.Piece(head.headers) {
            switch ByteRange.answer(request.headers, piece: piece, stored: head.headers) {
            case .partial(let bytes):
                let within = (bytes.lowerBound - piece.first)...(bytes.upperBound - piece.first)
                return .success(.piece(bytes: bytes, within: within, complete: piece.complete))
            case .unsatisfiable:
                return .success(.unsatisfiable(complete: piece.complete))
            case .whole, nil:
                return .failure(
                    .upstreamFailed(reason: .badResponse(detail: "the stored piece does not hold the range asked for")))
            }
        }
        if head.status == 200, Revalidation.clientValidatorsMatch(request.headers, stored: head.headers) {
            return .success(.notModified)
        }
        let ranged = request.headers.contains(.range)
        // A range of a stored 200 (not under null stripping: the client's representation is then
        // not the stored bytes, so it gets the whole stripped response).
        if ranged, request.method == "GET", head.status == 200, exchange.transform == nil {
            switch ByteRange.answer(request.headers, stored: head.headers, size: size) {
            case .whole: break
            case .partial(let bytes): return .success(.range(bytes))
            case .unsatisfiable: return .success(.unsatisfiable(complete: size))
            }
        }
        guard exchange.transform != nil else {
            let plain =
                !fromUpstream && !exchange.validated && !ranged && request.method == "GET" && request.minorVersion == 1
            return .success(plain ? .plain : .whole(.pass))
        }
        return .success(
            .whole(JSONBodyDelivery.plan(for: head, request: request, limit: exchange.transformLimit)))
    }
}
