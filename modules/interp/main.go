package main

import (
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/tool"
)

// Name is the interpreter module's manifest name: its registry name, which
// `weft module build` of a spec directory resolves (Name:latest) to find the
// interpreter a server bundle references.
const Name = "weft-interp"

// Version is the interpreter module's manifest version.
const Version = "1.0.0"

func manifest() []byte {
	m := abi.Manifest{
		ABI: abi.Version, Name: Name, Version: Version,
		Description: "The shared interpreter of synthesized servers (weft.server/v1): runs the Starlark program a call request carries by digest (sdk/interp). It has no tools of its own.",
		Tools:       []abi.Tool{},
		Tables:      abi.Tables{Owns: []string{}},
		Hosts:       abi.HostVersions(),
	}
	b, err := abi.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func init() { tool.Serve(manifest(), interp.Dispatch) }

func main() {}
