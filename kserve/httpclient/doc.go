// Package httpclient is the KServe v2 REST client: fasthttp's HTTP/1.1 codec
// over a keep-alive pool of its own, with requests encoded once by package
// kserve's REST codec and sent many times.
//
// It sits beside the codec rather than in it so that what needs only the
// protocol (the event loops, the servers, the sample library) imports
// neither a client, fasthttp, nor the receive timestamps of pkg/rxstamp.
package httpclient
