import CTLS

/// Message digests from OpenSSL's EVP layer.
/// - SeeAlso: `EVP_Digest(3)`.
public enum Digest {
    /// The SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        digest.withUnsafeMutableBytes { out in
            _ = EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &length, EVP_sha256(), nil)
        }
        return digest
    }

    /// The SHA-256 of `text`'s UTF-8, as lowercase hex.
    public static func sha256Hex(_ text: String) -> String {
        var text = text
        return hex(text.withUTF8 { sha256(UnsafeRawBufferPointer($0)) })
    }

    /// Bytes as lowercase hex, two digits each.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// Standard Base64 with padding (RFC 4648 §4).
    public static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let a = Int(bytes[index])
            let b = index + 1 < bytes.count ? Int(bytes[index + 1]) : 0
            let c = index + 2 < bytes.count ? Int(bytes[index + 2]) : 0
            out.append(alphabet[a >> 2])
            out.append(alphabet[(a & 3) << 4 | b >> 4])
            out.append(index + 1 < bytes.count ? alphabet[(b & 15) << 2 | c >> 6] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[c & 63] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
