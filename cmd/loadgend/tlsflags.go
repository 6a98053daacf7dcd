package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/netloadgen/netloadgen/api"
)

// tlsFlags are `loadgend run`'s --tls-* flags, which fill the spec's tls
// block: the CA file's contents inline (as the API takes it), the client
// certificate and key as @file: references to the files given, read when
// the run is built and held in memory only.
type tlsFlags struct {
	ca, serverName, cert, key string
	insecure                  bool
}

func (t *tlsFlags) add(f *specFlags) {
	f.str(&t.ca, "tls-ca", "tls.ca_pem", "", "PEM file of CA certificates to trust in addition to the system's roots (https://, grpcs://)")
	f.str(&t.serverName, "tls-server-name", "tls.server_name", "", "the name sent in SNI and checked in the server's certificate, whatever the target's host")
	f.str(&t.cert, "tls-cert", "tls.client_cert", "", "client certificate PEM file, for mutual TLS (with --tls-key)")
	f.str(&t.key, "tls-key", "tls.client_key", "", "the client certificate's key PEM file (with --tls-cert)")
	f.fs.BoolVar(&t.insecure, "tls-insecure", false, "check nothing of the server's certificate (a warning, recorded in result.json)")
	f.flagOf["tls.insecure_skip_verify"] = "tls-insecure"
}

// fill writes the flags given into spec.TLS (left nil when none was).
func (t *tlsFlags) fill(spec *api.RunSpec) error {
	if (t.cert == "") != (t.key == "") {
		return errors.New("--tls-cert and --tls-key go together: give both (the client certificate and its key)")
	}
	if t.ca == "" && t.serverName == "" && t.cert == "" && !t.insecure {
		return nil
	}
	c := &api.TLS{ServerName: t.serverName, InsecureSkipVerify: t.insecure}
	if t.ca != "" {
		b, err := os.ReadFile(t.ca)
		if err != nil {
			return fmt.Errorf("--tls-ca: %w", err)
		}
		c.CAPEM = string(b)
	}
	if t.cert != "" {
		c.ClientCert, c.ClientKey = api.FileRef+t.cert, api.FileRef+t.key
	}
	spec.TLS = c
	return nil
}
