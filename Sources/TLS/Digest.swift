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

    /// Standard Base64 (RFC 4648 §4) decoded; whitespace between groups is ignored, padding is
    /// optional at the end; `nil` for any other character or a dangling sextet.
    public static func base64Decoded(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: break
            }
            guard padding == 0 else { return nil }  // data after padding
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "/"), UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1, padding <= 2, padding == 0 || (values.count + padding) % 4 == 0 else {
            return nil
        }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 1 < values.count {
            let a = values[index]
            let b = values[index + 1]
            out.append(a << 2 | b >> 4)
            if index + 2 < values.count {
                let c = values[index + 2]
                out.append((b & 15) << 4 | c >> 2)
                if index + 3 < values.count { out.append((c & 3) << 6 | values[index + 3]) }
            }
            index += 4
        }
        return out
    }
}

/// SHA-256 over bytes that arrive in pieces (a request body as it streams).
/// - SeeAlso: `EVP_DigestInit_ex(3)`.
public final class SHA256Stream {
    private let context: OpaquePointer
    public private(set) var count: Int64 = 0

    public init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
        count += Int64(bytes.count)
    }

    /// The digest as lowercase hex; the stream starts over.
    public func finishHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        digest.withUnsafeMutableBytes { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        count = 0
        return Digest.hex(digest)
    }
}
