import Dispatch

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The server's only contact with POSIX: loopback TCP sockets, a wake pipe and `poll`.
///
/// Every descriptor is non-blocking and close-on-exec. `EINTR` is retried; would-block is reported as such;
/// a peer that went away never raises SIGPIPE (`MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on Apple platforms).
enum Socket {
    /// What a read or a write did.
    enum IOResult: Equatable {
        /// This many bytes moved (never 0).
        case done(Int)
        /// Nothing can move now; wait for `poll`.
        case wouldBlock
        /// The peer closed its side (reads only).
        case endOfStream
        /// The socket failed with `errno`.
        case failed(Int32)
    }

    /// `poll` event bits.
    static let pollIn = Int16(POLLIN)
    static let pollOut = Int16(POLLOUT)
    static let pollFailure = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)

    /// A listening TCP socket on 127.0.0.1:`port` (0 = any free port) and the port it got.
    static func listen(port: UInt16, backlog: Int32 = 128) throws(LocalCableServerError) -> (fd: Int32, port: UInt16) {
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard fd >= 0 else { throw LocalCableServerError(.socket, errno: errno) }
        configure(fd)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let failure = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress -> LocalCableServerError? in
                if bind(fd, socketAddress, length) != 0 { return LocalCableServerError(.bind, errno: errno) }
                if Glue.listen(fd, backlog) != 0 { return LocalCableServerError(.listen, errno: errno) }
                if getsockname(fd, socketAddress, &length) != 0 { return LocalCableServerError(.bind, errno: errno) }
                return nil
            }
        }
        if let failure {
            close(fd)
            throw failure
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one pending connection: its descriptor, `nil` when none is pending, or `-1` on another error.
    static func accept(_ listener: Int32) -> Int32? {
        while true {
            // `accept4` and `pipe2` are not visible from Swift's Glibc module, so close-on-exec is set right after;
            // a `fork` in that instant could inherit the descriptor (tests rarely fork, and the child execs).
            #if canImport(Darwin)
                let fd = Darwin.accept(listener, nil, nil)
            #elseif canImport(Glibc)
                let fd = Glibc.accept(listener, nil, nil)
            #else
                let fd = Musl.accept(listener, nil, nil)
            #endif
            if fd >= 0 {
                configure(fd)
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: return -1
            }
        }
    }

    /// A pipe whose write end wakes the server thread: `(read, write)`, both non-blocking.
    static func pipe() throws(LocalCableServerError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        #if canImport(Darwin)
            let result = Darwin.pipe(&fds)
        #elseif canImport(Glibc)
            let result = Glibc.pipe(&fds)
        #else
            let result = Musl.pipe(&fds)
        #endif
        guard result == 0 else { throw LocalCableServerError(.pipe, errno: errno) }
        configure(fds[0])
        configure(fds[1])
        return (fds[0], fds[1])
    }

    /// Reads into `buffer`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .done(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: return .failed(code)
            }
        }
    }

    /// Writes as much of `bytes` as the socket takes now.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard !bytes.isEmpty else { return .wouldBlock }
        #if canImport(Darwin)
            let flags: Int32 = 0
        #else
            let flags = Int32(MSG_NOSIGNAL)
        #endif
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, flags)
            if count > 0 { return .done(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: return .failed(code)
            }
        }
    }

    /// Writes one byte to the wake pipe; a full pipe already wakes the reader.
    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = Glue.write(fd, &byte, 1)
    }

    /// Empties the wake pipe.
    static func drain(_ fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 256)
        while bytes.withUnsafeMutableBytes({ Glue.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Half-closes: no more bytes from us; the peer reads end-of-stream after what we sent.
    /// Sets `SO_RCVBUF` (the kernel doubles it and applies its minimum); best effort.
    static func setReceiveBuffer(_ fd: Int32, bytes: Int32) {
        var size = bytes
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    static func shutdownWrite(_ fd: Int32) {
        #if canImport(Darwin)
            _ = shutdown(fd, SHUT_WR)
        #else
            _ = shutdown(fd, Int32(SHUT_WR))
        #endif
    }

    /// Closes `fd` once; never retried (the descriptor is released even when `close` fails).
    static func close(_ fd: Int32) {
        guard fd >= 0 else { return }
        _ = Glue.close(fd)
    }

    /// Waits for the events in `fds` for at most `timeout` milliseconds (-1: forever).
    static func poll(_ fds: inout [pollfd], timeout: Int32) {
        let result = fds.withUnsafeMutableBufferPointer { buffer in
            Glue.poll(buffer.baseAddress, nfds_t(buffer.count), timeout)
        }
        if result < 0 {
            // EINTR (or ENOMEM): report nothing ready; the loop simply polls again.
            for index in fds.indices { fds[index].revents = 0 }
        }
    }

    /// A monotonic clock in nanoseconds.
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// Non-blocking, close-on-exec and (Apple platforms) no SIGPIPE.
    private static func configure(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}

/// The C library's functions whose names `Socket` reuses for its own.
private enum Glue {
    static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Darwin)
            Darwin.listen(fd, backlog)
        #elseif canImport(Glibc)
            Glibc.listen(fd, backlog)
        #else
            Musl.listen(fd, backlog)
        #endif
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.read(fd, buffer, count)
        #elseif canImport(Glibc)
            Glibc.read(fd, buffer, count)
        #else
            Musl.read(fd, buffer, count)
        #endif
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.write(fd, buffer, count)
        #elseif canImport(Glibc)
            Glibc.write(fd, buffer, count)
        #else
            Musl.write(fd, buffer, count)
        #endif
    }

    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
            Darwin.close(fd)
        #elseif canImport(Glibc)
            Glibc.close(fd)
        #else
            Musl.close(fd)
        #endif
    }

    static func poll(_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 {
        #if canImport(Darwin)
            Darwin.poll(fds, count, timeout)
        #elseif canImport(Glibc)
            Glibc.poll(fds, count, timeout)
        #else
            Musl.poll(fds, count, timeout)
        #endif
    }
}
