// Package plugin will be the SDK for out-of-process harness, verifier and
// attributor plugins (hashicorp/go-plugin over gRPC). It depends on nothing of
// the host side. It lands with the plugins/harnesses work; nothing is
// implemented here yet.
package plugin
