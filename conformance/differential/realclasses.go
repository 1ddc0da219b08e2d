package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The ClusterClasses Cluster API ships and tests with whose patches are all inline, each with
// the Cluster of a cluster-template file of the same module (paths in the test module), and,
// where the class defines other variables than the Cluster sets, the values to set instead
// (per variant: 0 the defaults, 1 every variable set to another value).
var realClasses = []struct {
	class, cluster string
	variables      func(variant int) []any
}{
	{"infrastructure/docker/templates/clusterclass-quick-start.yaml", "infrastructure/docker/templates/cluster-template-development.yaml", nil},
	{"infrastructure/docker/templates/clusterclass-quick-start.yaml", "infrastructure/docker/templates/cluster-template-development-mp.yaml", nil},
	{"infrastructure/docker/templates/clusterclass-in-memory.yaml", "infrastructure/docker/templates/cluster-template-in-memory.yaml", nil},
	// The e2e's quick-start (Docker kinds) with the development Cluster. (The e2e's in-memory
	// class calls CAPI's test extension: not a case here.)
	{"e2e/data/infrastructure-docker/main/clusterclass-quick-start.yaml", "infrastructure/docker/templates/cluster-template-development.yaml", e2eQuickStartVariables},
}

func e2eQuickStartVariables(variant int) []any {
	variable := func(name string, value any) any { return obj{"name": name, "value": value} }
	if variant == 0 {
		return []any{variable("lbImageRepository", "kindest"), variable("etcdImageTag", ""), variable("coreDNSImageTag", "")}
	}
	return []any{
		variable("lbImageRepository", "registry.example.com"), variable("etcdImageTag", "3.5.21-0"),
		variable("coreDNSImageTag", "v1.12.0"), variable("kubeadmControlPlaneMaxSurge", "1"),
		variable("preLoadImages", []any{"registry.example.com/pause:3.10"}), variable("controlPlaneTaint", false),
		variable("externalCloudProvider", true), variable("kubeControlPlaneLogLevel", "2"), variable("kubeletLogLevel", "4"),
	}
}

// The CRDs of the kinds those classes use, in the modules (root, test) of the release.
var realCRDs = []string{
	"root:controlplane/kubeadm/config/crd/bases",
	"root:bootstrap/kubeadm/config/crd/bases",
	"test:infrastructure/docker/config/crd/bases",
}

// envsubst as clusterctl applies it to cluster templates: ${VAR}, ${VAR:=default},
// ${VAR:-default}, defaults that are variables themselves (innermost first).
var envVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:[=-]([^}$]*))?\}`)

func envsubst(text string, values map[string]string) string {
	for {
		next := envVar.ReplaceAllStringFunc(text, func(m string) string {
			parts := envVar.FindStringSubmatch(m)
			if v, ok := values[parts[1]]; ok {
				return v
			}
			return parts[3]
		})
		if next == text {
			return text
		}
		text = next
	}
}

func documents(path string) []obj {
	return documentsOf(read(path))
}

// documentsOf parses the YAML documents of a text (those with a kind).
func documentsOf(text string) []obj {
	var out []obj
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		var o obj
		must(yaml.Unmarshal([]byte(doc), &o))
		if o != nil && o["kind"] != nil {
			out = append(out, o)
		}
	}
	return out
}

// loadCRDs reads the CRDs of the given folders, labelled with the contract the way each
// provider's kustomization labels them.
func loadCRDs(rootModule, testModule string) []*apiextensionsv1.CustomResourceDefinition {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, spec := range realCRDs {
		module, dir, _ := strings.Cut(spec, ":")
		base := rootModule
		if module == "test" {
			base = testModule
		}
		files, err := filepath.Glob(filepath.Join(base, dir, "*.yaml"))
		must(err)
		for _, file := range files {
			body, err := os.ReadFile(file)
			must(err)
			crd := &apiextensionsv1.CustomResourceDefinition{}
			must(yaml.Unmarshal(body, crd))
			if crd.Labels == nil {
				crd.Labels = map[string]string{}
			}
			crd.Labels["cluster.x-k8s.io/v1beta2"] = "v1beta2"
			crds = append(crds, crd)
		}
	}
	return crds
}

// realCases: each class and Cluster over a grid of versions, replicas and the values of the
// variables the Cluster sets (the values of the class's own examples and their alternatives).
func realCases(testModule string, crds []*apiextensionsv1.CustomResourceDefinition) []*testCase {
	var cases []*testCase
	for i, rc := range realClasses {
		class, templates := classAndTemplates(documents(filepath.Join(testModule, rc.class)))
		n := 0
		for _, version := range []string{"v1.33.4", "v1.34.1"} {
			for _, cp := range []string{"1", "3"} {
				for _, variant := range []int{0, 1} {
					name := fmt.Sprintf("real%d-%s-%s-%d", i, strings.ReplaceAll(version, ".", ""), cp, variant)
					values := map[string]string{
						"CLUSTER_NAME": "c-" + name, "NAMESPACE": namespace, "KUBERNETES_VERSION": version,
						"CONTROL_PLANE_MACHINE_COUNT": cp, "WORKER_MACHINE_COUNT": "2",
						"POD_SECURITY_STANDARD_ENABLED": fmt.Sprint(variant == 0),
					}
					var cluster obj
					body, err := os.ReadFile(filepath.Join(testModule, rc.cluster))
					must(err)
					for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(envsubst(string(body), values), -1) {
						var o obj
						must(yaml.Unmarshal([]byte(doc), &o))
						if o != nil && o["kind"] == "Cluster" {
							cluster = o
						}
					}
					if cluster == nil {
						panic(fmt.Sprintf("no Cluster in %s", rc.cluster))
					}
					metadata := cluster["metadata"].(obj)
					metadata["uid"] = fmt.Sprintf("5d1b2c8e-0000-4000-8000-%012d", i*100+n)
					if rc.variables != nil {
						cluster["spec"].(obj)["topology"].(obj)["variables"] = rc.variables(variant)
					} else if variant == 1 {
						varyVariables(cluster)
					}
					cases = append(cases, &testCase{
						name: name, cluster: cluster, clusterClass: deepCopyObj(class),
						templates: deepCopyList(templates), crds: crds,
						origin: rc.class + " + " + filepath.Base(rc.cluster),
					})
					n++
				}
			}
		}
	}
	return cases
}

// classAndTemplates splits a ClusterClass file's documents, each put in the namespace.
func classAndTemplates(docs []obj) (class obj, templates []obj) {
	for _, o := range docs {
		setNamespace(o)
		if o["kind"] == "ClusterClass" {
			class = o
		} else {
			templates = append(templates, o)
		}
	}
	return class, templates
}

// varyVariables gives the variables the Cluster sets other values of their type.
func varyVariables(cluster obj) {
	topology := cluster["spec"].(obj)["topology"].(obj)
	vars, _ := topology["variables"].([]any)
	for _, v := range vars {
		variable := v.(obj)
		switch variable["name"] {
		case "imageRepository":
			variable["value"] = "registry.example.com/mirror"
		case "etcdImageTag":
			variable["value"] = "3.5.21-0"
		case "coreDNSImageTag":
			variable["value"] = "v1.12.0"
		}
	}
}

func setNamespace(o obj) {
	metadata, _ := o["metadata"].(obj)
	if metadata == nil {
		metadata = obj{}
		o["metadata"] = metadata
	}
	if metadata["namespace"] == nil {
		metadata["namespace"] = namespace
	}
}

func deepCopyObj(o obj) obj {
	return normalize(o).(obj)
}

func deepCopyList(list []obj) []obj {
	out := make([]obj, len(list))
	for i, o := range list {
		out[i] = deepCopyObj(o)
	}
	return out
}

// reportByOrigin prints the outcome per real class and Cluster.
func reportByOrigin(cases []*testCase, results []result) {
	byOrigin := map[string]map[string]int{}
	for i, tc := range cases {
		if byOrigin[tc.origin] == nil {
			byOrigin[tc.origin] = map[string]int{}
		}
		byOrigin[tc.origin][results[i].outcome]++
		if results[i].outcome == "equal" && results[i].again != "" && results[i].againRefused == "" {
			byOrigin[tc.origin]["again"]++
		}
	}
	var origins []string
	for o := range byOrigin {
		origins = append(origins, o)
	}
	sort.Strings(origins)
	for _, o := range origins {
		c := byOrigin[o]
		fmt.Printf("  %s: %d identical (%d also past creation), %d refused by both, %d mismatches\n", o, c["equal"], c["again"], c["both-failed"], c["mismatch"])
	}
}
