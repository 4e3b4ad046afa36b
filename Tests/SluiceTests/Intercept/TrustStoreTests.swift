import Sluice
import Testing

@Suite("Where sluice trust looks")
struct TrustStoreTests {
    /// A machine with these files and programs.
    private func machine(files: Set<String>, programs: [String: String] = [:], javaHome: String? = nil)
        -> TrustStore.Machine
    {
        TrustStore.Machine(
            home: "/h/ada", exists: { files.contains($0) },
            entries: { directory in
                Array(
                    Set(
                        files.filter { $0.hasPrefix(directory + "/") }.map {
                            String($0.dropFirst(directory.count + 1).split(separator: "/")[0])
                        }))
            }, program: { programs[$0] }, javaHome: javaHome)
    }

    @Test("Flags name the only places touched")
    func flags() {
        let stores = TrustStore.locations(
            systemStore: "/tmp/store", nssDatabases: ["/tmp/a", "/tmp/b"], javaCacerts: nil,
            machine: machine(files: ["/usr/sbin/update-ca-certificates"], programs: ["chromium": "/usr/bin/chromium"]))
        #expect(
            stores == [
                .hashDirectory("/tmp/store"), .nss(directory: "/tmp/a", owner: "--nss-db"),
                .nss(directory: "/tmp/b", owner: "--nss-db"),
            ])
    }

    @Test(
        "Without flags: Debian's store, Chromium's database (a browser is installed), each Firefox profile, the JDK's cacerts"
    )
    func discovery() {
        let files: Set<String> = [
            "/usr/sbin/update-ca-certificates",
            "/h/ada/.mozilla/firefox/x1.default-release/cert9.db",
            "/h/ada/.mozilla/firefox/old.default/cert8.db",
            "/h/ada/snap/firefox/common/.mozilla/firefox/s2.default/cert9.db",
            "/usr/lib/jvm/java-17/lib/security/cacerts",
        ]
        let stores = TrustStore.locations(
            systemStore: nil, nssDatabases: [], javaCacerts: nil,
            machine: machine(
                files: files,
                programs: ["chromium": "/usr/lib/chromium/chromium", "java": "/usr/lib/jvm/java-17/bin/java"]))
        #expect(
            stores == [
                .debian(folder: "/usr/local/share/ca-certificates"),
                .nss(directory: "/h/ada/.pki/nssdb", owner: "Chromium, Chrome"),
                .nss(
                    directory: "/h/ada/.mozilla/firefox/x1.default-release",
                    owner: "Firefox profile x1.default-release"),
                .nss(
                    directory: "/h/ada/snap/firefox/common/.mozilla/firefox/s2.default",
                    owner: "Firefox profile s2.default"),
                .java(cacerts: "/usr/lib/jvm/java-17/lib/security/cacerts"),
            ])
        // No browser and no database: Chromium's is not made up; JAVA_HOME wins over PATH.
        let bare = TrustStore.locations(
            systemStore: nil, nssDatabases: [], javaCacerts: nil,
            machine: machine(files: ["/opt/jdk/lib/security/cacerts"], javaHome: "/opt/jdk"))
        #expect(bare == [.java(cacerts: "/opt/jdk/lib/security/cacerts")])
        // Newer Firefox releases' XDG folder, and the Flatpaks' own folders.
        let sandboxed = TrustStore.locations(
            systemStore: nil, nssDatabases: [], javaCacerts: nil,
            machine: machine(files: [
                "/h/ada/.config/mozilla/firefox/x3.default/cert9.db",
                "/h/ada/.var/app/org.mozilla.firefox/.mozilla/firefox/f4.default/cert9.db",
                "/h/ada/.var/app/org.chromium.Chromium/.pki/nssdb",
            ]))
        #expect(
            sandboxed == [
                .nss(directory: "/h/ada/.var/app/org.chromium.Chromium/.pki/nssdb", owner: "Chromium Flatpak"),
                .nss(directory: "/h/ada/.config/mozilla/firefox/x3.default", owner: "Firefox profile x3.default"),
                .nss(
                    directory: "/h/ada/.var/app/org.mozilla.firefox/.mozilla/firefox/f4.default",
                    owner: "Firefox profile f4.default"),
            ])
    }

    @Test("Names carry the fingerprint's start; certutil's listing is read for the C trust flag")
    func namesAndListing() {
        let fingerprint = "81:5A:61:03:F7:29:5C:04"
        #expect(TrustStore.nickname(fingerprint: fingerprint) == "Sluice local CA (815A6103)")
        #expect(TrustStore.alias(fingerprint: fingerprint) == "sluice-815a6103")
        let listing = """

            Certificate Nickname                                         Trust Attributes
                                                                         SSL,S/MIME,JAR/XPI

            Sluice local CA (815A6103)                                   C,,
            Other CA                                                     CT,C,C
            """
        #expect(TrustStore.nssListsTrusted(listing, nickname: "Sluice local CA (815A6103)"))
        #expect(!TrustStore.nssListsTrusted(listing, nickname: "Sluice local CA (00000000)"))
        #expect(
            !TrustStore.nssListsTrusted("Sluice local CA (815A6103)   ,,P\n", nickname: "Sluice local CA (815A6103)"))
    }
}
