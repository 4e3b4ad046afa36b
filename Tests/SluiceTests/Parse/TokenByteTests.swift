import Testing

@testable import Sluice

@Suite("Token bytes")
struct TokenByteTests {
    @Test("The bit masks say token for exactly RFC 9110's tchar, for all 256 bytes")
    func everyByte() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for byte in 0...255 {
            #expect(RequestParser.isTokenByte(UInt8(byte)) == tchar.contains(UInt8(byte)), "byte \(byte)")
        }
    }

    @Test("A Connection value's options are found among its tokens, in any case and spacing")
    func connectionOptions() {
        #expect(ResponseBodyFraming.connectionOptions("close") == (true, false))
        #expect(ResponseBodyFraming.connectionOptions("Keep-Alive") == (false, true))
        #expect(ResponseBodyFraming.connectionOptions(" foo ,\tCLOSE\t, keep-alive") == (true, true))
        #expect(ResponseBodyFraming.connectionOptions("closed, keep-alive-ish, ,") == (false, false))
        #expect(ResponseBodyFraming.connectionOptions("") == (false, false))
    }
}
