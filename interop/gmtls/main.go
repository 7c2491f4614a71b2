// Command gmtls is tjfoc/gmsm's TLCP (package gmtls) as a peer of shangmi's interop tests:
// ECC_SM4_CBC_SM3 (the one suite it completes), as a server that reverses each line it reads,
// as a client that sends stdin and prints what comes back, or as an HTTP client that sends
// one GET and prints the whole response.
//
//	gmtls server ADDR SIGN.pem SIGN.key ENC.pem ENC.key [CLIENT-CA.pem]
//	gmtls client ADDR CA.pem [SIGN.pem SIGN.key ENC.pem ENC.key]
//	gmtls get ADDR CA.pem [SIGN.pem SIGN.key ENC.pem ENC.key]
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/tjfoc/gmsm/gmtls"
	"github.com/tjfoc/gmsm/x509"
)

func pool(path string) *x509.CertPool {
	pem, err := os.ReadFile(path)
	check(err)
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		check(fmt.Errorf("%s: no certificate", path))
	}
	return p
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gmtls:", err)
		os.Exit(1)
	}
}

func pair(args []string) []gmtls.Certificate {
	sign, err := gmtls.LoadX509KeyPair(args[0], args[1])
	check(err)
	enc, err := gmtls.LoadX509KeyPair(args[2], args[3])
	check(err)
	return []gmtls.Certificate{sign, enc}
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func server(args []string) {
	config := &gmtls.Config{GMSupport: &gmtls.GMSupport{}, Certificates: pair(args[1:5])}
	if len(args) > 5 {
		config.ClientCAs = pool(args[5])
		config.ClientAuth = gmtls.RequireAndVerifyClientCert
	}
	ln, err := gmtls.Listen("tcp", args[0], config)
	check(err)
	fmt.Fprintln(os.Stderr, "listening on", ln.Addr())
	for {
		conn, err := ln.Accept()
		check(err)
		go func() {
			defer conn.Close()
			r := bufio.NewReader(conn)
			for {
				line, err := r.ReadString('\n')
				if len(line) > 0 {
					n := len(line)
					if line[n-1] == '\n' {
						line = line[:n-1]
					}
					if _, werr := io.WriteString(conn, reverse(line)+"\n"); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func dial(args []string) *gmtls.Conn {
	config := &gmtls.Config{GMSupport: &gmtls.GMSupport{}, RootCAs: pool(args[1]), ServerName: "localhost"}
	if len(args) > 2 {
		config.Certificates = pair(args[2:6])
	}
	conn, err := gmtls.Dial("tcp", args[0], config)
	check(err)
	return conn
}

func get(args []string) {
	conn := dial(args)
	defer conn.Close()
	_, err := io.WriteString(conn, "GET /gmtls HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	check(err)
	// The response ends when the server closes.
	_, _ = io.Copy(os.Stdout, conn)
	state := conn.ConnectionState()
	fmt.Fprintf(os.Stderr, "suite %#04x version %#04x\n", state.CipherSuite, state.Version)
}

func client(args []string) {
	conn := dial(args)
	defer conn.Close()
	input, err := io.ReadAll(os.Stdin)
	check(err)
	_, err = conn.Write(input)
	check(err)
	want := len(input)
	got := make([]byte, 0, want)
	buf := make([]byte, 4096)
	for len(got) < want {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	os.Stdout.Write(got)
	state := conn.ConnectionState()
	fmt.Fprintf(os.Stderr, "suite %#04x version %#04x\n", state.CipherSuite, state.Version)
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: gmtls server ADDR SIGN.pem SIGN.key ENC.pem ENC.key [CA] | gmtls client|get ADDR CA.pem [SIGN.pem SIGN.key ENC.pem ENC.key]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "server":
		server(os.Args[2:])
	case "client":
		client(os.Args[2:])
	case "get":
		get(os.Args[2:])
	default:
		os.Exit(2)
	}
}
