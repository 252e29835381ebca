// Package config will decode HCL experiment configs (hashicorp/hcl/v2): the
// schema, decoding into the engine's types and source-located diagnostics.
// It lands with the HCL experiments work; nothing is implemented here yet.
package config
