package devenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Binaries are the programs of a control plane, built from the Go module proxy (see Build).
type Binaries struct {
	Etcd, APIServer, CAPIManager, KCPManager string
	// Assets holds CAPI's CRDs (crds/), its webhooks (webhooks.yaml) and KubeadmControlPlane's
	// (kcp-crds/, kcp-webhooks.yaml).
	Assets string
}

// StartAPIServer starts etcd and kube-apiserver under work (the admin's client certificate from
// p) and returns the API server's port and an admin client.
func StartAPIServer(b Binaries, work string, ps *Processes, p *PKI, adminCert, adminKey string) (int, *Kube, error) {
	apiCert, apiKey := p.Leaf("apiserver", "kube-apiserver", nil, true)
	saPub, saKey := p.ServiceAccountKeys()
	etcdPort, peerPort, apiPort := FreePort(), FreePort(), FreePort()
	plain := HTTPClient(nil, "", "")
	Step("start etcd")
	etcd := ps.Start("etcd", b.Etcd, "--name=e2e", "--data-dir="+filepath.Join(work, "etcd"),
		fmt.Sprintf("--listen-client-urls=http://127.0.0.1:%d", etcdPort), fmt.Sprintf("--advertise-client-urls=http://127.0.0.1:%d", etcdPort),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peerPort), fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peerPort),
		fmt.Sprintf("--initial-cluster=e2e=http://127.0.0.1:%d", peerPort), "--unsafe-no-fsync=true", "--log-level=warn")
	if err := WaitHTTP(plain, fmt.Sprintf("http://127.0.0.1:%d/health", etcdPort), 60*time.Second, etcd); err != nil {
		return 0, nil, err
	}

	Step("start kube-apiserver")
	api := ps.Start("kube-apiserver", b.APIServer, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiPort),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort), "--cert-dir="+filepath.Join(work, "apiserver"),
		"--tls-cert-file="+apiCert, "--tls-private-key-file="+apiKey, "--client-ca-file="+filepath.Join(p.Dir, "ca.crt"),
		fmt.Sprintf("--service-account-issuer=https://127.0.0.1:%d/", apiPort), "--service-account-key-file="+saPub,
		"--service-account-signing-key-file="+saKey, "--service-cluster-ip-range=10.0.0.0/24", "--authorization-mode=RBAC",
		"--disable-admission-plugins=ServiceAccount", "--allow-privileged=true", "--v=1")
	admin := HTTPClient(p.CAPEM, adminCert, adminKey)
	if err := WaitHTTP(admin, fmt.Sprintf("https://127.0.0.1:%d/readyz", apiPort), 120*time.Second, api); err != nil {
		return 0, nil, err
	}
	kube := NewKube(fmt.Sprintf("https://127.0.0.1:%d", apiPort), filepath.Join(p.Dir, "ca.crt"), adminCert, adminKey)
	return apiPort, kube, nil
}

// Managers starts Cluster API's managers against one API server.
type Managers struct {
	Kubeconfig, WebhookDir, ClientCert, ClientKey string
	CA                                            []byte
	Kube                                          *Kube
	Processes                                     *Processes
	Plain                                         *http.Client
}

// Start runs one manager (its feature gates, the runtime-extension client certificate, its
// webhooks on a port of its own, installed with their names prefixed as its release's kustomize
// build names them) and waits until it is ready; it returns the process and its metrics port.
func (m Managers) Start(ctx context.Context, name, bin, gates, webhooksFile, prefix string) (*Process, int, error) {
	webhookPort, health, metrics := FreePort(), FreePort(), FreePort()
	proc := m.Processes.Start(name, bin, "--kubeconfig="+m.Kubeconfig,
		"--feature-gates="+gates, fmt.Sprintf("--webhook-port=%d", webhookPort), "--webhook-cert-dir="+m.WebhookDir,
		fmt.Sprintf("--health-addr=127.0.0.1:%d", health), fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", metrics), "--insecure-diagnostics",
		"--runtime-extension-client-cert-file="+m.ClientCert, "--runtime-extension-client-key-file="+m.ClientKey,
		"--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields", "--v=4")
	if err := WaitHTTP(m.Plain, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), 180*time.Second, proc); err != nil {
		return nil, 0, err
	}
	webhooks, err := os.ReadFile(webhooksFile)
	must(err)
	return proc, metrics, m.Kube.InstallWebhooks(ctx, string(webhooks), fmt.Sprintf("https://127.0.0.1:%d", webhookPort), m.CA, prefix)
}

// InstallCRDs installs Cluster API's CRDs (assets/crds), KubeadmControlPlane's and
// KubeadmConfig's (assets/kcp-crds, with the contract labels their releases' kustomize builds
// add; no kubeadm bootstrap manager runs: bootstrap data is played, as for the Generic* kinds),
// and the Generic* provider kinds (FakeCRD); waits until all are established and returns how
// many there are.
func InstallCRDs(ctx context.Context, kube *Kube, assets string) (int, error) {
	names, err := kube.ApplyFiles(ctx, filepath.Join(assets, "crds"), nil)
	if err != nil {
		return 0, err
	}
	kcp, err := kube.ApplyFiles(ctx, filepath.Join(assets, "kcp-crds"), map[string]string{"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"})
	if err != nil {
		return 0, err
	}
	names = append(names, kcp...)
	for _, kind := range GenericKinds {
		created, err := kube.Apply(ctx, FakeCRD(kind))
		if err != nil {
			return 0, err
		}
		names = append(names, created...)
	}
	return len(names), kube.WaitEstablished(ctx, names)
}
