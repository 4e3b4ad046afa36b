/// Which documented operation a request is: its path under a base path, template by template
/// (literal segments before templated ones, left to right), then its method.
extension OpenAPIContract {
    /// The operation for a request, with its path parameters; or why there is none.
    public enum Match {
        case operation(Operation, pathParameters: [String: String])
        /// The path is documented, the method is not.
        case methodNotDocumented(template: String)
        case pathNotDocumented
        /// The path does not start with the base path.
        case outsideBasePath
    }

    public func match(method: String, path rawPath: String) -> Match {
        var path = rawPath
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        // The request's segments under each base path it is under (most documents have one).
        var under: [String: [String]] = [:]
        for base in allBases {
            var relative = path
            if !base.isEmpty {
                guard path == base || path.hasPrefix(base + "/") else { continue }
                relative = String(path.dropFirst(base.count))
                if relative.isEmpty { relative = "/" }
            }
            under[base] = relative.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        }
        guard !under.isEmpty else { return .outsideBasePath }
        var best: (rank: [Int], operation: Operation, parameters: [String: String])?
        var pathOnly: String?
        for operation in operations {
            for base in operation.bases ?? basePaths {
                guard let requestSegments = under[base] else { continue }
                // A spanning segment takes what the request has beyond the template's count.
                let extra = requestSegments.count - operation.segments.count
                guard extra == 0 || (extra > 0 && operation.spans) else { continue }
                var parameters: [String: String] = [:]
                var rank: [Int] = []
                var matched = true
                var next = 0
                for segment in operation.segments {
                    if case .spanning(let name) = segment {
                        let taken = requestSegments[next...(next + extra)]
                        next += extra + 1
                        guard taken.allSatisfy({ !$0.isEmpty }) else {
                            matched = false
                            break
                        }
                        parameters[name] = SchemaRegistry.percentDecode(taken.joined(separator: "/"))
                        // One rank per request segment it takes: every candidate's rank is as long
                        // as the request, so a catch-all never wins by being short.
                        rank.append(contentsOf: repeatElement(3, count: extra + 1))
                        continue
                    }
                    let actual = requestSegments[next]
                    next += 1
                    switch segment {
                    case .literal(let text):
                        // Percent-encoding aside (RFC 3986 §6.2.2.2: `m%69ne` is `mine`, `caf%C3%A9`
                        // is `café`).
                        if text != actual, !actual.contains("%") || text != SchemaRegistry.percentDecode(actual) {
                            matched = false
                        }
                        rank.append(0)
                    case .parameter(let name, let prefix, let suffix):
                        func fits(_ text: String) -> Bool {
                            text.hasPrefix(prefix) && text.hasSuffix(suffix) && text.count > prefix.count + suffix.count
                        }
                        if fits(actual) {
                            let value = actual.dropFirst(prefix.count).dropLast(suffix.count)
                            parameters[name] = SchemaRegistry.percentDecode(String(value))
                        } else if actual.contains("%"), case let decoded = SchemaRegistry.percentDecode(actual),
                            fits(decoded)
                        {
                            // The text around the expression, percent-encoding aside (`a%2Egz`, `{n}.gz`).
                            parameters[name] = String(decoded.dropFirst(prefix.count).dropLast(suffix.count))
                        } else {
                            matched = false
                            break
                        }
                        rank.append(prefix.isEmpty && suffix.isEmpty ? 2 : 1)
                    case .pattern(let pieces):
                        if let values = Self.match(pieces[...], actual[...]) {
                            for (name, value) in values {
                                parameters[name] = SchemaRegistry.percentDecode(String(value))
                            }
                        } else if actual.contains("%"),
                            let values = Self.match(pieces[...], SchemaRegistry.percentDecode(actual)[...])
                        {
                            for (name, value) in values { parameters[name] = String(value) }
                        } else {
                            matched = false
                            break
                        }
                        rank.append(1)
                    case .spanning: break  // taken above
                    }
                    if !matched { break }
                }
                guard matched else { continue }
                // A path written with a query or fragment (`/files/{id}#get_shared_link`) comes after
                // the same path without one.
                rank.append(operation.template.contains(where: { $0 == "?" || $0 == "#" }) ? 1 : 0)
                // Methods are case-sensitive (RFC 9110 §9.1): the fixed fields' are upper-case,
                // `additionalOperations`' as written (OAS 3.2: "as sent").
                guard operation.method == method || (method == "HEAD" && operation.method == "GET") else {
                    pathOnly = pathOnly ?? operation.template
                    continue
                }
                // Literal segments win over templated ones, left to right.
                if best == nil || rank.lexicographicallyPrecedes(best!.rank) {
                    best = (rank, operation, parameters)
                }
            }
        }
        if let best { return .operation(best.operation, pathParameters: best.parameters) }
        if let pathOnly { return .methodNotDocumented(template: pathOnly) }
        return .pathNotDocumented
    }
}
