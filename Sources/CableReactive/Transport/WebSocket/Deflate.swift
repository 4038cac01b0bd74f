#if os(Linux) && canImport(CCableReactiveZlib)
    import CCableReactiveZlib

    /// The permessage-deflate codec of one connection (RFC 7692): raw DEFLATE with a 32 KiB window,
    /// messages ending in an empty sync-flush block whose `00 00 ff ff` tail is not sent.
    ///
    /// Not thread-safe: it lives on its connection's I/O thread. The `z_stream`s are heap-allocated
    /// because zlib keeps a pointer back to them.
    package final class MessageDeflater {
        private let parameters: DeflateParameters
        private let deflateStream: UnsafeMutablePointer<z_stream>
        private let inflateStream: UnsafeMutablePointer<z_stream>
        private var chunk = [UInt8](repeating: 0, count: 16 * 1024)

        /// - Throws: ``FrameError/protocolError(_:)`` if zlib cannot allocate its state.
        package init(parameters: DeflateParameters) throws(FrameError) {
            self.parameters = parameters
            deflateStream = .allocate(capacity: 1)
            deflateStream.initialize(to: z_stream())
            inflateStream = .allocate(capacity: 1)
            inflateStream.initialize(to: z_stream())
            let deflateStatus = czlib_deflateInit2(deflateStream, Z_DEFAULT_COMPRESSION, -15)
            let inflateStatus = czlib_inflateInit2(inflateStream, -15)
            guard deflateStatus == Z_OK, inflateStatus == Z_OK else {
                if deflateStatus == Z_OK { deflateEnd(deflateStream) }
                if inflateStatus == Z_OK { inflateEnd(inflateStream) }
                deflateStream.deallocate()
                inflateStream.deallocate()
                throw .protocolError(.invalidCompressedData)
            }
        }

        deinit {
            deflateEnd(deflateStream)
            inflateEnd(inflateStream)
            deflateStream.deallocate()
            inflateStream.deallocate()
        }

        /// Inflates one received message, failing once the output would exceed `limit` bytes.
        ///
        /// - Throws: ``FrameError/messageTooBig`` above `limit`; a protocol error for corrupt data.
        package func inflate(_ message: [UInt8], limit: Int) throws(FrameError) -> [UInt8] {
            // zlib counts input in 32 bits; a larger message could only come from a huge configured limit.
            guard message.count <= Int(UInt32.max) - 4 else { throw .messageTooBig }
            var input = message
            input.append(contentsOf: [0x00, 0x00, 0xFF, 0xFF])
            var output: [UInt8] = []
            let stream = inflateStream
            let result: FrameError? = input.withUnsafeMutableBufferPointer { inBuffer in
                stream.pointee.next_in = inBuffer.baseAddress
                stream.pointee.avail_in = uInt(inBuffer.count)
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.avail_in = 0
                }
                while true {
                    let (status, produced) = chunk.withUnsafeMutableBufferPointer { outBuffer in
                        stream.pointee.next_out = outBuffer.baseAddress
                        stream.pointee.avail_out = uInt(outBuffer.count)
                        let status = CCableReactiveZlib.inflate(stream, Z_SYNC_FLUSH)
                        let produced = outBuffer.count - Int(stream.pointee.avail_out)
                        stream.pointee.next_out = nil
                        return (status, produced)
                    }
                    guard status == Z_OK || status == Z_BUF_ERROR || status == Z_STREAM_END else {
                        return .protocolError(.invalidCompressedData)
                    }
                    guard produced <= limit - output.count else { return .messageTooBig }
                    output.append(contentsOf: chunk[0..<produced])
                    if status == Z_STREAM_END {
                        // A final block (BFINAL) ends this stream; the next message starts a new one.
                        inflateReset(stream)
                        return nil
                    }
                    // Done once zlib consumed all input and had room to spare (nothing left buffered).
                    if stream.pointee.avail_in == 0 && produced < chunk.count { return nil }
                    if status == Z_BUF_ERROR {
                        return stream.pointee.avail_in == 0 ? nil : .protocolError(.invalidCompressedData)
                    }
                }
            }
            if let result {
                inflateReset(stream)
                throw result
            }
            if parameters.serverNoContextTakeover { inflateReset(stream) }
            return output
        }

        /// Compresses one outgoing message and strips the trailing `00 00 ff ff`.
        package func deflate(_ message: [UInt8]) -> [UInt8] {
            var input = message
            var output: [UInt8] = []
            let stream = deflateStream
            input.withUnsafeMutableBufferPointer { inBuffer in
                stream.pointee.next_in = inBuffer.baseAddress
                stream.pointee.avail_in = uInt(inBuffer.count)
                repeat {
                    let produced = chunk.withUnsafeMutableBufferPointer { outBuffer in
                        stream.pointee.next_out = outBuffer.baseAddress
                        stream.pointee.avail_out = uInt(outBuffer.count)
                        _ = CCableReactiveZlib.deflate(stream, Z_SYNC_FLUSH)
                        let produced = outBuffer.count - Int(stream.pointee.avail_out)
                        stream.pointee.next_out = nil
                        return produced
                    }
                    output.append(contentsOf: chunk[0..<produced])
                } while stream.pointee.avail_out == 0
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            if output.count >= 4 && output.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) {
                output.removeLast(4)
            }
            if parameters.clientNoContextTakeover { deflateReset(stream) }
            // Nothing new to flush (an empty message right after a flush) makes zlib emit nothing at
            // all; send an empty stored-block header instead, as RFC 7692 §7.2.3.6 does.
            return output.isEmpty ? [0x00] : output
        }
    }
#endif
