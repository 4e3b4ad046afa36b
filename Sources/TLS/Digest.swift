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
        let digest = text.withUTF8 { sha256(UnsafeRawBufferPointer($0)) }
        return digest.map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
        }.joined()
    }
}
