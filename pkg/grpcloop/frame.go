package grpcloop

import (
	"encoding/binary"
	"fmt"
)

// HTTP/2 wire constants (RFC 7540 §6, §11).
const (
	frameHeaderLen = 9

	frameData         = 0x0
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20

	settingHeaderTableSize      = 0x1
	settingEnablePush           = 0x2
	settingMaxConcurrentStreams = 0x3
	settingInitialWindowSize    = 0x4
	settingMaxFrameSize         = 0x5
	settingMaxHeaderListSize    = 0x6

	errCodeNo            = 0x0
	errCodeProtocol      = 0x1
	errCodeFlowControl   = 0x3
	errCodeFrameSize     = 0x6
	errCodeRefusedStream = 0x7
	errCodeCompression   = 0x9
	errCodeCancel        = 0x8

	// defaultWindow and defaultMaxFrame hold until the peer's SETTINGS
	// say otherwise; defaultMaxFrame is also the largest frame we accept,
	// since we never raise it (so a frame always fits the read buffer).
	defaultWindow   = 65535
	defaultMaxFrame = 16384
	maxWindow       = 1<<31 - 1

	// recvWindow is what we grant the server, per stream and for the
	// connection: large enough that a load test's answers never wait for
	// a WINDOW_UPDATE, and replenished at half.
	recvWindow = 1 << 30
)

// maxHeaderBlock bounds one header block: a server that sends more (an
// endless run of CONTINUATION frames) is not answering a call.
const maxHeaderBlock = 1 << 20

// clientPreface starts every connection (RFC 7540 §3.5).
const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// frameHeader is a parsed 9-byte frame header.
type frameHeader struct {
	length int
	typ    byte
	flags  byte
	stream uint32
}

func parseFrameHeader(b []byte) frameHeader {
	return frameHeader{
		length: int(b[0])<<16 | int(b[1])<<8 | int(b[2]),
		typ:    b[3],
		flags:  b[4],
		stream: binary.BigEndian.Uint32(b[5:9]) & maxWindow,
	}
}

func appendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24), byte(stream>>16), byte(stream>>8), byte(stream))
}

func appendSetting(b []byte, id uint16, v uint32) []byte {
	return append(b, byte(id>>8), byte(id), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func appendWindowUpdate(b []byte, stream uint32, inc uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, stream)
	return binary.BigEndian.AppendUint32(b, inc)
}

func appendRSTStream(b []byte, stream uint32, code uint32) []byte {
	b = appendFrameHeader(b, 4, frameRSTStream, 0, stream)
	return binary.BigEndian.AppendUint32(b, code)
}

// appendClientStart is what a connection sends first: the preface, our
// SETTINGS (no push; a large stream window) and a connection WINDOW_UPDATE
// (the connection window is not a setting: it starts at 65,535 whatever we
// say, RFC 7540 §6.9.2).
func appendClientStart(b []byte) []byte {
	b = append(b, clientPreface...)
	b = appendFrameHeader(b, 2*6, frameSettings, 0, 0)
	b = appendSetting(b, settingEnablePush, 0)
	b = appendSetting(b, settingInitialWindowSize, recvWindow)
	return appendWindowUpdate(b, 0, recvWindow-defaultWindow)
}

// stripPadding returns a DATA or HEADERS payload without its padding (and,
// for HEADERS, its priority fields); ok false if the padding is longer than
// the payload (a PROTOCOL_ERROR, RFC 7540 §6.1).
func stripPadding(p []byte, flags byte, headers bool) ([]byte, bool) {
	if flags&flagPadded != 0 {
		if len(p) < 1 {
			return nil, false
		}
		pad := int(p[0])
		p = p[1:]
		if pad > len(p) {
			return nil, false
		}
		p = p[:len(p)-pad]
	}
	if headers && flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, false
		}
		p = p[5:]
	}
	return p, true
}

// errCodeName is an HTTP/2 error code's name (RFC 7540 §7).
func errCodeName(code uint32) string {
	names := [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
		"STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
		"ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}
	if int(code) < len(names) {
		return names[code]
	}
	return fmt.Sprintf("0x%x", code)
}
