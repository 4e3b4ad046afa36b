import Foundation
import Sluice
import Testing

@Suite("Problem details")
struct ProblemTests {
    @Test(
        "Each error maps to one status and problem type, and the body is valid JSON",
        arguments: [
            (SluiceError.badRequest(reason: .malformed("x \"quoted\"\n")), 400, "bad-request"),
            (.badRequest(reason: .headersTooLarge(limit: 1)), 431, "headers-too-large"),
            (.badRequest(reason: .requestLineTooLong(limit: 1)), 414, "request-line-too-long"),
            (.badRequest(reason: .bodyTooLarge(limit: 1)), 413, "body-too-large"),
            (.badRequest(reason: .timedOut), 408, "request-timeout"),
            (.badRequest(reason: .unsupportedExpectation("x")), 417, "expectation-failed"),
            (.forbidden(reason: .connectPortNotAllowed(25)), 403, "connect-port-not-allowed"),
            (.upstreamFailed(reason: .resolveFailed(host: "h")), 502, "upstream-dns-failure"),
            (.upstreamFailed(reason: .timedOut(detail: "d")), 504, "upstream-timeout"),
            (.redirectFailed(reason: .tooManyRedirects(limit: 5)), 502, "too-many-redirects"),
            (.unavailable(reason: .tooManyConnections(limit: 1)), 503, "too-many-connections"),
            (.onboardingAuthenticationRequired, 401, "authentication-required"),
        ])
    func mapping(error: SluiceError, status: Int, slug: String) throws {
        let problem = Problem(error, url: "http://h/\u{1}")
        #expect(problem.status == status)
        #expect(problem.type == Problem.typeBase + slug)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(problem.body.utf8)) as? [String: Any])
        #expect(object["status"] as? Int == status)
        #expect(object["type"] as? String == problem.type)
        #expect(object["detail"] as? String == problem.detail)
        #expect(object["url"] as? String == "http://h/\u{1}")
    }

    @Test(
        "The onboarding page asked of the proxy itself challenges as a web page does (401, WWW-Authenticate), not as a proxy"
    )
    func onboardingChallenge() {
        let problem = Problem(.onboardingAuthenticationRequired)
        #expect(
            problem.wwwAuthenticate == #"Basic realm="sluice", charset="UTF-8""# && problem.proxyAuthenticate == nil)
        #expect(Problem(.proxyAuthenticationRequired).wwwAuthenticate == nil)
    }
}
