package k8s_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// object is one decoded manifest document.
type object struct {
	file, kind, name string
	v                any
}

// decode decodes one YAML document strictly (unknown or duplicate fields
// are errors, as kubectl's server-side field validation makes them) into
// the k8s.io/api type of its apiVersion and kind.
func decode(doc []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, err
	}
	var v any
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		v = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		v = &appsv1.StatefulSet{}
	case "v1 Service":
		v = &corev1.Service{}
	case "v1 ConfigMap":
		v = &corev1.ConfigMap{}
	case "v1 Secret":
		v = &corev1.Secret{}
	case "v1 PersistentVolumeClaim":
		v = &corev1.PersistentVolumeClaim{}
	default:
		return object{}, fmt.Errorf("apiVersion %q kind %q is not one this test knows", head.APIVersion, head.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return object{}, err
	}
	if head.Metadata.Name == "" {
		return object{}, fmt.Errorf("%s without metadata.name", head.Kind)
	}
	return object{kind: head.Kind, name: head.Metadata.Name, v: v}, nil
}

// documents splits a multi-document YAML file at its "---" lines.
func documents(b []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return out
}

func load(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var out []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range documents(b) {
			o, err := decode(d)
			if err != nil {
				t.Errorf("%s document %d: %v", f, i+1, err)
				continue
			}
			o.file = f
			out = append(out, o)
		}
	}
	return out
}

// workload is a Deployment's or StatefulSet's pod side.
type workload struct {
	kind, name string
	selector   map[string]string
	pod        corev1.PodTemplateSpec
}

func workloads(objs []object) []workload {
	var out []workload
	for _, o := range objs {
		switch v := o.v.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{o.kind, o.name, v.Spec.Selector.MatchLabels, v.Spec.Template})
		case *appsv1.StatefulSet:
			out = append(out, workload{o.kind, o.name, v.Spec.Selector.MatchLabels, v.Spec.Template})
		}
	}
	return out
}

func names(objs []object, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.kind == kind {
			out = append(out, o.name)
		}
	}
	slices.Sort(out)
	return out
}

func matches(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func portNamed(c corev1.Container, p intstr.IntOrString) bool {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return true
		}
	}
	return false
}

// The manifests decode strictly into k8s.io/api types and hang together:
// the workloads weft needs exist, selectors select their pods, Services
// reach named container ports, every container has CPU and memory
// requests within limits, the HTTP servers are probed on /healthz (weft's
// /metrics needs the token) at a declared port, and every Secret,
// ConfigMap and claim a pod names is declared.
func TestManifests(t *testing.T) {
	objs := load(t)
	want := map[string][]string{
		"Deployment":  {"weft-rollout", "weft-serve", "weft-worker"},
		"StatefulSet": {"weft-nats"},
		"Service":     {"weft-nats", "weft-nats-headless", "weft-rollout", "weft-serve"},
	}
	for kind, w := range want {
		if got := names(objs, kind); !slices.Equal(got, w) {
			t.Errorf("%s objects %v, want %v", kind, got, w)
		}
	}
	secrets, configMaps, claims := names(objs, "Secret"), names(objs, "ConfigMap"), names(objs, "PersistentVolumeClaim")
	probed := map[string]string{"weft-serve": "/healthz", "weft-rollout": "/healthz", "weft-nats": "/healthz?js-enabled-only=true"}
	wl := workloads(objs)
	for _, w := range wl {
		if !matches(w.selector, w.pod.Labels) {
			t.Errorf("%s %s: selector %v does not select its pods %v", w.kind, w.name, w.selector, w.pod.Labels)
		}
		if len(w.pod.Spec.Containers) == 0 {
			t.Errorf("%s %s has no container", w.kind, w.name)
		}
		for _, c := range w.pod.Spec.Containers {
			where := fmt.Sprintf("%s %s container %s", w.kind, w.name, c.Name)
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, okR := c.Resources.Requests[res]
				lim, okL := c.Resources.Limits[res]
				if !okR || !okL {
					t.Errorf("%s: %s request and limit are both required", where, res)
				} else if req.Cmp(lim) > 0 {
					t.Errorf("%s: %s request %s over its limit %s", where, res, req.String(), lim.String())
				}
			}
			if strings.HasPrefix(c.Image, "ghcr.io/weft-dev/weft") {
				if len(c.Args) == 0 || !slices.Contains([]string{"serve", "rollout-service", "worker"}, c.Args[0]) {
					t.Errorf("%s: args %v do not start with a weft command", where, c.Args)
				}
				if !hasSecretEnv(c, "WEFT_TOKEN", secrets) {
					t.Errorf("%s: no WEFT_TOKEN from a declared Secret (have %v)", where, secrets)
				}
			}
			if path, ok := probed[w.name]; ok {
				for pn, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
					if p == nil || p.HTTPGet == nil {
						t.Errorf("%s: no %s httpGet probe", where, pn)
						continue
					}
					if p.HTTPGet.Path != path || !portNamed(c, p.HTTPGet.Port) {
						t.Errorf("%s: %s probe on %s port %s, want %s on a declared port", where, pn, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
					}
				}
			}
		}
		for _, v := range w.pod.Spec.Volumes {
			switch {
			case v.ConfigMap != nil && !slices.Contains(configMaps, v.ConfigMap.Name):
				t.Errorf("%s %s: volume %s names ConfigMap %s, not declared", w.kind, w.name, v.Name, v.ConfigMap.Name)
			case v.PersistentVolumeClaim != nil && !slices.Contains(claims, v.PersistentVolumeClaim.ClaimName):
				t.Errorf("%s %s: volume %s names claim %s, not declared", w.kind, w.name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	for _, o := range objs {
		svc, ok := o.v.(*corev1.Service)
		if !ok {
			continue
		}
		var target *workload
		for i := range wl {
			if matches(svc.Spec.Selector, wl[i].pod.Labels) {
				target = &wl[i]
			}
		}
		if target == nil {
			t.Errorf("Service %s: selector %v selects no workload's pods", o.name, svc.Spec.Selector)
			continue
		}
		for _, p := range svc.Spec.Ports {
			found := false
			for _, c := range target.pod.Spec.Containers {
				found = found || portNamed(c, p.TargetPort)
			}
			if !found {
				t.Errorf("Service %s port %s: target %s is no port of %s", o.name, p.Name, p.TargetPort.String(), target.name)
			}
		}
	}
}

func hasSecretEnv(c corev1.Container, name string, secrets []string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && slices.Contains(secrets, e.ValueFrom.SecretKeyRef.Name) {
			return true
		}
	}
	return false
}

// Strict decoding is what catches a misspelt field: the same Deployment
// with "replica" for "replicas", or a probe's "httpget", is refused.
func TestManifestTyposRefused(t *testing.T) {
	b, err := os.ReadFile("weft-worker.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(b)
	if _, err := decode(docs[0]); err != nil {
		t.Fatalf("the worker Deployment itself: %v", err)
	}
	for _, typo := range [][2]string{{"  replicas: 3", "  replica: 3"}, {"containers:", "container:"}, {"memory: 8Gi", "memory: 8Gi\n              gpu: 1\n            limitz: {}"}} {
		bad := bytes.Replace(docs[0], []byte(typo[0]), []byte(typo[1]), 1)
		if bytes.Equal(bad, docs[0]) {
			t.Fatalf("typo %q: nothing replaced", typo[0])
		}
		if _, err := decode(bad); err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("typo %q -> %q decoded (err %v), want an unknown field error", typo[0], typo[1], err)
		}
	}
}
