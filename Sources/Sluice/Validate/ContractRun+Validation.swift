import Contract

extension ContractRun {
    /// A body's validation: one JSON value, or a sequence's items (OAS 3.2 sequential media types).
    enum Validation {
        case json(BodyValidation)
        case sequence(SequenceValidation)
        /// Only while one is out being fed (its buffers stay uniquely referenced: never copied).
        case moving

        mutating func feed(_ bytes: UnsafeRawBufferPointer) {
            switch self {
            case .json(var validation):
                self = .moving
                validation.feed(bytes)
                self = .json(validation)
            case .sequence(var validation):
                self = .moving
                validation.feed(bytes)
                self = .sequence(validation)
            case .moving: break
            }
        }

        mutating func finish() -> Verdict {
            switch self {
            case .json(var validation):
                self = .moving
                return validation.finish()
            case .sequence(var validation):
                self = .moving
                return validation.finish()
            case .moving: return Verdict()
            }
        }

        var verdictSoFar: Verdict {
            switch self {
            case .json(let validation): validation.verdictSoFar
            case .sequence(let validation): validation.verdictSoFar
            case .moving: Verdict()
            }
        }

        var hasViolations: Bool {
            switch self {
            case .json(let validation): validation.verdictSoFar.total > 0
            case .sequence(let validation): validation.hasViolations
            case .moving: false
            }
        }
    }
}
