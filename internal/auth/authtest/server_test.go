package authtest_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/auth/authtest"
)

func post(t *testing.T, srv *authtest.Server, body string) int {
	t.Helper()
	// The request as node-minecraft-protocol's yggdrasil package sends it.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+authtest.JoinPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "node-yggdrasil/1.7.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func hasJoined(t *testing.T, srv *authtest.Server, user, hash string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + auth.HasJoinedPath + "?" + url.Values{"username": {user}, "serverId": {hash}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestJoinShapes(t *testing.T) {
	srv := authtest.New(t)
	a := srv.AddAccount("Steve")
	for name, body := range map[string]string{
		"undashed string": `{"accessToken":"` + a.AccessToken + `","selectedProfile":"` + a.ID.Undashed() + `","serverId":"-1a"}`,
		"dashed string":   `{"accessToken":"` + a.AccessToken + `","selectedProfile":"` + a.ID.String() + `","serverId":"-1a"}`,
		"profile object":  `{"accessToken":"` + a.AccessToken + `","selectedProfile":{"id":"` + a.ID.Undashed() + `","name":"Steve"},"serverId":"-1a"}`,
	} {
		if code := post(t, srv, body); code != http.StatusNoContent {
			t.Errorf("%s: join answered %d, want 204 (%v)", name, code, srv.RejectedJoins())
		}
	}
	if code, body := hasJoined(t, srv, "Steve", "-1a"); code != 200 || !strings.Contains(body, a.ID.Undashed()) || !strings.Contains(body, `"signature"`) {
		t.Fatalf("hasJoined = %d %s", code, body)
	}
	if code, _ := hasJoined(t, srv, "Steve", "-1b"); code != http.StatusNoContent {
		t.Fatalf("hasJoined with another hash = %d, want 204", code)
	}
	if srv.JoinCalls() != 3 || srv.HasJoinedCalls() != 2 {
		t.Fatalf("counters join=%d hasJoined=%d", srv.JoinCalls(), srv.HasJoinedCalls())
	}
}

func TestJoinRefusals(t *testing.T) {
	srv := authtest.New(t)
	a := srv.AddAccount("Steve")
	other := srv.AddAccount("Alex")
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"unknown token", `{"accessToken":"nope","selectedProfile":"` + a.ID.Undashed() + `","serverId":"x"}`, 403},
		{"token of another profile", `{"accessToken":"` + other.AccessToken + `","selectedProfile":"` + a.ID.Undashed() + `","serverId":"x"}`, 403},
		{"not json", `accessToken=1`, 400},
		{"bad profile", `{"accessToken":"` + a.AccessToken + `","selectedProfile":"Steve","serverId":"x"}`, 400},
		{"no server id", `{"accessToken":"` + a.AccessToken + `","selectedProfile":"` + a.ID.Undashed() + `"}`, 400},
	} {
		if code := post(t, srv, tc.body); code != tc.code {
			t.Errorf("%s: join answered %d, want %d", tc.name, code, tc.code)
		}
	}
	if n := len(srv.RejectedJoins()); n != 5 {
		t.Fatalf("rejected joins recorded = %d, want 5", n)
	}
	if code, _ := hasJoined(t, srv, "Steve", "x"); code != http.StatusNoContent {
		t.Fatalf("a refused join still verified: %d", code)
	}
}

func TestModes(t *testing.T) {
	srv := authtest.New(t)
	a := srv.AddAccount("Steve")
	if err := srv.ClientJoin(a, "h"); err != nil {
		t.Fatal(err)
	}
	srv.SetMode(authtest.Unavailable)
	if code, _ := hasJoined(t, srv, "Steve", "h"); code != 503 {
		t.Fatalf("Unavailable answered %d", code)
	}
	srv.SetMode(authtest.Garbage)
	if code, body := hasJoined(t, srv, "Steve", "h"); code != 200 || strings.HasPrefix(body, "{") {
		t.Fatalf("Garbage answered %d %q", code, body)
	}
	srv.SetMode(authtest.Normal)
	if code, _ := hasJoined(t, srv, "Steve", "h"); code != 200 {
		t.Fatalf("Normal answered %d", code)
	}
	q := srv.HasJoinedQueries()
	if len(q) != 3 || q[0].Get("username") != "Steve" {
		t.Fatalf("queries = %v", q)
	}
	if p, ok := srv.Profile("steve"); !ok || p.ID != a.ID || p.Properties[0].Name != "textures" {
		t.Fatalf("Profile = %+v, %v", p, ok)
	}
	if _, ok := srv.Profile("nobody"); ok {
		t.Fatal("Profile of an unknown name")
	}
	srv.Close()
	srv.Close() // the test's cleanup closes again
}

// A hanging hasJoined must not keep Close (and so the test) from finishing.
func TestHangReleasedByClose(t *testing.T) {
	srv := authtest.New(t)
	srv.SetMode(authtest.Hang)
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(srv.URL + auth.HasJoinedPath + "?username=a&serverId=b")
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.AwaitHasJoined(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		t.Fatalf("hang answered %d before Close", code)
	default:
	}
	srv.Close()
	<-done
}

// The account endpoints nmp calls before it joins.
func TestValidateAndCertificates(t *testing.T) {
	srv := authtest.New(t)
	a := srv.AddAccount("Steve")
	postJSON := func(path, body, bearer string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, _ := postJSON(authtest.ValidatePath, `{"accessToken":"`+a.AccessToken+`","clientToken":"test"}`, ""); code != 204 {
		t.Fatalf("validate with a good token = %d", code)
	}
	if code, _ := postJSON(authtest.ValidatePath, `{"accessToken":"bad"}`, ""); code != 403 {
		t.Fatalf("validate with a bad token = %d", code)
	}
	if code, _ := postJSON(authtest.CertificatesPath, "", "bad"); code != 401 {
		t.Fatalf("certificates with a bad token = %d", code)
	}
	if _, ok := srv.PlayerKey("Steve"); ok {
		t.Fatal("a key exists before the client asked for one")
	}
	code, body := postJSON(authtest.CertificatesPath, "", a.AccessToken)
	if code != 200 {
		t.Fatalf("certificates = %d %s", code, body)
	}
	var cert struct {
		KeyPair struct {
			PrivateKey, PublicKey string
		}
		PublicKeySignature, PublicKeySignatureV2, ExpiresAt, RefreshedAfter string
	}
	if err := json.Unmarshal(body, &cert); err != nil {
		t.Fatal(err)
	}
	k, ok := srv.PlayerKey("steve")
	if !ok {
		t.Fatal("no key recorded")
	}
	// What nmp does with the answer: strip the PEM armour, parse SPKI and PKCS#8.
	pubBlock, _ := pem.Decode([]byte(cert.KeyPair.PublicKey))
	privBlock, _ := pem.Decode([]byte(cert.KeyPair.PrivateKey))
	if pubBlock == nil || privBlock == nil || !bytes.Equal(pubBlock.Bytes, k.PublicKeyDER) {
		t.Fatalf("PEM blocks do not hold the recorded key")
	}
	if _, err := x509.ParsePKIXPublicKey(pubBlock.Bytes); err != nil {
		t.Fatalf("public key is not SPKI: %v", err)
	}
	if _, err := x509.ParsePKCS8PrivateKey(privBlock.Bytes); err != nil {
		t.Fatalf("private key is not PKCS#8: %v", err)
	}
	exp, err := time.Parse(time.RFC3339Nano, cert.ExpiresAt)
	if err != nil || !exp.Equal(k.ExpiresAt) {
		t.Fatalf("expiresAt %q vs %v (%v)", cert.ExpiresAt, k.ExpiresAt, err)
	}
	// The v2 signature verifies as vanilla 1.19.1+ checks it: UUID, expiry millis, DER.
	sigV2, _ := base64.StdEncoding.DecodeString(cert.PublicKeySignatureV2)
	msg := append(append(a.ID[:], binary.BigEndian.AppendUint64(nil, uint64(exp.UnixMilli()))...), k.PublicKeyDER...)
	sum := sha1.Sum(msg)
	if err := rsa.VerifyPKCS1v15(srv.SigningKey(), crypto.SHA1, sum[:], sigV2); err != nil {
		t.Fatalf("v2 signature: %v", err)
	}
	// A second fetch returns the same key.
	_, again := postJSON(authtest.CertificatesPath, "", a.AccessToken)
	if !bytes.Equal(again, body) {
		t.Fatal("a second fetch issued another key")
	}
}

// nmp's toDER: drop the first and last lines, base64-decode the rest.
func TestCertificatePEMSurvivesNmpParsing(t *testing.T) {
	srv := authtest.New(t)
	a := srv.AddAccount("Steve")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+authtest.CertificatesPath, nil)
	req.Header.Set("Authorization", "Bearer "+a.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cert struct{ KeyPair struct{ PublicKey string } }
	if err := json.NewDecoder(resp.Body).Decode(&cert); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(cert.KeyPair.PublicKey, "\n")
	der, err := base64.StdEncoding.DecodeString(strings.Join(lines[1:len(lines)-1], ""))
	k, _ := srv.PlayerKey("Steve")
	if err != nil || !bytes.Equal(der, k.PublicKeyDER) {
		t.Fatalf("first-and-last-line stripping gives %d bytes (%v), want the key", len(der), err)
	}
}
