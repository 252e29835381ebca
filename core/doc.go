// Package core is the root of weft's engine: the domain types and the
// machinery that turns tool environments, tasks and policies into verified
// episodes and training data. It holds no transport code (MCP, gRPC and HTTP
// live in megamcp and plugins). The engine is built in subpackages; this
// package holds only what they share, and is empty until they need it.
package core
