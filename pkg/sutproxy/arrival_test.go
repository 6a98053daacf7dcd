package sutproxy

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
)

// TestHTTPArrivalWhileRecording: with emissions recorded, sutproxy's HTTP
// connections are server.EmitConn over the timestamped socket; a request's
// kernel arrival is still found through it.
func TestHTTPArrivalWhileRecording(t *testing.T) {
	defer testtool.RxTimestampsOn()() // this test's packets are the process's first
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	el := server.NewEmitListener(rxstamp.NewListener(ln), func(server.Emission) {}, false)
	defer el.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, err := el.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, ok := sc.(*server.EmitConn); !ok {
		t.Fatalf("accepted %T, want *server.EmitConn", sc)
	}
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init2(sc, nil, false)
	setHTTPArrival(&ctx)
	if rxstamp.FromContext(&ctx) == nil {
		if rc := sc.(*server.EmitConn).Unwrap().(*rxstamp.Conn); !rc.Stamped() {
			t.Skip("this platform's sockets carry no receive timestamps")
		}
		t.Error("no arrival stamp for a request read through an EmitConn")
	}
}
