package devenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is a throw-away CA for one run, and the certificates every component needs.
type PKI struct {
	Dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	CAPEM  []byte
}

func writePEM(path, kind string, der []byte) {
	must(os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}

// NewPKI makes a CA named cn (distinct names, so a wrong CA reads as an unknown authority).
func NewPKI(dir, cn string) *PKI {
	must(os.MkdirAll(dir, 0o755))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(err)
	cert, err := x509.ParseCertificate(der)
	must(err)
	p := &PKI{Dir: dir, caCert: cert, caKey: key, CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	must(os.WriteFile(filepath.Join(dir, "ca.crt"), p.CAPEM, 0o644))
	return p
}

var serial int64 = 1

// Leaf writes <name>.crt and <name>.key signed by the CA; server certificates get the
// loopback SANs, client certificates the given organizations.
func (p *PKI) Leaf(name, cn string, orgs []string, server bool) (certPath, keyPath string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	must(err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(err)
	certPath, keyPath = filepath.Join(p.Dir, name+".crt"), filepath.Join(p.Dir, name+".key")
	writePEM(certPath, "CERTIFICATE", der)
	writePEM(keyPath, "EC PRIVATE KEY", keyDER)
	return certPath, keyPath
}

// ServiceAccountKeys writes the key pair kube-apiserver signs service account tokens with.
func (p *PKI) ServiceAccountKeys() (pub, priv string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(err)
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must(err)
	pub, priv = filepath.Join(p.Dir, "sa.pub"), filepath.Join(p.Dir, "sa.key")
	writePEM(pub, "PUBLIC KEY", pubDER)
	writePEM(priv, "EC PRIVATE KEY", keyDER)
	return pub, priv
}

// Certs are the certificates of a run: a CA for serving certificates (IP SAN 127.0.0.1) and the
// admin client, and a second CA for the client certificate Cluster API's managers present to
// extensions, which an extension requires (client-ca.crt in its certificate folder).
type Certs struct {
	PKI, ClientPKI                *PKI
	CAPIClientCert, CAPIClientKey string
	AdminCert, AdminKey           string
	WebhookDir, ExtensionDir      string
}

// NewCerts makes them under work: <name>-ca and <name>-client-ca, the managers' client
// certificate with the common name managerCN, the admin's (system:masters), and the serving
// certificates of the managers' webhooks (capi-webhook-certs/) and of extensions
// (extension-certs/, with client-ca.crt).
func NewCerts(work, name, managerCN string) *Certs {
	c := &Certs{
		PKI:          NewPKI(filepath.Join(work, "pki"), name+"-ca"),
		ClientPKI:    NewPKI(filepath.Join(work, "client-pki"), name+"-client-ca"),
		WebhookDir:   filepath.Join(work, "capi-webhook-certs"),
		ExtensionDir: filepath.Join(work, "extension-certs"),
	}
	c.CAPIClientCert, c.CAPIClientKey = c.ClientPKI.Leaf("capi-manager", managerCN, nil, false)
	c.AdminCert, c.AdminKey = c.PKI.Leaf("admin", "admin", []string{"system:masters"}, false)
	for _, d := range []string{c.WebhookDir, c.ExtensionDir} {
		must(os.MkdirAll(d, 0o755))
		crt, key := c.PKI.Leaf(filepath.Base(d), "127.0.0.1", nil, true)
		must(os.Rename(crt, filepath.Join(d, "tls.crt")))
		must(os.Rename(key, filepath.Join(d, "tls.key")))
	}
	must(os.WriteFile(filepath.Join(c.ExtensionDir, "client-ca.crt"), c.ClientPKI.CAPEM, 0o644))
	return c
}
