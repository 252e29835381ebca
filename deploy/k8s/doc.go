// Package k8s holds weft's Kubernetes manifests (the *.yaml files here: NATS
// JetStream as a StatefulSet, weft serve and weft rollout-service as
// Deployments with Services, weft worker as a Deployment; docs/scale.md)
// and the test that decodes them strictly into the k8s.io/api types. The
// package has no code: k8s.io/api is imported by its test only, so no weft
// binary links it.
package k8s
