#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        /// The pin of `certificate` (a PEM file) computed with the openssl pipeline the docs give the app.
        static func opensslPin(_ certificate: String) throws -> CertificatePin {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | base64",
                "pin", certificate,
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let base64 = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return try CertificatePin("sha256/" + base64)
        }

        @Test("a pinned server key opens the connection; so does a set with a backup pin beside it")
        func pinnedKeyOpens() throws {
            let peer = try Peers.tls.get()
            let certificates = try Certificates.shared.get()
            let serverPin = try Self.opensslPin(certificates.directory + "/server.pem")
            let backup = try Self.opensslPin(certificates.directory + "/wronghost.pem")
            for pins in [[serverPin], [backup, serverPin]] {
                var options = try tlsOptions()
                options.tlsPins = Set(pins)
                let (connection, recorder) = connect("wss://localhost:\(peer.port)/echo", options: options)
                #expect(recorder.waitOpened().first == .opened(protocol: nil))
                #expect(connection.send(text: "pinned"))
                #expect(recorder.waitTexts(1) == ["pinned"])
                connection.close(code: .normalClosure, reason: "")
                #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            }
        }

        @Test("a valid certificate whose key matches no pin fails with .certificate, before any upgrade is sent")
        func unpinnedKeyFails() throws {
            let peer = try Peers.tls.get()
            let certificates = try Certificates.shared.get()
            var options = try tlsOptions()
            options.tlsPins = [try Self.opensslPin(certificates.directory + "/wronghost.pem")]
            let (_, recorder) = connect("wss://localhost:\(peer.port)/echo", options: options)
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .certificate)
            #expect("\(String(describing: info))".contains("no certificate matches a pin"))
            #expect(recorder.events.count == 1)  // never opened
        }

        @Test("pins do not replace verification: a pinned key on an untrusted certificate still fails")
        func pinsDoNotReplaceVerification() throws {
            let peer = try Peers.tls.get()
            let certificates = try Certificates.shared.get()
            var options = SocketTransport.Options()  // the test CA is not trusted
            options.tlsPins = [try Self.opensslPin(certificates.directory + "/server.pem")]
            let (_, recorder) = connect("wss://localhost:\(peer.port)/echo", options: options)
            #expect(recorder.waitClosed()?.failureKind == .certificate)
        }

        @Test("an unreadable CA file is a permanent .certificate failure")
        func unreadableCAFile() throws {
            let peer = try Peers.tls.get()
            var options = SocketTransport.Options()
            options.tlsCAFilePath = "/nonexistent/ca.pem"
            let (_, recorder) = connect("wss://localhost:\(peer.port)/echo", options: options)
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .certificate)
            #expect("\(String(describing: info))".contains("cannot load the CA file"))
        }
    }
#endif
